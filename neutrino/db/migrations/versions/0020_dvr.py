"""dvr: routers' ``distributed`` flag

Revision ID: 0020_dvr
Revises: 0018_l3_scheduling
"""
import sqlalchemy as sa
from alembic import op

revision = '0020_dvr'
down_revision = '0018_l3_scheduling'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Existing routers are centralized; the default then goes, as the
    # tables module has none (the application always writes the value).
    with op.batch_alter_table('routers') as batch:
        batch.add_column(sa.Column('distributed', sa.Boolean(), nullable=False,
                                   server_default=sa.false()))
    with op.batch_alter_table('routers') as batch:
        batch.alter_column('distributed', server_default=None, existing_type=sa.Boolean(),
                           existing_nullable=False)


def downgrade() -> None:
    with op.batch_alter_table('routers') as batch:
        batch.drop_column('distributed')

"""quota locks are written, not only locked, so Galera certifies them

Revision ID: 0023_quota_lock_generation
Revises: 0022_l3ha_vrid
"""
import sqlalchemy as sa
from alembic import op

revision = '0023_quota_lock_generation'
down_revision = '0022_l3ha_vrid'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column('quota_locks', sa.Column('generation', sa.BigInteger(), nullable=False,
                                           server_default='0'))


def downgrade() -> None:
    op.drop_column('quota_locks', 'generation')

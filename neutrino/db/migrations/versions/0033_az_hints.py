"""networks' and routers' availability zone hints

Revision ID: 0033_az_hints
Revises: 0032_ndp_proxies
"""
import sqlalchemy as sa
from alembic import op

revision = '0033_az_hints'
down_revision = '0032_ndp_proxies'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column('networks', sa.Column('availability_zone_hints', sa.String(length=255),
                                        nullable=True))
    op.add_column('routers', sa.Column('availability_zone_hints', sa.String(length=255),
                                       nullable=True))


def downgrade() -> None:
    op.drop_column('routers', 'availability_zone_hints')
    op.drop_column('networks', 'availability_zone_hints')

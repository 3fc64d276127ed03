"""networks' and routers' availability zone hints

Revision ID: 0030_az_hints
Revises: 0029_port_subnet_extensions
"""
import sqlalchemy as sa
from alembic import op

revision = '0030_az_hints'
down_revision = '0029_port_subnet_extensions'
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

"""dvr: each host's DVR MAC (``dvr_host_macs``)

Revision ID: 0037_dvr_host_macs
Revises: 0036_local_ips
"""
import sqlalchemy as sa
from alembic import op

revision = '0037_dvr_host_macs'
down_revision = '0036_local_ips'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'dvr_host_macs',
        sa.Column('host', sa.String(length=255), nullable=False),
        sa.Column('mac_address', sa.String(length=32), nullable=False),
        sa.PrimaryKeyConstraint('host', name=op.f('pk_dvr_host_macs')),
        sa.UniqueConstraint('mac_address', name=op.f('uq_dvr_host_macs_mac_address')),
    )


def downgrade() -> None:
    op.drop_table('dvr_host_macs')

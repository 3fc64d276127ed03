"""dvr: each host's DVR MAC (``dvr_host_macs``)

Revision ID: 0040_dvr_host_macs
Revises: 0039_firewall_v2
"""
import sqlalchemy as sa
from alembic import op

revision = '0040_dvr_host_macs'
down_revision = '0039_firewall_v2'
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

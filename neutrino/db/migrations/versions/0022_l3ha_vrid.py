"""l3-ha: HA routers' VRRP router ids, allocated per HA network

Revision ID: 0022_l3ha_vrid
Revises: 0021_l3_ha
"""
import sqlalchemy as sa
from alembic import op

revision = '0022_l3ha_vrid'
down_revision = '0021_l3_ha'
branch_labels = None
depends_on = None


def upgrade() -> None:
    t = 'ha_router_vrid_allocations'
    op.create_table(
        t,
        sa.Column('network_id', sa.String(length=36), nullable=False),
        sa.Column('vr_id', sa.Integer(), autoincrement=False, nullable=False),
        sa.Column('router_id', sa.String(length=36), nullable=False),
        sa.ForeignKeyConstraint(['network_id'], ['networks.id'],
                                name=op.f(f'fk_{t}_network_id_networks'), ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['router_id'], ['routers.id'],
                                name=op.f(f'fk_{t}_router_id_routers'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('network_id', 'vr_id', name=op.f(f'pk_{t}')),
        sa.UniqueConstraint('router_id', name=op.f(f'uq_{t}_router_id')),
    )


def downgrade() -> None:
    op.drop_table('ha_router_vrid_allocations')

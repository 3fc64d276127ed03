"""ndp_proxies: NDP proxies of routers and the routers' enable_ndp_proxy state

Revision ID: 0032_ndp_proxies
Revises: 0031_conntrack_helpers
"""
import sqlalchemy as sa
from alembic import op

revision = '0032_ndp_proxies'
down_revision = '0031_conntrack_helpers'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'ndp_proxies',
        sa.Column('id', sa.String(length=36), nullable=False),
        sa.Column('project_id', sa.String(length=255), nullable=True),
        sa.Column('name', sa.String(length=255), nullable=False),
        sa.Column('description', sa.String(length=255), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('updated_at', sa.DateTime(), nullable=False),
        sa.Column('revision_number', sa.Integer(), nullable=False),
        sa.Column('router_id', sa.String(length=36), nullable=False),
        sa.Column('port_id', sa.String(length=36), nullable=False),
        sa.Column('ip_address', sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(['router_id'], ['routers.id'],
                                name=op.f('fk_ndp_proxies_router_id_routers'),
                                ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['port_id'], ['ports.id'],
                                name=op.f('fk_ndp_proxies_port_id_ports'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_ndp_proxies')),
        sa.UniqueConstraint('router_id', 'ip_address',
                            name='uq_ndp_proxies_router_id_ip_address'),
    )
    with op.batch_alter_table('ndp_proxies', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_ndp_proxies_project_id'), ['project_id'],
                              unique=False)
        batch_op.create_index(batch_op.f('ix_ndp_proxies_router_id'), ['router_id'],
                              unique=False)
        batch_op.create_index(batch_op.f('ix_ndp_proxies_port_id'), ['port_id'], unique=False)
    op.create_table(
        'router_ndp_proxy_state',
        sa.Column('router_id', sa.String(length=36), nullable=False),
        sa.Column('enable_ndp_proxy', sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(['router_id'], ['routers.id'],
                                name=op.f('fk_router_ndp_proxy_state_router_id_routers'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('router_id', name=op.f('pk_router_ndp_proxy_state')),
    )


def downgrade() -> None:
    op.drop_table('router_ndp_proxy_state')
    op.drop_table('ndp_proxies')

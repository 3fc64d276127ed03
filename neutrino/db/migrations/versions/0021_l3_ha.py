"""l3-ha: routers' ``ha`` flag, HA networks and HA port bindings

Revision ID: 0021_l3_ha
Revises: 0020_dvr
"""
import sqlalchemy as sa
from alembic import op

revision = '0021_l3_ha'
down_revision = '0020_dvr'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Existing routers are not HA; the default then goes, as the tables
    # module has none (the application always writes the value).
    with op.batch_alter_table('routers') as batch:
        batch.add_column(sa.Column('ha', sa.Boolean(), nullable=False,
                                   server_default=sa.false()))
    with op.batch_alter_table('routers') as batch:
        batch.alter_column('ha', server_default=None, existing_type=sa.Boolean(),
                           existing_nullable=False)
    op.create_table(
        'ha_router_networks',
        sa.Column('project_id', sa.String(length=255), nullable=False),
        sa.Column('network_id', sa.String(length=36), nullable=False),
        sa.ForeignKeyConstraint(['network_id'], ['networks.id'],
                                name=op.f('fk_ha_router_networks_network_id_networks'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('project_id', name=op.f('pk_ha_router_networks')),
        sa.UniqueConstraint('network_id', name=op.f('uq_ha_router_networks_network_id')),
    )
    b = 'ha_router_agent_port_bindings'
    op.create_table(
        b,
        sa.Column('port_id', sa.String(length=36), nullable=False),
        sa.Column('router_id', sa.String(length=36), nullable=False),
        sa.Column('l3_agent_id', sa.String(length=36), nullable=True),
        sa.Column('state', sa.String(length=16), nullable=False),
        sa.ForeignKeyConstraint(['port_id'], ['ports.id'], name=op.f(f'fk_{b}_port_id_ports'),
                                ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['router_id'], ['routers.id'],
                                name=op.f(f'fk_{b}_router_id_routers'), ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['l3_agent_id'], ['agents.id'],
                                name=op.f(f'fk_{b}_l3_agent_id_agents'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('port_id', name=op.f(f'pk_{b}')),
        sa.UniqueConstraint('router_id', 'l3_agent_id',
                            name=op.f(f'uq_{b}_router_id_l3_agent_id')),
    )
    op.create_index(op.f(f'ix_{b}_router_id'), b, ['router_id'], unique=False)
    op.create_index(op.f(f'ix_{b}_l3_agent_id'), b, ['l3_agent_id'], unique=False)


def downgrade() -> None:
    op.drop_table('ha_router_agent_port_bindings')
    op.drop_table('ha_router_networks')
    with op.batch_alter_table('routers') as batch:
        batch.drop_column('ha')

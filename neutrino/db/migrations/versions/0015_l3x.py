"""L3 extras: floating IP port forwardings, auto-allocated topologies

Revision ID: 0015_l3x
Revises: 0014_provisioning
"""
import sqlalchemy as sa
from alembic import op

revision = '0015_l3x'
down_revision = '0014_provisioning'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('portforwardings',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('floatingip_id', sa.String(length=36), nullable=False),
    sa.Column('internal_port_id', sa.String(length=36), nullable=False),
    sa.Column('internal_ip_address', sa.String(length=64), nullable=False),
    sa.Column('protocol', sa.String(length=40), nullable=False),
    sa.Column('internal_port_start', sa.Integer(), nullable=False),
    sa.Column('internal_port_end', sa.Integer(), nullable=False),
    sa.Column('external_port_start', sa.Integer(), nullable=False),
    sa.Column('external_port_end', sa.Integer(), nullable=False),
    sa.Column('description', sa.String(length=255), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['floatingip_id'], ['floatingips.id'], name=op.f('fk_portforwardings_floatingip_id_floatingips'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['internal_port_id'], ['ports.id'], name=op.f('fk_portforwardings_internal_port_id_ports'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_portforwardings')),
    sa.UniqueConstraint('floatingip_id', 'protocol', 'external_port_start', 'external_port_end', name='uq_portforwardings_external'),
    sa.UniqueConstraint('internal_port_id', 'internal_ip_address', 'protocol', 'internal_port_start', 'internal_port_end', name='uq_portforwardings_internal')
    )
    with op.batch_alter_table('portforwardings', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_portforwardings_floatingip_id'), ['floatingip_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_portforwardings_internal_port_id'), ['internal_port_id'], unique=False)
    op.create_table('default_external_network',
    sa.Column('singleton', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('network_id', sa.String(length=36), nullable=False),
    sa.ForeignKeyConstraint(['network_id'], ['networks.id'], name=op.f('fk_default_external_network_network_id_networks'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('singleton', name=op.f('pk_default_external_network')),
    sa.UniqueConstraint('network_id', name=op.f('uq_default_external_network_network_id'))
    )
    op.create_table('auto_allocated_topologies',
    sa.Column('project_id', sa.String(length=255), nullable=False),
    sa.Column('network_id', sa.String(length=36), nullable=False),
    sa.Column('router_id', sa.String(length=36), nullable=True),
    sa.ForeignKeyConstraint(['network_id'], ['networks.id'], name=op.f('fk_auto_allocated_topologies_network_id_networks'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['router_id'], ['routers.id'], name=op.f('fk_auto_allocated_topologies_router_id_routers'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('project_id', name=op.f('pk_auto_allocated_topologies')),
    sa.UniqueConstraint('network_id', name=op.f('uq_auto_allocated_topologies_network_id'))
    )


def downgrade() -> None:
    op.drop_table('auto_allocated_topologies')
    op.drop_table('default_external_network')
    op.drop_table('portforwardings')

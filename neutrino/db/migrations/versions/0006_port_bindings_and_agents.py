"""port bindings, binding levels and agents

Revision ID: 0006
Revises: 0005
"""
import sqlalchemy as sa
from alembic import op

revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('ml2_port_bindings',
    sa.Column('port_id', sa.String(length=36), nullable=False),
    sa.Column('host', sa.String(length=255), nullable=False),
    sa.Column('vnic_type', sa.String(length=64), nullable=False),
    sa.Column('profile', sa.String(length=4095), nullable=False),
    sa.Column('vif_type', sa.String(length=64), nullable=False),
    sa.Column('vif_details', sa.String(length=4095), nullable=False),
    sa.ForeignKeyConstraint(['port_id'], ['ports.id'], name=op.f('fk_ml2_port_bindings_port_id_ports'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('port_id', name=op.f('pk_ml2_port_bindings'))
    )
    with op.batch_alter_table('ml2_port_bindings', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_ml2_port_bindings_host'), ['host'], unique=False)

    op.create_table('ml2_port_binding_levels',
    sa.Column('port_id', sa.String(length=36), nullable=False),
    sa.Column('host', sa.String(length=255), nullable=False),
    sa.Column('level', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('driver', sa.String(length=64), nullable=True),
    sa.Column('segment_id', sa.String(length=36), nullable=True),
    sa.ForeignKeyConstraint(['port_id'], ['ports.id'], name=op.f('fk_ml2_port_binding_levels_port_id_ports'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['segment_id'], ['network_segments.id'], name=op.f('fk_ml2_port_binding_levels_segment_id_network_segments'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('port_id', 'host', 'level', name=op.f('pk_ml2_port_binding_levels'))
    )
    with op.batch_alter_table('ml2_port_binding_levels', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_ml2_port_binding_levels_segment_id'), ['segment_id'], unique=False)

    op.create_table('agents',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('agent_type', sa.String(length=255), nullable=False),
    sa.Column('binary', sa.String(length=255), nullable=False),
    sa.Column('topic', sa.String(length=255), nullable=False),
    sa.Column('host', sa.String(length=255), nullable=False),
    sa.Column('admin_state_up', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('started_at', sa.DateTime(), nullable=False),
    sa.Column('heartbeat_timestamp', sa.DateTime(), nullable=False),
    sa.Column('description', sa.String(length=255), nullable=True),
    sa.Column('configurations', sa.String(length=4095), nullable=False),
    sa.Column('resource_versions', sa.String(length=8191), nullable=True),
    sa.Column('load', sa.Integer(), nullable=False),
    sa.Column('availability_zone', sa.String(length=255), nullable=True),
    sa.Column('resources_synced', sa.Boolean(), nullable=True),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_agents')),
    sa.UniqueConstraint('agent_type', 'host', name=op.f('uq_agents_agent_type_host'))
    )
    with op.batch_alter_table('agents', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_agents_host'), ['host'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('agents', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_agents_host'))
    op.drop_table('agents')
    with op.batch_alter_table('ml2_port_binding_levels', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_ml2_port_binding_levels_segment_id'))
    op.drop_table('ml2_port_binding_levels')
    with op.batch_alter_table('ml2_port_bindings', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_ml2_port_bindings_host'))
    op.drop_table('ml2_port_bindings')

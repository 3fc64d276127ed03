"""BGP dynamic routing (bgp): speakers, peers, their bindings and the DR agents hosting speakers

Revision ID: 0038_bgp
Revises: 0037_vpnaas
"""
import sqlalchemy as sa
from alembic import op

revision = '0038_bgp'
down_revision = '0037_vpnaas'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'bgp_speakers',
        sa.Column('id', sa.String(length=36), nullable=False),
        sa.Column('project_id', sa.String(length=255), nullable=True),
        sa.Column('name', sa.String(length=255), nullable=False),
        sa.Column('local_as', sa.BigInteger(), nullable=False),
        sa.Column('ip_version', sa.Integer(), nullable=False),
        sa.Column('advertise_floating_ip_host_routes', sa.Boolean(), nullable=False),
        sa.Column('advertise_tenant_networks', sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_bgp_speakers')),
    )
    with op.batch_alter_table('bgp_speakers', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_bgp_speakers_project_id'), ['project_id'],
                              unique=False)
    op.create_table(
        'bgp_peers',
        sa.Column('id', sa.String(length=36), nullable=False),
        sa.Column('project_id', sa.String(length=255), nullable=True),
        sa.Column('name', sa.String(length=255), nullable=False),
        sa.Column('peer_ip', sa.String(length=64), nullable=False),
        sa.Column('remote_as', sa.BigInteger(), nullable=False),
        sa.Column('auth_type', sa.String(length=16), nullable=False),
        sa.Column('password', sa.String(length=255), nullable=True),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_bgp_peers')),
    )
    with op.batch_alter_table('bgp_peers', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_bgp_peers_project_id'), ['project_id'],
                              unique=False)
    op.create_table(
        'bgp_speaker_peer_bindings',
        sa.Column('bgp_speaker_id', sa.String(length=36), nullable=False),
        sa.Column('bgp_peer_id', sa.String(length=36), nullable=False),
        sa.ForeignKeyConstraint(['bgp_speaker_id'], ['bgp_speakers.id'],
                                name=op.f('fk_bgp_speaker_peer_bindings_bgp_speaker_id_bgp_speakers'),
                                ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['bgp_peer_id'], ['bgp_peers.id'],
                                name=op.f('fk_bgp_speaker_peer_bindings_bgp_peer_id_bgp_peers'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('bgp_speaker_id', 'bgp_peer_id',
                                name=op.f('pk_bgp_speaker_peer_bindings')),
    )
    with op.batch_alter_table('bgp_speaker_peer_bindings', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_bgp_speaker_peer_bindings_bgp_peer_id'),
                              ['bgp_peer_id'], unique=False)
    op.create_table(
        'bgp_speaker_network_bindings',
        sa.Column('bgp_speaker_id', sa.String(length=36), nullable=False),
        sa.Column('network_id', sa.String(length=36), nullable=False),
        sa.Column('ip_version', sa.Integer(), autoincrement=False, nullable=False),
        sa.ForeignKeyConstraint(['bgp_speaker_id'], ['bgp_speakers.id'],
                                name=op.f('fk_bgp_speaker_network_bindings_bgp_speaker_id_bgp_speakers'),
                                ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['network_id'], ['networks.id'],
                                name=op.f('fk_bgp_speaker_network_bindings_network_id_networks'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('bgp_speaker_id', 'network_id', 'ip_version',
                                name=op.f('pk_bgp_speaker_network_bindings')),
    )
    with op.batch_alter_table('bgp_speaker_network_bindings', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_bgp_speaker_network_bindings_network_id'),
                              ['network_id'], unique=False)
    op.create_table(
        'bgp_speaker_dragent_bindings',
        sa.Column('agent_id', sa.String(length=36), nullable=False),
        sa.Column('bgp_speaker_id', sa.String(length=36), nullable=False),
        sa.ForeignKeyConstraint(['agent_id'], ['agents.id'],
                                name=op.f('fk_bgp_speaker_dragent_bindings_agent_id_agents'),
                                ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['bgp_speaker_id'], ['bgp_speakers.id'],
                                name=op.f('fk_bgp_speaker_dragent_bindings_bgp_speaker_id_bgp_speakers'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('agent_id', name=op.f('pk_bgp_speaker_dragent_bindings')),
    )
    with op.batch_alter_table('bgp_speaker_dragent_bindings', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_bgp_speaker_dragent_bindings_bgp_speaker_id'),
                              ['bgp_speaker_id'], unique=False)


def downgrade() -> None:
    op.drop_table('bgp_speaker_dragent_bindings')
    op.drop_table('bgp_speaker_network_bindings')
    op.drop_table('bgp_speaker_peer_bindings')
    op.drop_table('bgp_peers')
    op.drop_table('bgp_speakers')

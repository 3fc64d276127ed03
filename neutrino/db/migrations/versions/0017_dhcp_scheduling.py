"""DHCP agent scheduling: which DHCP agents serve which networks

Revision ID: 0017_dhcp_scheduling
Revises: 0016_sgx
"""
import sqlalchemy as sa
from alembic import op

revision = '0017_dhcp_scheduling'
down_revision = '0016_sgx'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('networkdhcpagentbindings',
    sa.Column('network_id', sa.String(length=36), nullable=False),
    sa.Column('dhcp_agent_id', sa.String(length=36), nullable=False),
    sa.Column('binding_index', sa.Integer(), server_default='1', nullable=False),
    sa.ForeignKeyConstraint(['dhcp_agent_id'], ['agents.id'], name=op.f('fk_networkdhcpagentbindings_dhcp_agent_id_agents'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['network_id'], ['networks.id'], name=op.f('fk_networkdhcpagentbindings_network_id_networks'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('network_id', 'dhcp_agent_id', name=op.f('pk_networkdhcpagentbindings')),
    sa.UniqueConstraint('network_id', 'binding_index', name=op.f('uq_networkdhcpagentbindings_network_id_binding_index'))
    )


def downgrade() -> None:
    op.drop_table('networkdhcpagentbindings')

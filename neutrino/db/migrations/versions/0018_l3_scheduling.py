"""l3 agent scheduling: router to L3 agent bindings

Revision ID: 0018_l3_scheduling
Revises: 0017_dhcp_scheduling
"""
import sqlalchemy as sa
from alembic import op

revision = '0018_l3_scheduling'
down_revision = '0017_dhcp_scheduling'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('routerl3agentbindings',
    sa.Column('router_id', sa.String(length=36), nullable=False),
    sa.Column('l3_agent_id', sa.String(length=36), nullable=False),
    sa.Column('binding_index', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['l3_agent_id'], ['agents.id'], name=op.f('fk_routerl3agentbindings_l3_agent_id_agents'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['router_id'], ['routers.id'], name=op.f('fk_routerl3agentbindings_router_id_routers'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('router_id', 'l3_agent_id', name=op.f('pk_routerl3agentbindings')),
    sa.UniqueConstraint('router_id', 'binding_index', name=op.f('uq_routerl3agentbindings_router_id_binding_index')),
    )
    op.create_index(op.f('ix_routerl3agentbindings_l3_agent_id'), 'routerl3agentbindings', ['l3_agent_id'], unique=False)


def downgrade() -> None:
    op.drop_index(op.f('ix_routerl3agentbindings_l3_agent_id'), table_name='routerl3agentbindings')
    op.drop_table('routerl3agentbindings')

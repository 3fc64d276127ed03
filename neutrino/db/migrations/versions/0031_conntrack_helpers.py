"""l3-conntrack-helper: helpers attached to a router's protocol and port

Revision ID: 0031_conntrack_helpers
Revises: 0030_qos_fip_gateway
"""
import sqlalchemy as sa
from alembic import op

revision = '0031_conntrack_helpers'
down_revision = '0030_qos_fip_gateway'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'conntrack_helpers',
        sa.Column('id', sa.String(36), primary_key=True),
        sa.Column('router_id', sa.String(36), sa.ForeignKey('routers.id', ondelete='CASCADE'),
                  nullable=False, index=True),
        sa.Column('protocol', sa.String(40), nullable=False),
        sa.Column('port', sa.Integer, nullable=False),
        sa.Column('helper', sa.String(64), nullable=False),
        sa.Column('created_at', sa.DateTime, nullable=False),
        sa.UniqueConstraint('router_id', 'protocol', 'port', 'helper',
                            name='uq_conntrack_helpers0router_id0protocol0port0helper'),
    )


def downgrade() -> None:
    op.drop_table('conntrack_helpers')

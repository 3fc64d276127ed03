"""binding-extended: a port's inactive bindings, one per host

Revision ID: 0026_inactive_port_bindings
Revises: 0025_flavors
"""
import sqlalchemy as sa
from alembic import op

revision = '0026_inactive_port_bindings'
down_revision = '0025_flavors'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'ml2_port_inactive_bindings',
        sa.Column('port_id', sa.String(36), sa.ForeignKey('ports.id', ondelete='CASCADE'),
                  nullable=False),
        sa.Column('host', sa.String(255), nullable=False),
        sa.Column('vnic_type', sa.String(64), nullable=False),
        sa.Column('profile', sa.String(4095), nullable=False),
        sa.Column('vif_type', sa.String(64), nullable=False),
        sa.Column('vif_details', sa.String(4095), nullable=False),
        sa.PrimaryKeyConstraint('port_id', 'host'),
    )


def downgrade() -> None:
    op.drop_table('ml2_port_inactive_bindings')

"""provisioning blocks: what a port waits for before it is ACTIVE

Revision ID: 0014_provisioning
Revises: 0013_segments_trunks
"""
import sqlalchemy as sa
from alembic import op

revision = '0014_provisioning'
down_revision = '0013_segments_trunks'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('provisioningblocks',
    sa.Column('port_id', sa.String(length=36), nullable=False),
    sa.Column('entity', sa.String(length=255), nullable=False),
    sa.ForeignKeyConstraint(['port_id'], ['ports.id'], name=op.f('fk_provisioningblocks_port_id_ports'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('port_id', 'entity', name=op.f('pk_provisioningblocks'))
    )


def downgrade() -> None:
    op.drop_table('provisioningblocks')

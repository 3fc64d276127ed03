"""external-net: the external flag in a table of its own, as upstream keeps it

Until now a network was external while it had ``access_as_external``
entries; those are the networks external on upgrade.

Revision ID: 0034_external_networks
Revises: 0033_az_hints
"""
import sqlalchemy as sa
from alembic import op

revision = '0034_external_networks'
down_revision = '0033_az_hints'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'externalnetworks',
        sa.Column('network_id', sa.String(36), nullable=False),
        sa.ForeignKeyConstraint(['network_id'], ['networks.id'],
                                name=op.f('fk_externalnetworks_network_id_networks'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('network_id', name=op.f('pk_externalnetworks')),
    )
    op.execute("INSERT INTO externalnetworks (network_id) "
               "SELECT DISTINCT object_id FROM networkrbacs "
               "WHERE action = 'access_as_external'")


def downgrade() -> None:
    op.drop_table('externalnetworks')

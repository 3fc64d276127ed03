"""ports' NUMA affinity policy and device profile, subnets' service types

Revision ID: 0029_port_subnet_extensions
Revises: 0028_network_segment_ranges
"""
import sqlalchemy as sa
from alembic import op

revision = '0029_port_subnet_extensions'
down_revision = '0028_network_segment_ranges'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('portnumaaffinitypolicies',
    sa.Column('port_id', sa.String(length=36), nullable=False),
    sa.Column('numa_affinity_policy', sa.String(length=16), nullable=False),
    sa.ForeignKeyConstraint(['port_id'], ['ports.id'], name=op.f('fk_portnumaaffinitypolicies_port_id_ports'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('port_id', name=op.f('pk_portnumaaffinitypolicies'))
    )
    op.create_table('portdeviceprofiles',
    sa.Column('port_id', sa.String(length=36), nullable=False),
    sa.Column('device_profile', sa.String(length=255), nullable=False),
    sa.ForeignKeyConstraint(['port_id'], ['ports.id'], name=op.f('fk_portdeviceprofiles_port_id_ports'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('port_id', name=op.f('pk_portdeviceprofiles'))
    )
    op.create_table('subnet_service_types',
    sa.Column('subnet_id', sa.String(length=36), nullable=False),
    sa.Column('service_type', sa.String(length=255), nullable=False),
    sa.ForeignKeyConstraint(['subnet_id'], ['subnets.id'], name=op.f('fk_subnet_service_types_subnet_id_subnets'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('subnet_id', 'service_type', name=op.f('pk_subnet_service_types'))
    )


def downgrade() -> None:
    op.drop_table('subnet_service_types')
    op.drop_table('portdeviceprofiles')
    op.drop_table('portnumaaffinitypolicies')

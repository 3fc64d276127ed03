"""local IPs and their port associations (local_ip), gone with their network and ports

Revision ID: 0036_local_ips
Revises: 0035_router_flavor
"""
import sqlalchemy as sa
from alembic import op

revision = '0036_local_ips'
down_revision = '0035_router_flavor'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'local_ips',
        sa.Column('id', sa.String(length=36), nullable=False),
        sa.Column('project_id', sa.String(length=255), nullable=True),
        sa.Column('name', sa.String(length=255), nullable=False),
        sa.Column('description', sa.String(length=255), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('updated_at', sa.DateTime(), nullable=False),
        sa.Column('revision_number', sa.Integer(), nullable=False),
        sa.Column('local_port_id', sa.String(length=36), nullable=False),
        sa.Column('network_id', sa.String(length=36), nullable=False),
        sa.Column('local_ip_address', sa.String(length=64), nullable=False),
        sa.Column('ip_mode', sa.String(length=36), nullable=False),
        sa.ForeignKeyConstraint(['local_port_id'], ['ports.id'],
                                name=op.f('fk_local_ips_local_port_id_ports')),
        sa.ForeignKeyConstraint(['network_id'], ['networks.id'],
                                name=op.f('fk_local_ips_network_id_networks'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_local_ips')),
    )
    with op.batch_alter_table('local_ips', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_local_ips_project_id'), ['project_id'],
                              unique=False)
        batch_op.create_index(batch_op.f('ix_local_ips_local_port_id'), ['local_port_id'],
                              unique=False)
        batch_op.create_index(batch_op.f('ix_local_ips_network_id'), ['network_id'],
                              unique=False)
    op.create_table(
        'local_ip_associations',
        sa.Column('local_ip_id', sa.String(length=36), nullable=False),
        sa.Column('fixed_port_id', sa.String(length=36), nullable=False),
        sa.Column('fixed_ip', sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(['local_ip_id'], ['local_ips.id'],
                                name=op.f('fk_local_ip_associations_local_ip_id_local_ips'),
                                ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['fixed_port_id'], ['ports.id'],
                                name=op.f('fk_local_ip_associations_fixed_port_id_ports'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('local_ip_id', 'fixed_port_id',
                                name=op.f('pk_local_ip_associations')),
    )
    with op.batch_alter_table('local_ip_associations', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_local_ip_associations_fixed_port_id'),
                              ['fixed_port_id'], unique=False)


def downgrade() -> None:
    op.drop_table('local_ip_associations')
    op.drop_table('local_ips')

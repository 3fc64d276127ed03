"""address scopes (with RBAC) and metering labels and rules

Revision ID: 0012_scopes_metering
Revises: 0011_qos

Subnet pools already carry ``address_scope_id``; it gains an index, since
a scope's pools are looked up by it (overlap checks, deletion).
"""
import sqlalchemy as sa
from alembic import op

revision = '0012_scopes_metering'
down_revision = '0011_qos'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'address_scopes',
        sa.Column('id', sa.String(length=36), nullable=False),
        sa.Column('project_id', sa.String(length=255), nullable=True),
        sa.Column('name', sa.String(length=255), nullable=False),
        sa.Column('ip_version', sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_address_scopes')))
    op.create_index(op.f('ix_address_scopes_project_id'), 'address_scopes', ['project_id'])
    op.create_table(
        'addressscoperbacs',
        sa.Column('id', sa.String(length=36), nullable=False),
        sa.Column('project_id', sa.String(length=255), nullable=True),
        sa.Column('object_id', sa.String(length=36), nullable=False),
        sa.Column('action', sa.String(length=255), nullable=False),
        sa.Column('target_tenant', sa.String(length=255), nullable=False),
        sa.ForeignKeyConstraint(['object_id'], ['address_scopes.id'],
                                name=op.f('fk_addressscoperbacs_object_id_address_scopes'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_addressscoperbacs')),
        sa.UniqueConstraint('target_tenant', 'object_id', 'action',
                            name=op.f('uq_addressscoperbacs_target_tenant_object_id_action')))
    op.create_index(op.f('ix_addressscoperbacs_object_id'), 'addressscoperbacs', ['object_id'])
    op.create_index(op.f('ix_addressscoperbacs_project_id'), 'addressscoperbacs',
                    ['project_id'])
    op.create_index(op.f('ix_subnetpools_address_scope_id'), 'subnetpools',
                    ['address_scope_id'])
    op.create_table(
        'meteringlabels',
        sa.Column('id', sa.String(length=36), nullable=False),
        sa.Column('project_id', sa.String(length=255), nullable=True),
        sa.Column('name', sa.String(length=255), nullable=False),
        sa.Column('description', sa.String(length=1024), nullable=False),
        sa.Column('shared', sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_meteringlabels')))
    op.create_index(op.f('ix_meteringlabels_project_id'), 'meteringlabels', ['project_id'])
    op.create_table(
        'meteringlabelrules',
        sa.Column('id', sa.String(length=36), nullable=False),
        sa.Column('metering_label_id', sa.String(length=36), nullable=False),
        sa.Column('direction', sa.String(length=16), nullable=False),
        sa.Column('remote_ip_prefix', sa.String(length=64), nullable=True),
        sa.Column('source_ip_prefix', sa.String(length=64), nullable=True),
        sa.Column('destination_ip_prefix', sa.String(length=64), nullable=True),
        sa.Column('excluded', sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(['metering_label_id'], ['meteringlabels.id'],
                                name=op.f('fk_meteringlabelrules_metering_label_id_meteringlabels'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_meteringlabelrules')))
    op.create_index(op.f('ix_meteringlabelrules_metering_label_id'), 'meteringlabelrules',
                    ['metering_label_id'])


def downgrade() -> None:
    op.drop_index(op.f('ix_meteringlabelrules_metering_label_id'), table_name='meteringlabelrules')
    op.drop_table('meteringlabelrules')
    op.drop_index(op.f('ix_meteringlabels_project_id'), table_name='meteringlabels')
    op.drop_table('meteringlabels')
    op.drop_index(op.f('ix_subnetpools_address_scope_id'), table_name='subnetpools')
    op.drop_index(op.f('ix_addressscoperbacs_project_id'), table_name='addressscoperbacs')
    op.drop_index(op.f('ix_addressscoperbacs_object_id'), table_name='addressscoperbacs')
    op.drop_table('addressscoperbacs')
    op.drop_index(op.f('ix_address_scopes_project_id'), table_name='address_scopes')
    op.drop_table('address_scopes')

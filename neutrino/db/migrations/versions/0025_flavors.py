"""flavors, service profiles and their bindings (``flavors``)

Revision ID: 0025_flavors
Revises: 0024_tags_exact_text
"""
import sqlalchemy as sa
from alembic import op

revision = '0025_flavors'
down_revision = '0024_tags_exact_text'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'flavors',
        sa.Column('id', sa.String(length=36), nullable=False),
        sa.Column('name', sa.String(length=255), nullable=True),
        sa.Column('description', sa.String(length=1024), nullable=True),
        sa.Column('enabled', sa.Boolean(), nullable=False),
        sa.Column('service_type', sa.String(length=36), nullable=True),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_flavors')))
    op.create_table(
        'serviceprofiles',
        sa.Column('id', sa.String(length=36), nullable=False),
        sa.Column('description', sa.String(length=1024), nullable=True),
        sa.Column('driver', sa.String(length=1024), nullable=False),
        sa.Column('enabled', sa.Boolean(), nullable=False),
        sa.Column('metainfo', sa.String(length=4096), nullable=True),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_serviceprofiles')))
    op.create_table(
        'flavorserviceprofilebindings',
        sa.Column('flavor_id', sa.String(length=36), nullable=False),
        sa.Column('service_profile_id', sa.String(length=36), nullable=False),
        sa.ForeignKeyConstraint(['flavor_id'], ['flavors.id'],
                                name=op.f('fk_flavorserviceprofilebindings_flavor_id_flavors'),
                                ondelete='CASCADE'),
        sa.ForeignKeyConstraint(
            ['service_profile_id'], ['serviceprofiles.id'],
            name=op.f('fk_flavorserviceprofilebindings_service_profile_id'),
            ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('flavor_id', 'service_profile_id',
                                name=op.f('pk_flavorserviceprofilebindings')))
    op.create_index(op.f('ix_flavorserviceprofilebindings_service_profile_id'),
                    'flavorserviceprofilebindings', ['service_profile_id'])


def downgrade() -> None:
    op.drop_table('flavorserviceprofilebindings')
    op.drop_table('serviceprofiles')
    op.drop_table('flavors')

"""network segment ranges: the ranges project networks take segment ids from

Revision ID: 0028_network_segment_ranges
Revises: 0027_logging

``network-segment-range`` (service plugin ``network_segment_range``): the
configured ranges become ``default`` rows at start-up; admins add shared
and per-project ones at runtime.
"""
import sqlalchemy as sa
from alembic import op

revision = '0028_network_segment_ranges'
down_revision = '0027_logging'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('network_segment_ranges',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('project_id', sa.String(length=255), nullable=True),
    sa.Column('name', sa.String(length=255), nullable=True),
    sa.Column('description', sa.String(length=255), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=False),
    sa.Column('revision_number', sa.Integer(), nullable=False),
    sa.Column('default', sa.Boolean(), nullable=False),
    sa.Column('shared', sa.Boolean(), nullable=False),
    sa.Column('network_type', sa.String(length=32), nullable=False),
    sa.Column('physical_network', sa.String(length=64), nullable=False),
    sa.Column('minimum', sa.BigInteger(), nullable=False),
    sa.Column('maximum', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_network_segment_ranges')),
    sa.UniqueConstraint('default', 'network_type', 'physical_network', 'minimum', 'maximum',
                        name='uniq_network_segment_ranges')
    )
    with op.batch_alter_table('network_segment_ranges', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_network_segment_ranges_project_id'),
                              ['project_id'], unique=False)
        batch_op.create_index('ix_network_segment_ranges_network_type_physical_network',
                              ['network_type', 'physical_network'], unique=False)


def downgrade() -> None:
    op.drop_table('network_segment_ranges')

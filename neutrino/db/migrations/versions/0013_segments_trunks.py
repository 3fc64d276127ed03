"""segments and trunks: standard attributes of network segments; trunks

Revision ID: 0013_segments_trunks
Revises: 0012_scopes_metering

Segments become an API resource (``segment``, ``standard-attr-segment``):
name, description, timestamps and revision. Existing segments get their
timestamps from now and revision 0, as a new segment has. Trunks
(``trunk``) and their subports get their tables.
"""
import sqlalchemy as sa
from alembic import op

revision = '0013_segments_trunks'
down_revision = '0012_scopes_metering'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMNs (not batch mode): on SQLite a batch rebuild of
    # ``network_segments`` would touch the binding levels referring to it.
    op.add_column('network_segments', sa.Column('name', sa.String(length=255), nullable=True))
    op.add_column('network_segments', sa.Column('description', sa.String(length=255),
                                                nullable=True))
    op.add_column('network_segments', sa.Column('created_at', sa.DateTime(), nullable=True))
    op.add_column('network_segments', sa.Column('updated_at', sa.DateTime(), nullable=True))
    op.add_column('network_segments', sa.Column('revision_number', sa.Integer(),
                                                nullable=True))
    segments = sa.table('network_segments', sa.column('created_at', sa.DateTime),
                        sa.column('updated_at', sa.DateTime),
                        sa.column('revision_number', sa.Integer))
    now = sa.func.current_timestamp()
    op.get_bind().execute(sa.update(segments).values(created_at=now, updated_at=now,
                                                     revision_number=0))

    op.create_table('trunks',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('project_id', sa.String(length=255), nullable=True),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('description', sa.String(length=255), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=False),
    sa.Column('revision_number', sa.Integer(), nullable=False),
    sa.Column('admin_state_up', sa.Boolean(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('port_id', sa.String(length=36), nullable=False),
    sa.ForeignKeyConstraint(['port_id'], ['ports.id'], name=op.f('fk_trunks_port_id_ports'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_trunks')),
    sa.UniqueConstraint('port_id', name=op.f('uq_trunks_port_id'))
    )
    with op.batch_alter_table('trunks', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_trunks_project_id'), ['project_id'], unique=False)

    op.create_table('subports',
    sa.Column('port_id', sa.String(length=36), nullable=False),
    sa.Column('trunk_id', sa.String(length=36), nullable=False),
    sa.Column('segmentation_type', sa.String(length=32), nullable=False),
    sa.Column('segmentation_id', sa.Integer(), autoincrement=False, nullable=False),
    sa.ForeignKeyConstraint(['port_id'], ['ports.id'], name=op.f('fk_subports_port_id_ports'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['trunk_id'], ['trunks.id'], name=op.f('fk_subports_trunk_id_trunks'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('port_id', name=op.f('pk_subports')),
    sa.UniqueConstraint('trunk_id', 'segmentation_type', 'segmentation_id', name=op.f('uq_subports_trunk_id_segmentation_type_segmentation_id'))
    )
    with op.batch_alter_table('subports', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_subports_trunk_id'), ['trunk_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('subports', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_subports_trunk_id'))
    op.drop_table('subports')
    with op.batch_alter_table('trunks', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_trunks_project_id'))
    op.drop_table('trunks')
    for column in ('revision_number', 'updated_at', 'created_at', 'description', 'name'):
        op.drop_column('network_segments', column)

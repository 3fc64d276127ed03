"""network rbac: sharing as RBAC entries instead of networks.shared

Revision ID: 0005
Revises: 0004

A network shared before this revision (``shared`` true) gets one
``access_as_shared`` entry for ``*`` owned by the network's project, which
is what ``shared: true`` creates from now on; then the column goes.
"""
import uuid

import sqlalchemy as sa
from alembic import op

revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('networkrbacs',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('project_id', sa.String(length=255), nullable=True),
    sa.Column('object_id', sa.String(length=36), nullable=False),
    sa.Column('action', sa.String(length=255), nullable=False),
    sa.Column('target_tenant', sa.String(length=255), nullable=False),
    sa.ForeignKeyConstraint(['object_id'], ['networks.id'], name=op.f('fk_networkrbacs_object_id_networks'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_networkrbacs')),
    sa.UniqueConstraint('target_tenant', 'object_id', 'action', name=op.f('uq_networkrbacs_target_tenant_object_id_action'))
    )
    with op.batch_alter_table('networkrbacs', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_networkrbacs_object_id'), ['object_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_networkrbacs_project_id'), ['project_id'], unique=False)

    # Data: every shared network becomes shared with '*' by its owner.
    conn = op.get_bind()
    networks = sa.table('networks', sa.column('id', sa.String), sa.column('project_id', sa.String),
                        sa.column('shared', sa.Boolean))
    rbacs = sa.table('networkrbacs', sa.column('id', sa.String), sa.column('project_id', sa.String),
                     sa.column('object_id', sa.String), sa.column('action', sa.String),
                     sa.column('target_tenant', sa.String))
    rows = [{'id': str(uuid.uuid4()), 'project_id': r.project_id, 'object_id': r.id,
             'action': 'access_as_shared', 'target_tenant': '*'}
            for r in conn.execute(sa.select(networks.c.id, networks.c.project_id)
                                  .where(networks.c.shared.is_(True)))]
    if rows:
        op.bulk_insert(rbacs, rows)

    # Not in batch mode: on SQLite a batch rebuild drops and recreates
    # ``networks``, and with foreign keys on that would cascade into the
    # tables referencing it. SQLite >= 3.35 drops a plain column in place.
    op.drop_column('networks', 'shared')


def downgrade() -> None:
    op.add_column('networks', sa.Column('shared', sa.Boolean(), nullable=False,
                                        server_default=sa.false()))
    conn = op.get_bind()
    networks = sa.table('networks', sa.column('id', sa.String), sa.column('shared', sa.Boolean))
    rbacs = sa.table('networkrbacs', sa.column('object_id', sa.String),
                     sa.column('action', sa.String), sa.column('target_tenant', sa.String))
    conn.execute(sa.update(networks).where(networks.c.id.in_(
        sa.select(rbacs.c.object_id).where(rbacs.c.action == 'access_as_shared',
                                           rbacs.c.target_tenant == '*')))
        .values(shared=True))
    op.drop_table('networkrbacs')

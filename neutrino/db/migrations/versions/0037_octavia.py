"""the Octavia v2 API's objects, definitions, quotas and listener stats

Revision ID: 0037_octavia
Revises: 0036_local_ips
"""
import sqlalchemy as sa
from alembic import op

revision = '0037_octavia'
down_revision = '0036_local_ips'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'octavia_objects',
        sa.Column('id', sa.String(length=36), nullable=False),
        sa.Column('kind', sa.String(length=16), nullable=False),
        sa.Column('project_id', sa.String(length=255), nullable=True),
        sa.Column('loadbalancer_id', sa.String(length=36), nullable=False),
        sa.Column('parent_id', sa.String(length=36), nullable=True),
        sa.Column('provisioning_status', sa.String(length=16), nullable=False),
        sa.Column('operating_status', sa.String(length=16), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.Column('attrs', sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_octavia_objects')),
    )
    with op.batch_alter_table('octavia_objects', schema=None) as batch_op:
        batch_op.create_index('ix_octavia_objects_kind_project_id', ['kind', 'project_id'],
                              unique=False)
        batch_op.create_index(batch_op.f('ix_octavia_objects_loadbalancer_id'),
                              ['loadbalancer_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_octavia_objects_parent_id'), ['parent_id'],
                              unique=False)
    op.create_table(
        'octavia_definitions',
        sa.Column('kind', sa.String(length=32), nullable=False),
        sa.Column('key', sa.String(length=255), nullable=False),
        sa.Column('attrs', sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint('kind', 'key', name=op.f('pk_octavia_definitions')),
    )
    op.create_table(
        'octavia_quotas',
        sa.Column('project_id', sa.String(length=255), nullable=False),
        sa.Column('attrs', sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint('project_id', name=op.f('pk_octavia_quotas')),
    )
    op.create_table(
        'octavia_listener_stats',
        sa.Column('listener_id', sa.String(length=36), nullable=False),
        sa.Column('loadbalancer_id', sa.String(length=36), nullable=False),
        sa.Column('bytes_in', sa.BigInteger(), nullable=False),
        sa.Column('bytes_out', sa.BigInteger(), nullable=False),
        sa.Column('active_connections', sa.BigInteger(), nullable=False),
        sa.Column('total_connections', sa.BigInteger(), nullable=False),
        sa.Column('request_errors', sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint('listener_id', name=op.f('pk_octavia_listener_stats')),
    )
    with op.batch_alter_table('octavia_listener_stats', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_octavia_listener_stats_loadbalancer_id'),
                              ['loadbalancer_id'], unique=False)


def downgrade() -> None:
    op.drop_table('octavia_listener_stats')
    op.drop_table('octavia_quotas')
    op.drop_table('octavia_definitions')
    op.drop_table('octavia_objects')

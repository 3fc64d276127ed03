"""logging: security-group logs, gone with their security group or target port

Revision ID: 0027_logging
Revises: 0026_inactive_port_bindings
"""
import sqlalchemy as sa
from alembic import op

revision = '0027_logging'
down_revision = '0026_inactive_port_bindings'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'logs',
        sa.Column('id', sa.String(length=36), nullable=False),
        sa.Column('project_id', sa.String(length=255), nullable=True),
        sa.Column('name', sa.String(length=255), nullable=False),
        sa.Column('description', sa.String(length=255), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('updated_at', sa.DateTime(), nullable=False),
        sa.Column('revision_number', sa.Integer(), nullable=False),
        sa.Column('resource_type', sa.String(length=36), nullable=False),
        sa.Column('resource_id', sa.String(length=36), nullable=True),
        sa.Column('target_id', sa.String(length=36), nullable=True),
        sa.Column('event', sa.String(length=255), nullable=False),
        sa.Column('enabled', sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(['resource_id'], ['securitygroups.id'],
                                name=op.f('fk_logs_resource_id_securitygroups'),
                                ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['target_id'], ['ports.id'],
                                name=op.f('fk_logs_target_id_ports'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_logs')),
    )
    with op.batch_alter_table('logs', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_logs_project_id'), ['project_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_logs_resource_id'), ['resource_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_logs_target_id'), ['target_id'], unique=False)


def downgrade() -> None:
    op.drop_table('logs')

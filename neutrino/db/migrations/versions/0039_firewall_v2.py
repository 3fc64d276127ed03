"""FWaaS v2 (fwaas_v2): firewall rules, policies with their ordered rules, groups with their
ports, and each project's default group

Revision ID: 0039_firewall_v2
Revises: 0038_bgp
"""
import sqlalchemy as sa
from alembic import op

revision = '0039_firewall_v2'
down_revision = '0038_bgp'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('firewall_policies_v2',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('project_id', sa.String(length=255), nullable=True),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('description', sa.String(length=255), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=False),
    sa.Column('revision_number', sa.Integer(), nullable=False),
    sa.Column('shared', sa.Boolean(), nullable=False),
    sa.Column('audited', sa.Boolean(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_firewall_policies_v2'))
    )
    with op.batch_alter_table('firewall_policies_v2', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_firewall_policies_v2_project_id'), ['project_id'], unique=False)

    op.create_table('firewall_rules_v2',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('project_id', sa.String(length=255), nullable=True),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('description', sa.String(length=255), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=False),
    sa.Column('revision_number', sa.Integer(), nullable=False),
    sa.Column('shared', sa.Boolean(), nullable=False),
    sa.Column('protocol', sa.String(length=40), nullable=True),
    sa.Column('ip_version', sa.Integer(), nullable=False),
    sa.Column('source_ip_address', sa.String(length=46), nullable=True),
    sa.Column('destination_ip_address', sa.String(length=46), nullable=True),
    sa.Column('source_port_range_min', sa.Integer(), nullable=True),
    sa.Column('source_port_range_max', sa.Integer(), nullable=True),
    sa.Column('destination_port_range_min', sa.Integer(), nullable=True),
    sa.Column('destination_port_range_max', sa.Integer(), nullable=True),
    sa.Column('action', sa.String(length=36), nullable=False),
    sa.Column('enabled', sa.Boolean(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_firewall_rules_v2'))
    )
    with op.batch_alter_table('firewall_rules_v2', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_firewall_rules_v2_project_id'), ['project_id'], unique=False)

    op.create_table('firewall_groups_v2',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('project_id', sa.String(length=255), nullable=True),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('description', sa.String(length=255), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=False),
    sa.Column('revision_number', sa.Integer(), nullable=False),
    sa.Column('shared', sa.Boolean(), nullable=False),
    sa.Column('admin_state_up', sa.Boolean(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('ingress_firewall_policy_id', sa.String(length=36), nullable=True),
    sa.Column('egress_firewall_policy_id', sa.String(length=36), nullable=True),
    sa.ForeignKeyConstraint(['egress_firewall_policy_id'], ['firewall_policies_v2.id'], name=op.f('fk_firewall_groups_v2_egress_firewall_policy_id_firewall_policies_v2')),
    sa.ForeignKeyConstraint(['ingress_firewall_policy_id'], ['firewall_policies_v2.id'], name=op.f('fk_firewall_groups_v2_ingress_firewall_policy_id_firewall_policies_v2')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_firewall_groups_v2'))
    )
    with op.batch_alter_table('firewall_groups_v2', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_firewall_groups_v2_egress_firewall_policy_id'), ['egress_firewall_policy_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_firewall_groups_v2_ingress_firewall_policy_id'), ['ingress_firewall_policy_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_firewall_groups_v2_project_id'), ['project_id'], unique=False)

    op.create_table('firewall_policy_rule_associations_v2',
    sa.Column('firewall_policy_id', sa.String(length=36), nullable=False),
    sa.Column('firewall_rule_id', sa.String(length=36), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['firewall_policy_id'], ['firewall_policies_v2.id'], name=op.f('fk_firewall_policy_rule_associations_v2_firewall_policy_id_firewall_policies_v2'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['firewall_rule_id'], ['firewall_rules_v2.id'], name=op.f('fk_firewall_policy_rule_associations_v2_firewall_rule_id_firewall_rules_v2')),
    sa.PrimaryKeyConstraint('firewall_policy_id', 'firewall_rule_id', name=op.f('pk_firewall_policy_rule_associations_v2'))
    )
    with op.batch_alter_table('firewall_policy_rule_associations_v2', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_firewall_policy_rule_associations_v2_firewall_rule_id'), ['firewall_rule_id'], unique=False)

    op.create_table('default_firewall_groups',
    sa.Column('project_id', sa.String(length=255), nullable=False),
    sa.Column('firewall_group_id', sa.String(length=36), nullable=False),
    sa.ForeignKeyConstraint(['firewall_group_id'], ['firewall_groups_v2.id'], name=op.f('fk_default_firewall_groups_firewall_group_id_firewall_groups_v2'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('project_id', name=op.f('pk_default_firewall_groups')),
    sa.UniqueConstraint('firewall_group_id', name=op.f('uq_default_firewall_groups_firewall_group_id'))
    )
    op.create_table('firewall_group_port_associations_v2',
    sa.Column('firewall_group_id', sa.String(length=36), nullable=False),
    sa.Column('port_id', sa.String(length=36), nullable=False),
    sa.ForeignKeyConstraint(['firewall_group_id'], ['firewall_groups_v2.id'], name=op.f('fk_firewall_group_port_associations_v2_firewall_group_id_firewall_groups_v2'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['port_id'], ['ports.id'], name=op.f('fk_firewall_group_port_associations_v2_port_id_ports'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('port_id', name=op.f('pk_firewall_group_port_associations_v2'))
    )
    with op.batch_alter_table('firewall_group_port_associations_v2', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_firewall_group_port_associations_v2_firewall_group_id'), ['firewall_group_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('firewall_group_port_associations_v2', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_firewall_group_port_associations_v2_firewall_group_id'))

    op.drop_table('firewall_group_port_associations_v2')
    op.drop_table('default_firewall_groups')
    with op.batch_alter_table('firewall_policy_rule_associations_v2', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_firewall_policy_rule_associations_v2_firewall_rule_id'))

    op.drop_table('firewall_policy_rule_associations_v2')
    with op.batch_alter_table('firewall_groups_v2', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_firewall_groups_v2_project_id'))
        batch_op.drop_index(batch_op.f('ix_firewall_groups_v2_ingress_firewall_policy_id'))
        batch_op.drop_index(batch_op.f('ix_firewall_groups_v2_egress_firewall_policy_id'))

    op.drop_table('firewall_groups_v2')
    with op.batch_alter_table('firewall_rules_v2', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_firewall_rules_v2_project_id'))

    op.drop_table('firewall_rules_v2')
    with op.batch_alter_table('firewall_policies_v2', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_firewall_policies_v2_project_id'))

    op.drop_table('firewall_policies_v2')

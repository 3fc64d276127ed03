"""security group extras: RBAC for security and address groups, the default
rule templates (seeded with upstream's four), default statefulness

Revision ID: 0016_sgx
Revises: 0015_l3x
"""
import uuid

import sqlalchemy as sa
from alembic import op

revision = '0016_sgx'
down_revision = '0015_l3x'
branch_labels = None
depends_on = None

EGRESS = "Legacy default SG rule for egress traffic"
INGRESS = "Legacy default SG rule for ingress traffic"
# What groups got before templates existed: all traffic out for every group,
# and traffic in from members of the same group for each project's default.
SEED = [("egress", "IPv4", None, True, True, EGRESS),
        ("egress", "IPv6", None, True, True, EGRESS),
        ("ingress", "IPv4", "PARENT", True, False, INGRESS),
        ("ingress", "IPv6", "PARENT", True, False, INGRESS)]


def _rbac_table(name: str, objects: str) -> None:
    op.create_table(name,
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('project_id', sa.String(length=255), nullable=True),
    sa.Column('object_id', sa.String(length=36), nullable=False),
    sa.Column('action', sa.String(length=255), nullable=False),
    sa.Column('target_tenant', sa.String(length=255), nullable=False),
    sa.ForeignKeyConstraint(['object_id'], [f'{objects}.id'], name=op.f(f'fk_{name}_object_id_{objects}'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f(f'pk_{name}')),
    sa.UniqueConstraint('target_tenant', 'object_id', 'action', name=op.f(f'uq_{name}_target_tenant_object_id_action'))
    )
    with op.batch_alter_table(name, schema=None) as batch_op:
        batch_op.create_index(batch_op.f(f'ix_{name}_object_id'), ['object_id'], unique=False)
        batch_op.create_index(batch_op.f(f'ix_{name}_project_id'), ['project_id'], unique=False)


def upgrade() -> None:
    _rbac_table('securitygrouprbacs', 'securitygroups')
    _rbac_table('addressgrouprbacs', 'address_groups')
    rules = op.create_table('securitygroupdefaultrules',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('description', sa.String(length=255), nullable=True),
    sa.Column('remote_group_id', sa.String(length=36), nullable=True),
    sa.Column('remote_address_group_id', sa.String(length=36), nullable=True),
    sa.Column('direction', sa.String(length=16), nullable=False),
    sa.Column('ethertype', sa.String(length=40), nullable=True),
    sa.Column('protocol', sa.String(length=40), nullable=True),
    sa.Column('port_range_min', sa.Integer(), nullable=True),
    sa.Column('port_range_max', sa.Integer(), nullable=True),
    sa.Column('remote_ip_prefix', sa.String(length=255), nullable=True),
    sa.Column('used_in_default_sg', sa.Boolean(), nullable=False),
    sa.Column('used_in_non_default_sg', sa.Boolean(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_securitygroupdefaultrules'))
    )
    op.bulk_insert(rules, [
        {"id": str(uuid.uuid4()), "direction": d, "ethertype": e, "remote_group_id": r,
         "used_in_default_sg": in_default, "used_in_non_default_sg": in_other,
         "description": text}
        for d, e, r, in_default, in_other, text in SEED])
    op.create_table('security_groups_default_statefulness',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('project_id', sa.String(length=255), nullable=True),
    sa.Column('stateful', sa.Boolean(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_security_groups_default_statefulness')),
    sa.UniqueConstraint('project_id', name=op.f('uq_security_groups_default_statefulness_project_id'))
    )


def downgrade() -> None:
    op.drop_table('security_groups_default_statefulness')
    op.drop_table('securitygroupdefaultrules')
    for name in ('addressgrouprbacs', 'securitygrouprbacs'):
        with op.batch_alter_table(name, schema=None) as batch_op:
            batch_op.drop_index(batch_op.f(f'ix_{name}_project_id'))
            batch_op.drop_index(batch_op.f(f'ix_{name}_object_id'))
        op.drop_table(name)

"""qos fip and gateway: the QoS policies of floating IPs and router gateways

Revision ID: 0030_qos_fip_gateway
Revises: 0029_port_subnet_extensions
"""
import sqlalchemy as sa
from alembic import op

revision = '0030_qos_fip_gateway'
down_revision = '0029_port_subnet_extensions'
branch_labels = None
depends_on = None

_BINDINGS = (('qos_fip_policy_bindings', 'fip_id', 'floatingips'),
             ('qos_router_gw_policy_bindings', 'router_id', 'routers'))


def upgrade() -> None:
    for table, key, parent in _BINDINGS:
        op.create_table(
            table,
            sa.Column(key, sa.String(length=36), nullable=False),
            sa.Column('policy_id', sa.String(length=36), nullable=False),
            sa.ForeignKeyConstraint([key], [f'{parent}.id'],
                                    name=op.f(f'fk_{table}_{key}_{parent}'), ondelete='CASCADE'),
            sa.ForeignKeyConstraint(['policy_id'], ['qos_policies.id'],
                                    name=op.f(f'fk_{table}_policy_id_qos_policies')),
            sa.PrimaryKeyConstraint(key, name=op.f(f'pk_{table}')),
        )
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.create_index(batch_op.f(f'ix_{table}_policy_id'), ['policy_id'],
                                  unique=False)


def downgrade() -> None:
    for table, _key, _parent in reversed(_BINDINGS):
        op.drop_table(table)

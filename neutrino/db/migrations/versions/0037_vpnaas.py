"""VPN as a service (vpnaas, vpn-endpoint-groups): IKE and IPsec policies,
endpoint groups, VPN services and their IPsec site connections

Revision ID: 0037_vpnaas
Revises: 0036_local_ips
"""
import sqlalchemy as sa
from alembic import op

revision = '0037_vpnaas'
down_revision = '0036_local_ips'
branch_labels = None
depends_on = None


def _named() -> list[sa.Column[object]]:
    return [
        sa.Column('id', sa.String(length=36), nullable=False),
        sa.Column('project_id', sa.String(length=255), nullable=True),
        sa.Column('name', sa.String(length=255), nullable=False),
        sa.Column('description', sa.String(length=255), nullable=False),
    ]


def _fk(table: str, column: str, target: str,
        ondelete: str | None = None) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint([column], [f'{target}.id'],
                                   name=op.f(f'fk_{table}_{column}_{target}'), ondelete=ondelete)


def _indexes(table: str, *columns: str) -> None:
    with op.batch_alter_table(table, schema=None) as batch_op:
        for column in columns:
            batch_op.create_index(batch_op.f(f'ix_{table}_{column}'), [column], unique=False)


def upgrade() -> None:
    op.create_table(
        'vpn_ikepolicies', *_named(),
        sa.Column('auth_algorithm', sa.String(length=16), nullable=False),
        sa.Column('encryption_algorithm', sa.String(length=20), nullable=False),
        sa.Column('phase1_negotiation_mode', sa.String(length=16), nullable=False),
        sa.Column('lifetime_units', sa.String(length=16), nullable=False),
        sa.Column('lifetime_value', sa.Integer(), nullable=False),
        sa.Column('ike_version', sa.String(length=8), nullable=False),
        sa.Column('pfs', sa.String(length=8), nullable=False),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_vpn_ikepolicies')),
    )
    _indexes('vpn_ikepolicies', 'project_id')
    op.create_table(
        'vpn_ipsecpolicies', *_named(),
        sa.Column('transform_protocol', sa.String(length=16), nullable=False),
        sa.Column('auth_algorithm', sa.String(length=16), nullable=False),
        sa.Column('encryption_algorithm', sa.String(length=20), nullable=False),
        sa.Column('encapsulation_mode', sa.String(length=16), nullable=False),
        sa.Column('lifetime_units', sa.String(length=16), nullable=False),
        sa.Column('lifetime_value', sa.Integer(), nullable=False),
        sa.Column('pfs', sa.String(length=8), nullable=False),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_vpn_ipsecpolicies')),
    )
    _indexes('vpn_ipsecpolicies', 'project_id')
    op.create_table(
        'vpn_endpoint_groups', *_named(),
        sa.Column('endpoint_type', sa.String(length=16), nullable=False),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_vpn_endpoint_groups')),
    )
    _indexes('vpn_endpoint_groups', 'project_id')
    op.create_table(
        'vpn_endpoints',
        sa.Column('endpoint_group_id', sa.String(length=36), nullable=False),
        sa.Column('endpoint', sa.String(length=255), nullable=False),
        sa.Column('position', sa.Integer(), nullable=False),
        _fk('vpn_endpoints', 'endpoint_group_id', 'vpn_endpoint_groups', 'CASCADE'),
        sa.PrimaryKeyConstraint('endpoint_group_id', 'endpoint', name=op.f('pk_vpn_endpoints')),
    )
    _indexes('vpn_endpoints', 'endpoint')
    op.create_table(
        'vpnservices', *_named(),
        sa.Column('status', sa.String(length=16), nullable=False),
        sa.Column('admin_state_up', sa.Boolean(), nullable=False),
        sa.Column('external_v4_ip', sa.String(length=16), nullable=True),
        sa.Column('external_v6_ip', sa.String(length=64), nullable=True),
        sa.Column('router_id', sa.String(length=36), nullable=False),
        sa.Column('subnet_id', sa.String(length=36), nullable=True),
        sa.Column('flavor_id', sa.String(length=36), nullable=True),
        _fk('vpnservices', 'router_id', 'routers'),
        _fk('vpnservices', 'subnet_id', 'subnets'),
        _fk('vpnservices', 'flavor_id', 'flavors'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_vpnservices')),
    )
    _indexes('vpnservices', 'project_id', 'router_id', 'subnet_id')
    op.create_table(
        'ipsec_site_connections', *_named(),
        sa.Column('peer_address', sa.String(length=255), nullable=False),
        sa.Column('peer_id', sa.String(length=255), nullable=False),
        sa.Column('local_id', sa.String(length=255), nullable=False),
        sa.Column('route_mode', sa.String(length=8), nullable=False),
        sa.Column('mtu', sa.Integer(), nullable=False),
        sa.Column('initiator', sa.String(length=16), nullable=False),
        sa.Column('auth_mode', sa.String(length=16), nullable=False),
        sa.Column('psk', sa.String(length=255), nullable=False),
        sa.Column('dpd_action', sa.String(length=16), nullable=False),
        sa.Column('dpd_interval', sa.Integer(), nullable=False),
        sa.Column('dpd_timeout', sa.Integer(), nullable=False),
        sa.Column('status', sa.String(length=16), nullable=False),
        sa.Column('admin_state_up', sa.Boolean(), nullable=False),
        sa.Column('vpnservice_id', sa.String(length=36), nullable=False),
        sa.Column('ipsecpolicy_id', sa.String(length=36), nullable=False),
        sa.Column('ikepolicy_id', sa.String(length=36), nullable=False),
        sa.Column('local_ep_group_id', sa.String(length=36), nullable=True),
        sa.Column('peer_ep_group_id', sa.String(length=36), nullable=True),
        _fk('ipsec_site_connections', 'vpnservice_id', 'vpnservices'),
        _fk('ipsec_site_connections', 'ipsecpolicy_id', 'vpn_ipsecpolicies'),
        _fk('ipsec_site_connections', 'ikepolicy_id', 'vpn_ikepolicies'),
        _fk('ipsec_site_connections', 'local_ep_group_id', 'vpn_endpoint_groups'),
        _fk('ipsec_site_connections', 'peer_ep_group_id', 'vpn_endpoint_groups'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_ipsec_site_connections')),
    )
    _indexes('ipsec_site_connections', 'project_id', 'vpnservice_id', 'ipsecpolicy_id',
             'ikepolicy_id', 'local_ep_group_id', 'peer_ep_group_id')
    op.create_table(
        'ipsec_peer_cidrs',
        sa.Column('ipsec_site_connection_id', sa.String(length=36), nullable=False),
        sa.Column('cidr', sa.String(length=64), nullable=False),
        sa.Column('position', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['ipsec_site_connection_id'], ['ipsec_site_connections.id'],
                                name='fk_ipsec_peer_cidrs_ipsec_site_connection_id',
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('ipsec_site_connection_id', 'cidr',
                                name=op.f('pk_ipsec_peer_cidrs')),
    )


def downgrade() -> None:
    for table in ('ipsec_peer_cidrs', 'ipsec_site_connections', 'vpnservices',
                  'vpn_endpoints', 'vpn_endpoint_groups', 'vpn_ipsecpolicies',
                  'vpn_ikepolicies'):
        op.drop_table(table)

"""Default policy rules: upstream Neutron's names and rule strings.

The rule strings are the contract operators write policy files against
(they override rules by name, and reuse base rules like
``rule:network_owner``), so they are kept exactly as upstream's
defaults define them: admins may do everything in every project, a
project ``member`` works on its own resources, a ``reader`` only reads,
and network owners may see and manage ports on their networks.
"""
from __future__ import annotations

from oslo_policy import policy

BASE = {
    'context_is_admin': 'role:admin',
    'admin_only': 'rule:context_is_admin',
    'service_api': 'role:service',
    'context_is_advsvc': 'role:advsvc',
    'owner': 'project_id:%(project_id)s',
    'admin_or_owner': 'rule:context_is_admin or rule:owner',
    'network_owner': 'project_id:%(network:project_id)s',
    'admin_or_network_owner': 'rule:context_is_admin or project_id:%(network:project_id)s',
    'admin_owner_or_network_owner': 'rule:owner or rule:admin_or_network_owner',
    'regular_user': '',
    'shared': 'field:networks:shared=True',
    'shared_subnetpools': 'field:subnetpools:shared=True',
    'shared_address_scopes': 'field:address_scopes:shared=True',
    'external': 'field:networks:router:external=True',
    'external_network': 'field:subnets:router:external=True',
    'network_device': 'field:port:device_owner=~^network:',
    'compute_device': 'field:port:device_owner=~^compute:',
    'baremetal_device': 'field:port:device_owner=~^baremetal:',
    'manila_device': 'field:port:device_owner=~^manila:',
    'default': 'rule:admin_or_owner',
    'admin_or_ext_parent_owner': 'rule:context_is_admin or project_id:%(ext_parent:project_id)s',
    'ext_parent_owner': 'project_id:%(ext_parent:project_id)s',
    'restrict_wildcard': '(not field:rbac_policy:target_tenant=* and not field:rbac_policy:target_project=*) or rule:admin_only',
    'sg_owner': 'project_id:%(security_group:project_id)s',
    'admin_or_sg_owner': 'rule:context_is_admin or project_id:%(security_group:project_id)s',
    'admin_owner_or_sg_owner': 'rule:owner or rule:admin_or_sg_owner',
    'shared_security_group': 'field:security_groups:shared=True',
    'rule_default_sg': 'field:security_group_rules:belongs_to_default_sg=True',
    'shared_address_groups': 'field:address_groups:shared=True',
}

_NETWORK = {
    'create_network': '(rule:admin_only) or (role:member and project_id:%(project_id)s)',
    'create_network:shared': 'rule:admin_only',
    'create_network:router:external': 'rule:admin_only',
    'create_network:is_default': 'rule:admin_only',
    'create_network:port_security_enabled': '(rule:admin_only) or (role:member and project_id:%(project_id)s)',
    'create_network:segments': 'rule:admin_only',
    'create_network:provider:network_type': 'rule:admin_only',
    'create_network:provider:physical_network': 'rule:admin_only',
    'create_network:provider:segmentation_id': 'rule:admin_only',
    'create_network:tags': '(rule:admin_only) or (role:member and project_id:%(project_id)s)',
    'get_network': '(rule:admin_only) or (role:reader and project_id:%(project_id)s) or rule:service_api or rule:shared or rule:external or rule:context_is_advsvc',
    'get_network:segments': 'rule:admin_only',
    'get_network:provider:network_type': 'rule:admin_only',
    'get_network:provider:physical_network': 'rule:admin_only',
    'get_network:provider:segmentation_id': 'rule:admin_only',
    'get_network:tags': '(rule:admin_only) or (role:reader and project_id:%(project_id)s) or rule:shared or rule:external or rule:context_is_advsvc',
    'update_network': '(rule:admin_only) or (role:member and project_id:%(project_id)s)',
    'update_network:segments': 'rule:admin_only',
    'update_network:shared': 'rule:admin_only',
    'update_network:provider:network_type': 'rule:admin_only',
    'update_network:provider:physical_network': 'rule:admin_only',
    'update_network:provider:segmentation_id': 'rule:admin_only',
    'update_network:router:external': 'rule:admin_only',
    'update_network:is_default': 'rule:admin_only',
    'update_network:port_security_enabled': '(rule:admin_only) or (role:member and project_id:%(project_id)s)',
    'update_network:tags': '(rule:admin_only) or (role:member and project_id:%(project_id)s)',
    'delete_network': '(rule:admin_only) or (role:member and project_id:%(project_id)s)',
    'delete_network:tags': '(rule:admin_only) or (role:member and project_id:%(project_id)s)',
}

_SUBNET = {
    'create_subnet': '(rule:admin_only) or (role:member and rule:network_owner)',
    'create_subnet:segment_id': 'rule:admin_only',
    'create_subnet:service_types': 'rule:admin_only',
    'create_subnet:tags': 'role:member and project_id:%(project_id)s or (rule:admin_only) or (role:member and rule:network_owner)',
    'get_subnet': 'role:reader and project_id:%(project_id)s or rule:shared or rule:external_network or (rule:admin_only) or (role:reader and rule:network_owner) or rule:service_api',
    'get_subnet:segment_id': 'rule:admin_only',
    'get_subnet:tags': 'role:reader and project_id:%(project_id)s or rule:shared or rule:external_network or (rule:admin_only) or (role:reader and rule:network_owner)',
    'update_subnet': 'role:member and project_id:%(project_id)s or (rule:admin_only) or (role:member and rule:network_owner)',
    'update_subnet:segment_id': 'rule:admin_only',
    'update_subnet:service_types': 'rule:admin_only',
    'update_subnet:tags': 'role:member and project_id:%(project_id)s or (rule:admin_only) or (role:member and rule:network_owner)',
    'delete_subnet': 'role:member and project_id:%(project_id)s or (rule:admin_only) or (role:member and rule:network_owner)',
    'delete_subnet:tags': 'role:member and project_id:%(project_id)s or (rule:admin_only) or (role:member and rule:network_owner)',
}

_SUBNETPOOL = {
    'create_subnetpool': '(rule:admin_only) or (role:member and project_id:%(project_id)s)',
    'create_subnetpool:shared': 'rule:admin_only',
    'create_subnetpool:is_default': 'rule:admin_only',
    'create_subnetpool:tags': '(rule:admin_only) or (role:member and project_id:%(project_id)s)',
    'get_subnetpool': '(rule:admin_only) or (role:reader and project_id:%(project_id)s) or rule:shared_subnetpools',
    'get_subnetpool:tags': '(rule:admin_only) or (role:reader and project_id:%(project_id)s) or rule:shared_subnetpools',
    'update_subnetpool': '(rule:admin_only) or (role:member and project_id:%(project_id)s)',
    'update_subnetpool:is_default': 'rule:admin_only',
    'update_subnetpool:tags': '(rule:admin_only) or (role:member and project_id:%(project_id)s)',
    'delete_subnetpool': '(rule:admin_only) or (role:member and project_id:%(project_id)s)',
    'delete_subnetpool:tags': '(rule:admin_only) or (role:member and project_id:%(project_id)s)',
    'add_prefixes': '(rule:admin_only) or (role:member and project_id:%(project_id)s)',
    'remove_prefixes': '(rule:admin_only) or (role:member and project_id:%(project_id)s)',
    'onboard_network_subnets': '(rule:admin_only) or (role:member and project_id:%(project_id)s)',
}

_PORT = {
    'create_port': '(rule:admin_only) or (rule:service_api) or role:member and rule:network_owner or rule:shared',
    'create_port:device_id': '(rule:admin_only) or (role:member and project_id:%(project_id)s) or rule:service_api',
    'create_port:device_owner': 'not rule:network_device or (rule:admin_only) or (rule:service_api) or role:member and rule:network_owner',
    'create_port:mac_address': '(rule:admin_only) or (rule:service_api) or role:member and rule:network_owner',
    'create_port:fixed_ips': '(rule:admin_only) or (rule:service_api) or role:member and rule:network_owner or rule:shared',
    'create_port:fixed_ips:ip_address': '(rule:admin_only) or (rule:service_api) or role:member and rule:network_owner',
    'create_port:fixed_ips:subnet_id': '(rule:admin_only) or (rule:service_api) or role:member and rule:network_owner or rule:shared',
    'create_port:port_security_enabled': '(rule:admin_only) or (rule:service_api) or role:member and rule:network_owner',
    'create_port:binding:host_id': '(rule:admin_only) or (rule:service_api)',
    'create_port:binding:profile': 'rule:service_api',
    'create_port:binding:vnic_type': '(rule:admin_only) or (role:member and project_id:%(project_id)s) or rule:service_api',
    'create_port:allowed_address_pairs': '(rule:admin_only) or (role:member and rule:network_owner) or rule:service_api',
    'create_port:allowed_address_pairs:mac_address': '(rule:admin_only) or (role:member and rule:network_owner) or rule:service_api',
    'create_port:allowed_address_pairs:ip_address': '(rule:admin_only) or (role:member and rule:network_owner) or rule:service_api',
    'create_port:tags': '(rule:admin_only) or (role:member and project_id:%(project_id)s) or rule:context_is_advsvc',
    'get_port': '(rule:admin_only) or (rule:service_api) or role:reader and rule:network_owner or role:reader and project_id:%(project_id)s',
    'get_port:binding:vif_type': '(rule:admin_only) or (rule:service_api)',
    'get_port:binding:vif_details': '(rule:admin_only) or (rule:service_api)',
    'get_port:binding:host_id': '(rule:admin_only) or (rule:service_api)',
    'get_port:binding:profile': '(rule:admin_only) or (rule:service_api)',
    'get_port:tags': 'rule:context_is_advsvc or (rule:admin_only) or (role:reader and rule:network_owner) or role:reader and project_id:%(project_id)s',
    'update_port': '(rule:admin_only) or (rule:service_api) or role:member and project_id:%(project_id)s',
    'update_port:device_id': '(rule:admin_only) or (role:member and project_id:%(project_id)s) or rule:service_api',
    'update_port:device_owner': 'not rule:network_device or (rule:admin_only) or (rule:service_api) or role:member and rule:network_owner',
    'update_port:mac_address': '(rule:admin_only) or (rule:service_api) or role:manager and rule:network_owner',
    'update_port:fixed_ips': '(rule:admin_only) or (rule:service_api) or role:member and rule:network_owner',
    'update_port:fixed_ips:ip_address': '(rule:admin_only) or (rule:service_api) or role:member and rule:network_owner',
    'update_port:fixed_ips:subnet_id': '(rule:admin_only) or (rule:service_api) or role:member and rule:network_owner or rule:shared',
    'update_port:port_security_enabled': '(rule:admin_only) or (rule:service_api) or role:member and rule:network_owner',
    'update_port:binding:host_id': '(rule:admin_only) or (rule:service_api)',
    'update_port:binding:profile': 'rule:service_api',
    'update_port:binding:vnic_type': '(rule:admin_only) or (rule:service_api) or role:member and project_id:%(project_id)s',
    'update_port:allowed_address_pairs': '(rule:admin_only) or (role:member and rule:network_owner) or rule:service_api',
    'update_port:allowed_address_pairs:mac_address': '(rule:admin_only) or (role:member and rule:network_owner) or rule:service_api',
    'update_port:allowed_address_pairs:ip_address': '(rule:admin_only) or (role:member and rule:network_owner) or rule:service_api',
    'update_port:tags': '(rule:admin_only) or (role:member and project_id:%(project_id)s) or rule:context_is_advsvc',
    'delete_port': '(rule:admin_only) or (rule:service_api) or (service_roles:service and (role:member and rule:network_owner or role:member and project_id:%(project_id)s)) or (not rule:compute_device and not rule:baremetal_device and not rule:manila_device and (role:member and rule:network_owner or role:member and project_id:%(project_id)s))',
    'delete_port:tags': 'rule:context_is_advsvc or role:member and project_id:%(project_id)s or (rule:admin_only) or (role:member and rule:network_owner)',
}

_RBAC = {
    'create_rbac_policy': '(rule:admin_only) or (role:member and project_id:%(project_id)s)',
    'create_rbac_policy:target_tenant': 'rule:admin_only or (not field:rbac_policy:target_tenant=* and not field:rbac_policy:target_project=*)',
    'create_rbac_policy:target_project': 'rule:admin_only or not field:rbac_policy:target_project=*',
    'update_rbac_policy': '(rule:admin_only) or (role:member and project_id:%(project_id)s)',
    'update_rbac_policy:target_tenant': 'rule:admin_only or (not field:rbac_policy:target_tenant=* and not field:rbac_policy:target_project=*)',
    'update_rbac_policy:target_project': 'rule:admin_only or not field:rbac_policy:target_project=*',
    'get_rbac_policy': '(rule:admin_only) or (role:reader and project_id:%(project_id)s)',
    'delete_rbac_policy': '(rule:admin_only) or (role:member and project_id:%(project_id)s)',
}

_ADDRESS_SCOPE = {
    'create_address_scope': '(rule:admin_only) or (role:member and project_id:%(project_id)s)',
    'create_address_scope:shared': 'rule:admin_only',
    'get_address_scope': 'rule:admin_only or role:reader and project_id:%(project_id)s or rule:shared_address_scopes',
    'update_address_scope': '(rule:admin_only) or (role:member and project_id:%(project_id)s)',
    'update_address_scope:shared': 'rule:admin_only',
    'delete_address_scope': '(rule:admin_only) or (role:member and project_id:%(project_id)s)',
}

_SECURITY_GROUP = {
    'create_default_security_group': '(rule:admin_only) or (rule:service_api) or role:reader and project_id:%(project_id)s',
    'create_security_group': '(rule:admin_only) or (role:member and project_id:%(project_id)s)',
    'create_security_group:tags': '(rule:admin_only) or (role:member and project_id:%(project_id)s)',
    'get_security_group': '(rule:admin_only) or (role:reader and project_id:%(project_id)s) or rule:shared_security_group',
    'get_security_group:tags': '(rule:admin_only) or (role:reader and project_id:%(project_id)s) or rule:shared_security_group',
    'update_security_group': '(rule:admin_only) or (role:member and project_id:%(project_id)s)',
    'update_security_group:tags': '(rule:admin_only) or (role:member and project_id:%(project_id)s)',
    'delete_security_group': '(rule:admin_only) or (role:member and project_id:%(project_id)s)',
    'delete_security_group:tags': '(rule:admin_only) or (role:member and project_id:%(project_id)s)',
    'create_security_group_rule': '(rule:admin_only) or (role:member and rule:sg_owner)',
    'get_security_group_rule': '(rule:admin_only) or (role:reader and rule:sg_owner)',
    'delete_security_group_rule': '(rule:admin_only) or (role:member and rule:sg_owner)',
    # security-groups-default-rules
    'create_default_security_group_rule': 'rule:admin_only',
    'get_default_security_group_rule': 'role:reader',
    'delete_default_security_group_rule': 'rule:admin_only',
    # security-groups-default-statefulness
    'create_security_groups_default_statefulness': '(rule:admin_only) or (role:manager and project_id:%(project_id)s)',
    'get_security_groups_default_statefulness': '(rule:admin_only) or (role:reader and project_id:%(project_id)s)',
    'update_security_groups_default_statefulness': '(rule:admin_only) or (role:manager and project_id:%(project_id)s)',
    'delete_security_groups_default_statefulness': '(rule:admin_only) or (role:manager and project_id:%(project_id)s)',
}

_ADDRESS_GROUP = {
    'create_address_group': '(rule:admin_only) or (role:member and project_id:%(project_id)s)',
    'get_address_group': '(rule:admin_only) or (role:reader and project_id:%(project_id)s) or rule:shared_address_groups',
    'update_address_group': '(rule:admin_only) or (role:member and project_id:%(project_id)s)',
    'delete_address_group': '(rule:admin_only) or (role:member and project_id:%(project_id)s)',
    'add_addresses': '(rule:admin_only) or (role:member and project_id:%(project_id)s)',
    'remove_addresses': '(rule:admin_only) or (role:member and project_id:%(project_id)s)',
}

_QUOTA = {
    'get_quota': '(rule:admin_only) or (role:manager and project_id:%(project_id)s)',
    'update_quota': 'rule:admin_only',
    'delete_quota': 'rule:admin_only',
}

_AGENT = {
    'create_agent': 'rule:admin_only',
    'get_agent': 'rule:admin_only',
    'update_agent': 'rule:admin_only',
    'delete_agent': 'rule:admin_only',
    'get_availability_zone': 'role:reader',
}

_BASE_NAMES = set(BASE)


def rules() -> list[policy.RuleDefault]:
    out = []
    for group in (BASE, _NETWORK, _SUBNET, _SUBNETPOOL, _PORT, _RBAC, _ADDRESS_SCOPE,
                  _SECURITY_GROUP, _ADDRESS_GROUP, _QUOTA, _AGENT):
        for name, check in group.items():
            scope = None if name in _BASE_NAMES else ["project"]
            out.append(policy.RuleDefault(name, check, scope_types=scope))
    return out

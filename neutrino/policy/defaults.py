"""Default policy rules, with upstream's names and meanings.

Personas follow upstream's "new defaults": ``admin`` may do everything in
every project, a project ``member`` works on its own resources, a project
``reader`` may only read them. Rules are strings in oslo.policy's language so
operators override them by name in a policy file.
"""
from __future__ import annotations

from oslo_policy import policy

ADMIN = "rule:admin_only"
SERVICE = "rule:service_api"
PROJECT_MEMBER = "role:member and project_id:%(project_id)s"
PROJECT_READER = "role:reader and project_id:%(project_id)s"
NET_OWNER_MEMBER = "role:member and project_id:%(network:project_id)s"
NET_OWNER_READER = "role:reader and project_id:%(network:project_id)s"


def _any(*rules: str) -> str:
    return " or ".join(f"({r})" for r in rules)


ADMIN_OR_PROJECT_MEMBER = _any(ADMIN, PROJECT_MEMBER)
ADMIN_OR_PROJECT_READER = _any(ADMIN, PROJECT_READER)
ADMIN_OR_NET_OWNER_MEMBER = _any(ADMIN, NET_OWNER_MEMBER)

BASE = {
    "context_is_admin": "role:admin",
    "admin_only": "rule:context_is_admin",
    "service_api": "role:service",
    "context_is_advsvc": "role:advsvc",
    "owner": "project_id:%(project_id)s",
    "admin_or_owner": "rule:context_is_admin or rule:owner",
    "network_owner": "project_id:%(network:project_id)s",
    "admin_or_network_owner": "rule:context_is_admin or rule:network_owner",
    "admin_owner_or_network_owner": "rule:owner or rule:admin_or_network_owner",
    "regular_user": "",
    "shared": "field:networks:shared=True",
    "shared_subnetpools": "field:subnetpools:shared=True",
    "external": "field:networks:router:external=True",
    "network_device": "field:port:device_owner=~^network:",
    "default": "rule:admin_or_owner",
}

_NETWORK = {
    "create_network": ADMIN_OR_PROJECT_MEMBER,
    "create_network:shared": ADMIN,
    "create_network:router:external": ADMIN,
    "create_network:is_default": ADMIN,
    "create_network:segments": ADMIN,
    "create_network:provider:network_type": ADMIN,
    "create_network:provider:physical_network": ADMIN,
    "create_network:provider:segmentation_id": ADMIN,
    "get_network": _any(ADMIN_OR_PROJECT_READER, "rule:shared", "rule:external",
                        "rule:context_is_advsvc", SERVICE),
    "get_network:segments": ADMIN,
    "get_network:provider:network_type": ADMIN,
    "get_network:provider:physical_network": ADMIN,
    "get_network:provider:segmentation_id": ADMIN,
    "update_network": ADMIN_OR_PROJECT_MEMBER,
    "update_network:shared": ADMIN,
    "update_network:router:external": ADMIN,
    "update_network:is_default": ADMIN,
    "update_network:segments": ADMIN,
    "update_network:provider:network_type": ADMIN,
    "update_network:provider:physical_network": ADMIN,
    "update_network:provider:segmentation_id": ADMIN,
    "delete_network": ADMIN_OR_PROJECT_MEMBER,
}

_SUBNET = {
    "create_subnet": _any(ADMIN_OR_PROJECT_MEMBER, NET_OWNER_MEMBER),
    "create_subnet:segment_id": ADMIN,
    "create_subnet:service_types": ADMIN,
    "get_subnet": _any(ADMIN_OR_PROJECT_READER, NET_OWNER_READER, "rule:shared",
                       "rule:context_is_advsvc", SERVICE),
    "get_subnet:segment_id": ADMIN,
    "update_subnet": _any(ADMIN_OR_PROJECT_MEMBER, NET_OWNER_MEMBER),
    "update_subnet:segment_id": ADMIN,
    "update_subnet:service_types": ADMIN,
    "delete_subnet": _any(ADMIN_OR_PROJECT_MEMBER, NET_OWNER_MEMBER),
}

_SUBNETPOOL = {
    "create_subnetpool": ADMIN_OR_PROJECT_MEMBER,
    "create_subnetpool:shared": ADMIN,
    "create_subnetpool:is_default": ADMIN,
    "get_subnetpool": _any(ADMIN_OR_PROJECT_READER, "rule:shared_subnetpools"),
    "update_subnetpool": ADMIN_OR_PROJECT_MEMBER,
    "update_subnetpool:is_default": ADMIN,
    "delete_subnetpool": ADMIN_OR_PROJECT_MEMBER,
    "add_prefixes": ADMIN_OR_PROJECT_MEMBER,
    "remove_prefixes": ADMIN_OR_PROJECT_MEMBER,
}

_NET_OWNER_OR_ADVSVC = _any(ADMIN_OR_NET_OWNER_MEMBER, "rule:context_is_advsvc",
                            SERVICE)
_PORT = {
    "create_port": _any(ADMIN_OR_PROJECT_MEMBER, "rule:context_is_advsvc", SERVICE),
    "create_port:device_owner": _any("not rule:network_device",
                                     _NET_OWNER_OR_ADVSVC),
    "create_port:mac_address": _NET_OWNER_OR_ADVSVC,
    "create_port:fixed_ips": _any(_NET_OWNER_OR_ADVSVC, "rule:shared"),
    "create_port:fixed_ips:ip_address": _NET_OWNER_OR_ADVSVC,
    "create_port:fixed_ips:subnet_id": _any(_NET_OWNER_OR_ADVSVC, "rule:shared"),
    "create_port:port_security_enabled": _NET_OWNER_OR_ADVSVC,
    "create_port:binding:host_id": _any(ADMIN, SERVICE),
    "create_port:binding:profile": _any(ADMIN, SERVICE),
    "create_port:allowed_address_pairs": ADMIN_OR_NET_OWNER_MEMBER,
    "create_port:allowed_address_pairs:mac_address": ADMIN_OR_NET_OWNER_MEMBER,
    "create_port:allowed_address_pairs:ip_address": ADMIN_OR_NET_OWNER_MEMBER,
    "get_port": _any(ADMIN_OR_PROJECT_READER, NET_OWNER_READER,
                     "rule:context_is_advsvc", SERVICE),
    "get_port:binding:vif_type": _any(ADMIN, SERVICE),
    "get_port:binding:vif_details": _any(ADMIN, SERVICE),
    "get_port:binding:host_id": _any(ADMIN, SERVICE),
    "get_port:binding:profile": _any(ADMIN, SERVICE),
    "update_port": _any(ADMIN_OR_PROJECT_MEMBER, "rule:context_is_advsvc", SERVICE),
    "update_port:device_owner": _any("not rule:network_device",
                                     _NET_OWNER_OR_ADVSVC),
    "update_port:mac_address": _any(ADMIN, "rule:context_is_advsvc", SERVICE),
    "update_port:fixed_ips": _NET_OWNER_OR_ADVSVC,
    "update_port:fixed_ips:ip_address": _NET_OWNER_OR_ADVSVC,
    "update_port:fixed_ips:subnet_id": _any(_NET_OWNER_OR_ADVSVC, "rule:shared"),
    "update_port:port_security_enabled": _NET_OWNER_OR_ADVSVC,
    "update_port:binding:host_id": _any(ADMIN, SERVICE),
    "update_port:binding:profile": _any(ADMIN, SERVICE),
    "update_port:allowed_address_pairs": ADMIN_OR_NET_OWNER_MEMBER,
    "update_port:allowed_address_pairs:mac_address": ADMIN_OR_NET_OWNER_MEMBER,
    "update_port:allowed_address_pairs:ip_address": ADMIN_OR_NET_OWNER_MEMBER,
    "delete_port": _any(ADMIN_OR_PROJECT_MEMBER, NET_OWNER_MEMBER,
                        "rule:context_is_advsvc", SERVICE),
}

# Tags follow the parent resource's update/get rules in upstream; one rule
# per verb keeps overrides simple.
_TAGS = {
    f"{verb}_{res}_tags": rule
    for res in ("networks", "subnets", "ports", "subnetpools")
    for verb, rule in (("get", ADMIN_OR_PROJECT_READER),
                       ("create", ADMIN_OR_PROJECT_MEMBER),
                       ("update", ADMIN_OR_PROJECT_MEMBER),
                       ("delete", ADMIN_OR_PROJECT_MEMBER))
}

_QUOTA = {
    "get_quota": ADMIN_OR_PROJECT_READER,
    "update_quota": ADMIN,
    "delete_quota": ADMIN,
}

_BASE_NAMES = set(BASE)


def rules() -> list[policy.RuleDefault]:
    out = []
    for group in (BASE, _NETWORK, _SUBNET, _SUBNETPOOL, _PORT, _TAGS, _QUOTA):
        for name, check in group.items():
            scope = None if name in _BASE_NAMES else ["project"]
            out.append(policy.RuleDefault(name, check, scope_types=scope))
    return out

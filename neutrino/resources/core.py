"""The core resources of Networking API v2.0, declared as data.

Attributes that upstream adds through always-on core extensions
(allowed-address-pairs, extra_dhcp_opt, subnet_allocation, net-mtu,
default-subnetpools, standard attributes) are declared here as well: they
are loaded with the core plugin and listed by ``resources.extensions``.
"""
from __future__ import annotations

from neutrino.resources import address_scope, provider
from neutrino.resources import validators as v
from neutrino.resources.attributes import (
    AUTO,
    UNSET,
    AttributeMap,
    ResourceDef,
    attr,
    extend,
    resource,
    standard_attributes,
)

_B = v.filter_bool
_I = v.filter_int


# ``tag-creation``: tags may be given on POST.
_TAGS_ON_CREATE = attr("tags", v.list_of(v.string(255)), default=[], allow_post=True)


NETWORK = resource(
    "network", "networks",
    *standard_attributes(),
    attr("admin_state_up", v.boolean, default=True, allow_post=True,
         allow_put=True, is_filter=True, is_sort_key=True, convert_filter=_B),
    attr("status", is_filter=True, is_sort_key=True),
    attr("subnets", is_filter=True, convert_filter=str),
    attr("shared", v.boolean, default=False, allow_post=True, allow_put=True,
         is_filter=True, enforce_policy=True, required_by_policy=True,
         convert_filter=_B),
    # Optional on POST: the plugin computes it when absent or 0. Low values
    # are refused only where they cannot carry a subnet (plugins/subnets.py).
    attr("mtu", v.non_negative(), default=None, allow_post=True, allow_put=True,
         is_filter=True, is_sort_key=True, convert_filter=_I),
    attr("ipv4_address_scope", is_filter=False),
    attr("ipv6_address_scope", is_filter=False),
    # ``external-net``: admin-only to set (policy); per caller as RBAC says.
    attr("router:external", v.boolean, default=False, allow_post=True,
         allow_put=True, is_filter=True, enforce_policy=True, convert_filter=_B),
    _TAGS_ON_CREATE,
)


SUBNET = resource(
    "subnet", "subnets",
    *standard_attributes(),
    attr("network_id", v.uuid, allow_post=True, is_filter=True,
         is_sort_key=True, required_by_policy=True, convert_filter=str),
    attr("ip_version", v.values(4, 6, convert=v.integer()), allow_post=True,
         is_filter=True, is_sort_key=True, convert_filter=_I),
    attr("cidr", v.subnet_cidr, default=None, allow_post=True,
         is_filter=True, is_sort_key=True),
    attr("prefixlen", v.integer(0, 128), default=None, allow_post=True,
         is_visible=False),
    attr("subnetpool_id", v.or_none(v.uuid), default=None, allow_post=True,
         is_filter=True, is_sort_key=True),
    attr("use_default_subnetpool", v.boolean, default=False,
         allow_post=True, is_visible=False),
    # Absent means "first address"; an explicit null means no gateway.
    attr("gateway_ip", v.or_none(v.ip_address), default=AUTO,
         allow_post=True, allow_put=True, is_filter=True, is_sort_key=True),
    attr("allocation_pools", v.allocation_pools, default=None,
         allow_post=True, allow_put=True),
    attr("dns_nameservers", v.nameservers, default=None, allow_post=True,
         allow_put=True),
    attr("host_routes", v.host_routes, default=None, allow_post=True,
         allow_put=True),
    attr("enable_dhcp", v.boolean, default=True, allow_post=True,
         allow_put=True, is_filter=True, is_sort_key=True, convert_filter=_B),
    attr("ipv6_ra_mode",
         v.or_none(v.values("dhcpv6-stateful", "dhcpv6-stateless", "slaac")),
         default=None, allow_post=True, is_filter=True, is_sort_key=True),
    attr("ipv6_address_mode",
         v.or_none(v.values("dhcpv6-stateful", "dhcpv6-stateless", "slaac")),
         default=None, allow_post=True, is_filter=True, is_sort_key=True),
    # Upstream filters subnets by their network's sharing but never shows it.
    attr("shared", is_filter=True, convert_filter=_B, is_visible=False),
    attr("segment_id", is_filter=True),
    # ``subnet-service-types``: the device owners whose ports it addresses.
    attr("service_types", v.subnet_service_types, default=[], allow_post=True,
         allow_put=True, policy_unchecked=True),
    # ``subnet-external-network``: the network's external flag, read-only;
    # a filter as upstream's (the flag itself, whoever asks).
    attr("router:external", is_filter=True, convert_filter=_B),
    _TAGS_ON_CREATE,
)


PORT = resource(
    "port", "ports",
    *standard_attributes(),
    attr("network_id", v.uuid, allow_post=True, is_filter=True,
         is_sort_key=True, required_by_policy=True, convert_filter=str),
    attr("admin_state_up", v.boolean, default=True, allow_post=True,
         allow_put=True, is_filter=True, is_sort_key=True, convert_filter=_B),
    # ``port-mac-address-regenerate``: null asks for a new one.
    attr("mac_address", v.or_none(v.mac_address), default=None, allow_post=True,
         allow_put=True, is_filter=True, is_sort_key=True,
         enforce_policy=True, required_by_policy=True),
    attr("fixed_ips", v.fixed_ips, default=None, allow_post=True,
         allow_put=True, is_filter=True, enforce_policy=True),
    attr("device_id", v.string(255), default="", allow_post=True,
         allow_put=True, is_filter=True, is_sort_key=True),
    attr("device_owner", v.string(255), default="", allow_post=True,
         allow_put=True, is_filter=True, is_sort_key=True,
         enforce_policy=True),
    attr("status", is_filter=True, is_sort_key=True),
    attr("allowed_address_pairs", v.allowed_address_pairs, default=None,
         allow_post=True, allow_put=True, enforce_policy=True),
    attr("extra_dhcp_opts", v.extra_dhcp_opts, default=None,
         allow_post=True, allow_put=True),
    attr("ip_allocation", is_filter=True),
    _TAGS_ON_CREATE,
)


SUBNETPOOL = resource(
    "subnetpool", "subnetpools",
    *standard_attributes(name_default=UNSET),
    attr("prefixes", v.prefixes, allow_post=True, allow_put=True),
    attr("default_prefixlen", v.or_none(v.integer(0, 128)), default=None,
         allow_post=True, allow_put=True, is_filter=True, is_sort_key=True,
         convert_filter=_I),
    attr("min_prefixlen", v.or_none(v.integer(0, 128)), default=None,
         allow_post=True, allow_put=True, is_filter=True, is_sort_key=True,
         convert_filter=_I),
    attr("max_prefixlen", v.or_none(v.integer(0, 128)), default=None,
         allow_post=True, allow_put=True, is_filter=True, is_sort_key=True,
         convert_filter=_I),
    attr("default_quota", v.or_none(v.integer(0)), default=None,
         allow_post=True, allow_put=True, is_filter=True, is_sort_key=True,
         convert_filter=_I),
    attr("ip_version", is_filter=True, is_sort_key=True, convert_filter=_I),
    attr("shared", v.boolean, default=False, allow_post=True,
         is_filter=True, enforce_policy=True, required_by_policy=True,
         convert_filter=_B),
    attr("is_default", v.boolean, default=False, allow_post=True,
         allow_put=True, is_filter=True, is_sort_key=True,
         enforce_policy=True, convert_filter=_B),
    _TAGS_ON_CREATE,
    # ``subnet_onboard``: ``onboard_network_subnets``.
    actions={"add_prefixes": "PUT", "remove_prefixes": "PUT", "onboard_network_subnets": "PUT"},
)


CORE = (NETWORK, SUBNET, PORT, SUBNETPOOL)
# Extensions of the core resources the ML2 core plugin always has.
ALWAYS_EXTENDED: tuple[AttributeMap, ...] = (
    provider.PROVIDER, provider.MULTI_PROVIDER, address_scope.SUBNETPOOL_ADDRESS_SCOPE)


def core_resources() -> dict[str, ResourceDef]:
    """Copies keyed by collection name, with the extensions the core always
    has applied; an API extends its copies further."""
    resources = {d.plural: d.copy() for d in CORE}
    for added in ALWAYS_EXTENDED:
        extend(resources, added)
    return resources

"""The core resources of Networking API v2.0, declared as data.

Attributes that upstream adds through always-on core extensions
(allowed-address-pairs, extra_dhcp_opt, subnet_allocation, net-mtu,
default-subnetpools, standard attributes) are declared here as well: they
are loaded with the core plugin and listed by ``resources.extensions``.
"""
from __future__ import annotations

from neutrino.resources import provider
from neutrino.resources.address_scope import subnetpool_address_scope_id
from neutrino.resources import validators as v
from neutrino.resources.attributes import (AUTO, UNSET, Attribute, ResourceDef, attr,
                                           standard_attributes)

_B = v.filter_bool
_I = v.filter_int


def _tags_on_create() -> list[Attribute]:
    # ``tag-creation``: tags may be given on POST.
    return [attr("tags", v.list_of(v.string(255)), default=[], allow_post=True)]


def network() -> ResourceDef:
    r = ResourceDef("network", "networks")
    r.add(*standard_attributes())
    r.add(
        attr("admin_state_up", v.boolean, default=True, allow_post=True,
             allow_put=True, is_filter=True, is_sort_key=True, convert_filter=_B),
        attr("status", is_filter=True, is_sort_key=True),
        attr("subnets", is_filter=True, convert_filter=str),
        attr("shared", v.boolean, default=False, allow_post=True, allow_put=True,
             is_filter=True, enforce_policy=True, required_by_policy=True,
             convert_filter=_B),
        # Optional on POST: the plugin computes it when absent.
        attr("mtu", v.integer(68), default=None, allow_post=True, allow_put=True,
             is_filter=True, is_sort_key=True, convert_filter=_I),
        attr("ipv4_address_scope", is_filter=False),
        attr("ipv6_address_scope", is_filter=False),
        # ``external-net``: admin-only to set (policy); per caller as RBAC says.
        attr("router:external", v.boolean, default=False, allow_post=True,
             allow_put=True, is_filter=True, enforce_policy=True, convert_filter=_B),
        *_tags_on_create(),
    )
    return provider.extend_network(r)  # the ML2 core plugin always has them


def subnet() -> ResourceDef:
    r = ResourceDef("subnet", "subnets")
    r.add(*standard_attributes())
    r.add(
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
        attr("service_types", is_filter=False),
        # ``subnet-external-network``: the network's external flag, read-only.
        attr("router:external", is_filter=False),
        *_tags_on_create(),
    )
    return r


def port() -> ResourceDef:
    r = ResourceDef("port", "ports")
    r.add(*standard_attributes())
    r.add(
        attr("network_id", v.uuid, allow_post=True, is_filter=True,
             is_sort_key=True, required_by_policy=True, convert_filter=str),
        attr("admin_state_up", v.boolean, default=True, allow_post=True,
             allow_put=True, is_filter=True, is_sort_key=True, convert_filter=_B),
        attr("mac_address", v.mac_address, default=None, allow_post=True,
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
        *_tags_on_create(),
    )
    return r


def subnetpool() -> ResourceDef:
    r = ResourceDef("subnetpool", "subnetpools")
    r.add(*standard_attributes(name_default=UNSET))
    r.add(
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
        *subnetpool_address_scope_id(),
        *_tags_on_create(),
    )
    r.actions = {"add_prefixes": "PUT", "remove_prefixes": "PUT"}
    return r


def core_resources() -> dict[str, ResourceDef]:
    """Fresh definitions keyed by collection name; extensions may extend them."""
    return {d.plural: d for d in (network(), subnet(), port(), subnetpool())}

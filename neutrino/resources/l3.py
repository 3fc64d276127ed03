"""Routers, floating IPs and floating IP pools declared as data, with their
validators.

``routes`` (``extraroute``) can be set only by update, as upstream; a
router's ``external_gateway_info`` is a dict whose keys each have their
own policy rule (``ext-gw-mode``'s ``enable_snat`` and the
``external_fixed_ips`` are admin-only by default).
"""
from __future__ import annotations

from typing import Any

import netaddr

from neutrino.resources import validators as v
from neutrino.resources.attributes import AUTO, AttributeMap, attr, resource, standard_attributes

_B = v.filter_bool


def _strict_cidr(value: Any) -> str:
    """A CIDR whose host bits are clear (routes refuse '10.0.0.5/24')."""
    try:
        net = netaddr.IPNetwork(value)
        if not isinstance(value, str) or "/" not in value or str(net.cidr) != str(net):
            raise ValueError
    except (netaddr.AddrFormatError, ValueError, TypeError):
        raise v.Invalid(f"'{value}' is not a valid CIDR") from None
    return str(net.cidr)


def _keys(value: Any, expected: set[str], required: set[str] | None = None) -> None:
    if not isinstance(value, dict):
        raise v.Invalid(f"'{value}' is not a dictionary")
    required = expected if required is None else required
    if not required <= set(value) or not set(value) <= expected:
        raise v.Invalid(f"Validation of dictionary's keys failed. Expected keys: "
                        f"{required} Provided keys: {set(value)}")


def _route(value: Any) -> dict[str, str]:
    _keys(value, {"destination", "nexthop"})
    return {"destination": _strict_cidr(value["destination"]),
            "nexthop": v.ip_address(value["nexthop"])}


def routes(value: Any) -> list[dict[str, str]]:
    """``routes``: null means none; duplicates are refused as upstream names them."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise v.Invalid(f"'{value}' is not a list")
    out: list[dict[str, str]] = []
    for raw in value:
        route = _route(raw)
        if route in out:
            raise v.Invalid(f"Duplicate hostroute '{raw}'")
        out.append(route)
    return out


def _external_fixed_ip(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict) or not set(value) <= {"subnet_id", "ip_address"}:
        raise v.Invalid(f"Invalid data format for fixed IP: '{value}'")
    out: dict[str, Any] = {}
    if "subnet_id" in value:
        out["subnet_id"] = v.uuid(value["subnet_id"])
    if "ip_address" in value:
        out["ip_address"] = v.ip_address(value["ip_address"])
    return out


_GATEWAY_KEYS = {"network_id", "enable_snat", "external_fixed_ips"}


def _gateway_info(value: Any, keys: set[str]) -> dict[str, Any] | None:
    if value is None or value == {}:
        return None
    if not isinstance(value, dict):
        raise v.Invalid(f"'{value}' is not a dictionary")
    unexpected = sorted(set(value) - keys)
    if unexpected:
        raise v.Invalid(f"Unexpected keys supplied: {', '.join(unexpected)}")
    _keys(value, keys, {"network_id"})
    out: dict[str, Any] = {"network_id": v.uuid(value["network_id"])}
    if "enable_snat" in value:
        out["enable_snat"] = v.boolean(value["enable_snat"])
    if "external_fixed_ips" in value:
        ips = value["external_fixed_ips"]
        if ips is None:
            ips = []
        if not isinstance(ips, list):
            raise v.Invalid(f"Invalid data format for fixed IP: '{ips}'")
        out["external_fixed_ips"] = [_external_fixed_ip(i) for i in ips]
    if "qos_policy_id" in value:
        out["qos_policy_id"] = v.or_none(v.uuid)(value["qos_policy_id"])
    return out


def gateway_info(value: Any) -> dict[str, Any] | None:
    """``external_gateway_info``: None or {} clear the gateway."""
    return _gateway_info(value, _GATEWAY_KEYS)


def gateway_info_with_qos(value: Any) -> dict[str, Any] | None:
    """``qos-gateway-ip``: the gateway may also name its QoS policy (absent:
    unchanged, null: none)."""
    return _gateway_info(value, _GATEWAY_KEYS | {"qos_policy_id"})


# ``tag-creation``: tags may be given on POST.
_TAGS_ON_CREATE = attr("tags", v.list_of(v.string(255)), default=[], allow_post=True)

def _gateway_attr(validate: Any) -> Any:
    return attr("external_gateway_info", validate, default=None, allow_post=True,
                allow_put=True, enforce_policy=True)


ROUTER = resource(
    "router", "routers",
    *standard_attributes(),
    attr("admin_state_up", v.boolean, default=True, allow_post=True, allow_put=True,
         is_filter=True, is_sort_key=True, convert_filter=_B),
    attr("status", is_filter=True, is_sort_key=True),
    _gateway_attr(gateway_info),
    # ``extraroute``: set by update only, as upstream.
    attr("routes", routes, allow_put=True),
    # ``dvr``: None means ``[DEFAULT] router_distributed``.
    attr("distributed", v.or_none(v.boolean), default=None, allow_post=True,
         allow_put=True, is_filter=True, enforce_policy=True, convert_filter=_B),
    # ``l3-ha``: None means ``[DEFAULT] l3_ha``.
    attr("ha", v.or_none(v.boolean), default=None, allow_post=True, allow_put=True,
         is_filter=True, enforce_policy=True, convert_filter=_B),
    _TAGS_ON_CREATE,
    actions={"add_router_interface": "PUT", "remove_router_interface": "PUT",
             "add_extraroutes": "PUT", "remove_extraroutes": "PUT"},
)

FLOATINGIP = resource(
    "floatingip", "floatingips",
    *[a for a in standard_attributes() if a.name != "name"],
    attr("floating_ip_address", v.or_none(v.ip_address), default=None, allow_post=True,
         is_filter=True, is_sort_key=True, enforce_policy=True),
    attr("subnet_id", v.or_none(v.uuid), default=None, allow_post=True,
         is_visible=False),
    attr("floating_network_id", v.uuid, allow_post=True, is_filter=True,
         is_sort_key=True, convert_filter=str),
    attr("router_id", is_filter=True, is_sort_key=True),
    attr("port_id", v.or_none(v.uuid), default=None, allow_post=True, allow_put=True,
         is_filter=True, required_by_policy=True),
    attr("fixed_ip_address", v.or_none(v.ip_address), default=None, allow_post=True,
         allow_put=True, is_filter=True, is_sort_key=True),
    attr("status", is_filter=True, is_sort_key=True),
    _TAGS_ON_CREATE,
    attr("port_details"),  # ``fip-port-details``
)

# ``floating-ip-router-writable``: the hosting router may be asked for, on
# create and update (it then hosts an associated floating IP).
FIP_ROUTER_WRITABLE: AttributeMap = {"floatingips": [
    attr("router_id", v.or_none(v.uuid), default=None, allow_post=True, allow_put=True,
         is_filter=True, is_sort_key=True)]}

# ``GET /v2.0/floatingip_pools``: subnets of external networks (read only).
FLOATINGIP_POOL = resource(
    "floatingip_pool", "floatingip_pools",
    attr("subnet_id"), attr("subnet_name"), attr("network_id"), attr("cidr"),
    attr("project_id"), attr("tenant_id"),
    has_tags=False,
)


# ``network_ha``: a network created as its project's HA network (the L3
# plugin's own, for HA routers); accepted on create, never shown.
NETWORK_HA = {"networks": [attr("ha", v.boolean, default=False, allow_post=True,
                                is_visible=False)]}

# ``l3-flavors``: the flavor a router is made with, never changed. Any
# value is looked up (a missing one is FlavorNotFound, null included), as
# upstream; left out, the router has none (``AUTO``).
ROUTER_FLAVOR = {"routers": [attr("flavor_id", default=AUTO, allow_post=True, is_sort_key=True,
                                  enforce_policy=True)]}

# ``qos-fip``: a floating IP's QoS policy (the QoS plugin loaded).
FLOATINGIP_QOS = {"floatingips": [
    attr("qos_policy_id", v.or_none(v.uuid), default=None, allow_post=True, allow_put=True,
         enforce_policy=True)]}
# ``qos-gateway-ip``: the gateway info takes ``qos_policy_id`` too.
ROUTER_GATEWAY_QOS = {"routers": [_gateway_attr(gateway_info_with_qos)]}

"""Routers and floating IPs declared as data, with their validators.

``routes`` (``extraroute``) can be set only by update, as upstream; a
router's ``external_gateway_info`` is a dict whose keys each have their
own policy rule (``ext-gw-mode``'s ``enable_snat`` and the
``external_fixed_ips`` are admin-only by default).
"""
from __future__ import annotations

from typing import Any

import netaddr

from neutrino.resources import validators as v
from neutrino.resources.attributes import ResourceDef, attr, standard_attributes

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


def gateway_info(value: Any) -> dict[str, Any] | None:
    """``external_gateway_info``: None or {} clear the gateway."""
    if value is None or value == {}:
        return None
    if not isinstance(value, dict):
        raise v.Invalid(f"'{value}' is not a dictionary")
    unexpected = sorted(set(value) - {"network_id", "enable_snat", "external_fixed_ips"})
    if unexpected:
        raise v.Invalid(f"Unexpected keys supplied: {', '.join(unexpected)}")
    _keys(value, {"network_id", "enable_snat", "external_fixed_ips"}, {"network_id"})
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
    return out


def _tags_on_create() -> Any:
    return attr("tags", v.list_of(v.string(255)), default=[], allow_post=True)


def router() -> ResourceDef:
    r = ResourceDef("router", "routers")
    r.add(*standard_attributes())
    r.add(
        attr("admin_state_up", v.boolean, default=True, allow_post=True, allow_put=True,
             is_filter=True, is_sort_key=True, convert_filter=_B),
        attr("status", is_filter=True, is_sort_key=True),
        attr("external_gateway_info", gateway_info, default=None, allow_post=True,
             allow_put=True, enforce_policy=True),
        # ``extraroute``: set by update only, as upstream.
        attr("routes", routes, allow_put=True),
        # ``dvr``: None means ``[DEFAULT] router_distributed``.
        attr("distributed", v.or_none(v.boolean), default=None, allow_post=True,
             allow_put=True, is_filter=True, enforce_policy=True, convert_filter=_B),
        # ``l3-ha``: None means ``[DEFAULT] l3_ha``.
        attr("ha", v.or_none(v.boolean), default=None, allow_post=True, allow_put=True,
             is_filter=True, enforce_policy=True, convert_filter=_B),
        _tags_on_create(),
    )
    r.actions = {"add_router_interface": "PUT", "remove_router_interface": "PUT",
                 "add_extraroutes": "PUT", "remove_extraroutes": "PUT"}
    return r


def floatingip() -> ResourceDef:
    r = ResourceDef("floatingip", "floatingips")
    r.add(*[a for a in standard_attributes() if a.name != "name"])
    r.add(
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
        _tags_on_create(),
        attr("port_details"),  # ``fip-port-details``
    )
    return r


# -- floating IP port forwardings (``floating-ip-port-forwarding`` and friends) ------

PF_PROTOCOLS = ("dccp", "icmp", "ipv6-icmp", "sctp", "tcp", "udp")


def pf_protocol(value: Any) -> str:
    """Upstream's protocol check: a known name in lower case; another spelling
    of a known protocol (``TCP``, ``6``) is "not in valid_values", anything
    else is not a protocol at all."""
    if isinstance(value, str) and value.lower() in PF_PROTOCOLS:
        if value in PF_PROTOCOLS:
            return value
        raise v.Invalid(f"{value} is not in valid_values")
    try:
        number = int(value)
        if isinstance(value, bool) or not 0 <= number <= 255:
            raise ValueError
    except (TypeError, ValueError):
        raise v.NotConvertible(
            f"IP protocol '{value}' is not supported. Only protocol names and their "
            f"integer representation (0 to 255) are supported") from None
    raise v.Invalid(f"{value} is not in valid_values")


def _port_number(value: Any) -> int:
    """``type:range_or_none`` (1, 65535), with upstream's reasons."""
    try:
        if isinstance(value, bool):
            raise ValueError
        number = int(value)
    except (TypeError, ValueError):
        raise v.Invalid(f"'{value}' is not an integer") from None
    if number < 1:
        raise v.Invalid(f"'{number}' is too small - must be at least '1'")
    if number > 65535:
        raise v.Invalid(f"'{number}' is too large - must be no larger than '65535'")
    return number


def port_range(value: Any) -> str:
    """``type:port_range``: ``N`` or ``N:M`` with 1 <= N <= M <= 65535, kept as ``N:M``."""
    parts = str(value).split(":")
    if len(parts) > 2 or any(not p for p in parts):
        raise v.Invalid("Port range must be two integers separated by a colon")
    for part in parts:
        if not part.isdigit():
            raise v.Invalid(f"Invalid port: {part}")
        if not 1 <= int(part) <= 65535:
            raise v.Invalid(f"Invalid port: {part}, the port must be in the range [1, 65535]")
    if len(parts) == 2 and int(parts[0]) > int(parts[1]):
        raise v.Invalid("First port in a port range must be lower than the second port")
    return f"{int(parts[0])}:{int(parts[-1])}"


PF_PARENT_KEY = "floatingip_id"


def port_forwarding() -> ResourceDef:
    """``/v2.0/floatingips/{id}/port_forwardings`` (with ``-description`` and
    ``-port-ranges``); the owner is the floating IP's (``ext_parent_owner``)."""
    r = ResourceDef("port_forwarding", "port_forwardings", parent="floatingips",
                    parent_key=PF_PARENT_KEY, has_tags=False,
                    policy_name="floatingip_port_forwarding")
    r.add(
        attr("id", v.uuid, is_filter=True, is_sort_key=True, convert_filter=str),
        attr("project_id", v.string(255), default=None, allow_post=True,
             required_by_policy=True, is_visible=False),
        attr("tenant_id", v.string(255), default=None, allow_post=True,
             required_by_policy=True, is_visible=False),
        attr("external_port", v.or_none(_port_number), default=None, allow_post=True,
             allow_put=True, is_filter=True, is_sort_key=True, convert_filter=v.filter_int),
        attr("external_port_range", v.or_none(port_range), default=None, allow_post=True,
             allow_put=True, is_filter=True, is_sort_key=True, convert_filter=port_range),
        attr("protocol", pf_protocol, allow_post=True, allow_put=True, is_filter=True,
             is_sort_key=True),
        attr("internal_port_id", v.uuid, allow_post=True, allow_put=True, is_filter=True,
             is_sort_key=True, convert_filter=str),
        attr("internal_ip_address", v.ip_address, allow_post=True, allow_put=True),
        attr("internal_port", v.or_none(_port_number), default=None, allow_post=True,
             allow_put=True),
        attr("internal_port_range", v.or_none(port_range), default=None, allow_post=True,
             allow_put=True),
        attr("description", v.string(255), default="", allow_post=True, allow_put=True,
             is_filter=True),
        attr(PF_PARENT_KEY, is_visible=False),
    )
    return r


def floatingip_pool() -> ResourceDef:
    """``GET /v2.0/floatingip_pools``: subnets of external networks (read only)."""
    r = ResourceDef("floatingip_pool", "floatingip_pools", has_tags=False)
    r.add(attr("subnet_id"), attr("subnet_name"), attr("network_id"), attr("cidr"),
          attr("project_id"), attr("tenant_id"))
    return r

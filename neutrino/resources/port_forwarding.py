"""Floating IP port forwardings declared as data (``floating-ip-port-forwarding``
with ``-description`` and ``-port-ranges``), with upstream's protocol and
port checks.

``/v2.0/floatingips/{id}/port_forwardings``: the owner is the floating IP's
(``ext_parent_owner``); ``expose-port-forwarding-in-fip`` shows each
floating IP's forwardings.
"""
from __future__ import annotations

from typing import Any

from neutrino.resources import validators as v
from neutrino.resources.attributes import AttributeMap, attr, resource

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

PORT_FORWARDING = resource(
    "port_forwarding", "port_forwardings",
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
    parent="floatingips", parent_key=PF_PARENT_KEY, has_tags=False,
    policy_name="floatingip_port_forwarding",
)

# ``expose-port-forwarding-in-fip``: filled by the plugin for a whole list at once.
EXPOSED_IN_FLOATINGIPS: AttributeMap = {"floatingips": [attr("port_forwardings")]}

"""Security groups, their rules and address groups, declared as data.

``security-group`` is served by the core plugin, as upstream (the ML2
plugin carries it): groups, rules, and the ``security_groups`` attribute of
ports. The converters here turn what callers send into what is stored
(protocol names lower-cased, ``any`` meaning none, ports as integers) and
raise upstream's own error types when they cannot, before anything else
looks at a request.
"""
from __future__ import annotations

from typing import Any

import netaddr

from neutrino import errors
from neutrino.resources import validators as v
from neutrino.resources.attributes import (
    AUTO,
    Attribute,
    AttributeMap,
    attr,
    resource,
    standard_attributes,
)

# IANA protocol numbers of the names upstream accepts; ``icmpv6`` is the
# legacy spelling of ``ipv6-icmp``. The order is the one upstream lists
# them in when it refuses a protocol.
PROTOCOLS: dict[str, int] = {
    "ah": 51, "dccp": 33, "egp": 8, "esp": 50, "gre": 47, "hopopt": 0, "icmp": 1,
    "igmp": 2, "ip": 0, "ipip": 4, "ipv6-encap": 41, "ipv6-frag": 44, "ipv6-icmp": 58,
    "icmpv6": 58, "ipv6-nonxt": 59, "ipv6-opts": 60, "ipv6-route": 43, "ospf": 89,
    "pgm": 113, "rsvp": 46, "sctp": 132, "tcp": 6, "udp": 17, "udplite": 136, "vrrp": 112,
}
# Number -> preferred name (``0`` is ``ip``, the later of its two names).
PROTOCOL_NAMES: dict[int, str] = {num: name for name, num in PROTOCOLS.items()
                                  if name != "icmpv6"}
ANY = "any"
# Protocols whose rules may carry a port range.
PORT_PROTOCOLS = ("dccp", "sctp", "tcp", "udp", "udplite")
PORT_PROTOCOL_NUMBERS = tuple(PROTOCOLS[p] for p in PORT_PROTOCOLS)
ICMP_NUMBERS = (1, 58)
# Protocols (by name or number) that only exist over IPv6.
IPV6_ONLY = ("ipv6-encap", "ipv6-frag", "ipv6-icmp", "icmpv6", "ipv6-nonxt",
             "ipv6-opts", "ipv6-route", "41", "44", "58", "59", "60", "43")
ETHERTYPES = ("IPv4", "IPv6")
DIRECTIONS = ("ingress", "egress")


def _supported_text() -> str:
    names = ", ".join(repr(p) for p in (ANY, *PROTOCOLS))
    return f"(None, {names})"


def protocol(value: Any) -> str | None:
    """A protocol name (lower-cased) or number 0..255 as text; ``any`` is none.

    A number is a JSON integer or a string of digits: upstream would also
    take ``7.9`` (and store "7.9"), which no firewall can enforce.
    """
    if value is None or value == ANY:
        return None
    if isinstance(value, str) and value.lower() in PROTOCOLS:
        return value.lower()
    digits = isinstance(value, str) and value.isascii() and value.isdigit()
    number = isinstance(value, int) and not isinstance(value, bool)
    if (digits or number) and 0 <= int(value) <= 255:
        return str(value)
    raise errors.SecurityGroupRuleInvalidProtocol(protocol=value, values=_supported_text())


def port_value(value: Any) -> int | None:
    """A port number 0..65535 (range rules per protocol come later)."""
    if value is None:
        return None
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise errors.SecurityGroupInvalidPortValue(port=value) from None
    if isinstance(value, float) and value != number or not 0 <= number <= 65535:
        raise errors.SecurityGroupInvalidPortValue(port=value)
    return number


def ethertype(value: Any) -> str:
    if isinstance(value, str):
        for known in ETHERTYPES:
            if known.lower() == value.lower():
                return known
    raise errors.SecurityGroupRuleInvalidEtherType(ethertype=value, values=list(ETHERTYPES))


def ip_prefix(value: Any) -> str | None:
    """A CIDR (an address means a host prefix); kept as given, with its mask."""
    if not value:
        return None
    try:
        return str(netaddr.IPNetwork(value))
    except (netaddr.AddrFormatError, ValueError, TypeError):
        raise errors.InvalidCIDR(input=value) from None


def direction(value: Any) -> str:
    if value not in DIRECTIONS:
        raise v.Invalid(f"{value} is not in valid_values")
    return str(value)


def group_name(value: Any) -> str:
    """Any name but ``default`` (in any case): that one each project has once."""
    name: str = v.string(255)(value)
    if name.lower() == "default":
        raise errors.SecurityGroupDefaultAlreadyExists()
    return name


def _subnet(value: Any) -> str:
    """An address group entry: a CIDR, normalised to its network."""
    if not isinstance(value, str) or "/" not in value:
        raise v.Invalid(f"'{value}' is not a valid IP subnet")
    try:
        net = netaddr.IPNetwork(value)
    except (netaddr.AddrFormatError, ValueError, TypeError):
        raise v.Invalid(f"'{value}' is not a valid IP subnet") from None
    return str(net.cidr)


addresses = v.list_of(_subnet)


def _plain_id(value: Any) -> Any:
    """Ids that upstream does not validate: a wrong one is simply not found."""
    return v.string(36)(value) if value is not None else None


def _standard_but(*left_out: str) -> list[Attribute]:
    return [a for a in standard_attributes() if a.name not in left_out]


# What a rule and a default rule (a template of rules) say of the traffic they
# allow. ``remote_group_id`` is free text, as upstream (``PARENT`` in templates).
_TRAFFIC = (
    attr("remote_group_id", _plain_id, default=None, allow_post=True,
         is_filter=True, is_sort_key=True),
    attr("remote_address_group_id", _plain_id, default=None, allow_post=True,
         is_filter=True, is_sort_key=True),
    attr("direction", direction, allow_post=True, is_filter=True, is_sort_key=True),
    attr("protocol", protocol, default=None, allow_post=True, is_filter=True,
         is_sort_key=True),
    attr("port_range_min", port_value, default=None, allow_post=True, is_filter=True,
         is_sort_key=True, convert_filter=v.filter_int),
    attr("port_range_max", port_value, default=None, allow_post=True, is_filter=True,
         is_sort_key=True, convert_filter=v.filter_int),
    attr("ethertype", ethertype, default="IPv4", allow_post=True, is_filter=True,
         is_sort_key=True),
    attr("remote_ip_prefix", ip_prefix, default=None, allow_post=True,
         is_filter=True, is_sort_key=True),
)


SECURITY_GROUP = resource(
    "security_group", "security_groups",
    *standard_attributes(),
    attr("name", group_name, default="", allow_post=True, allow_put=True,
         is_filter=True, is_sort_key=True),
    # Not given: the project's default statefulness (or true).
    attr("stateful", v.boolean, default=AUTO, allow_post=True, allow_put=True,
         is_filter=True, is_sort_key=True, convert_filter=v.filter_bool),
    # ``rbac-security-groups``: per caller; ``security-groups-shared-filtering``.
    attr("shared", is_filter=True, convert_filter=v.filter_bool),
    attr("security_group_rules"),
    attr("tags", v.list_of(v.string(255)), default=[], allow_post=True),
    url_name="security-groups",
)


SECURITY_GROUP_RULE = resource(
    "security_group_rule", "security_group_rules",
    *_standard_but("name", "tags"),
    attr("security_group_id", _plain_id, allow_post=True, is_filter=True,
         is_sort_key=True, required_by_policy=True),
    *_TRAFFIC,
    # security-groups-normalized-cidr
    attr("normalized_cidr", is_filter=True, is_sort_key=True),
    # security-groups-rules-belongs-to-default-sg
    attr("belongs_to_default_sg", is_filter=True, convert_filter=v.filter_bool),
    url_name="security-group-rules", has_tags=False,
)


ADDRESS_GROUP = resource(
    "address_group", "address_groups",
    *_standard_but("tags"),
    attr("addresses", addresses, default=AUTO, allow_post=True),
    # ``rbac-address-group``: per caller, read by policy, never shown.
    attr("shared", is_visible=False),
    actions={"add_addresses": "PUT", "remove_addresses": "PUT"}, url_name="address-groups",
    has_tags=False,
)


# What ``security-group`` adds to ports (filterable: ``port-security-groups-filtering``).
# Absent means "the project's default group"; ``[]`` or null means none.
PORT_SECURITY_GROUPS: AttributeMap = {"ports": [
    attr("security_groups", v.uuid_list, default=AUTO, allow_post=True,
         allow_put=True, is_filter=True, convert_filter=str)]}


PARENT = "PARENT"  # a template's remote group: the group being created


# ``security-groups-default-rules``: the templates new groups' rules come from. As
# upstream, which groups a template is for must always be said.
DEFAULT_SECURITY_GROUP_RULE = resource(
    "default_security_group_rule", "default_security_group_rules",
    attr("id", v.uuid, is_filter=True, is_sort_key=True, convert_filter=str),
    attr("tenant_id", v.string(255), default=None, allow_post=True,
         required_by_policy=True, is_visible=False),
    attr("description", v.string(255), default="", allow_post=True, is_filter=True),
    *_TRAFFIC,
    attr("used_in_default_sg", v.boolean, allow_post=True, is_filter=True,
         convert_filter=v.filter_bool),
    attr("used_in_non_default_sg", v.boolean, allow_post=True, is_filter=True,
         convert_filter=v.filter_bool),
    url_name="default-security-group-rules", has_tags=False,
)


# ``security-groups-default-statefulness``: the ``stateful`` new groups get when they name
# none, per project or (``project_id: null``, admins only) for everyone. Upstream names
# resource and collection alike.
SECURITY_GROUPS_DEFAULT_STATEFULNESS = resource(
    "security_groups_default_statefulness", "security_groups_default_statefulness",
    attr("id", v.uuid, is_filter=True, is_sort_key=True, convert_filter=str),
    attr("project_id", v.or_none(v.string(255)), default=None, allow_post=True,
         required_by_policy=True, is_filter=True, is_sort_key=True),
    attr("tenant_id", v.or_none(v.string(255)), default=None, allow_post=True,
         required_by_policy=True, is_visible=False),
    attr("stateful", v.boolean, default=True, allow_post=True, allow_put=True,
         is_filter=True, is_sort_key=True, convert_filter=v.filter_bool),
    url_name="security-groups-default-statefulness", has_tags=False, null_project=True,
)


RESOURCES = (SECURITY_GROUP, SECURITY_GROUP_RULE, ADDRESS_GROUP, DEFAULT_SECURITY_GROUP_RULE,
             SECURITY_GROUPS_DEFAULT_STATEFULNESS)

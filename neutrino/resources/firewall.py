"""``fwaas_v2``: firewall rules, policies and groups, declared as data.

A rule matches packets (protocol, IP version, source and destination
addresses and port ranges) and says what becomes of them (allow, deny,
reject); a disabled rule is skipped. A policy is an ordered list of rules
(``insert_rule``/``remove_rule`` place one before or after another; any
change clears ``audited``). A group applies one policy to the traffic
entering its ports and one to the traffic leaving them: router interfaces
(the L3 agent) and instances' ports (the L2 agent). Every project has a
group named ``default`` made for it on first use. All three live under
``/v2.0/fwaas``; ``shared`` ones are seen and used by every project.
"""
from __future__ import annotations

from typing import Any

from neutrino.resources import validators as v
from neutrino.resources.attributes import attr, resource, standard_attributes
from neutrino.resources.extensions import described

FWAAS_V2 = described("fwaas_v2")
ALLOW, DENY, REJECT = "allow", "deny", "reject"
ACTIONS = (ALLOW, DENY, REJECT)
PROTOCOLS = ("dccp", "icmp", "ipv6-icmp", "sctp", "tcp", "udp")

DEFAULT_FWG = "default"
DEFAULT_FWP_INGRESS, DEFAULT_FWP_EGRESS = "default ingress", "default egress"

# statuses of a group (upstream's, from neutron-lib's constants)
ACTIVE, INACTIVE, DOWN, ERROR = "ACTIVE", "INACTIVE", "DOWN", "ERROR"
CREATED = "CREATED"
PENDING_CREATE, PENDING_UPDATE, PENDING_DELETE = (
    "PENDING_CREATE", "PENDING_UPDATE", "PENDING_DELETE")
PENDING = (PENDING_CREATE, PENDING_UPDATE, PENDING_DELETE)

# the device owners whose ports a group may hold on a router
ROUTER_INTERFACE_OWNERS = ("network:router_interface", "network:router_interface_distributed",
                           "network:ha_router_replicated_interface")
COMPUTE_PREFIX = "compute:"


def action(value: Any) -> str:
    """``convert_string_to_case_insensitive`` then ``type:values``."""
    text = value.lower() if isinstance(value, str) else value
    return str(v.one_of(*ACTIONS)(text))


def protocol(value: Any) -> str | None:
    """A protocol name (any case) of those a rule may name, or null (any)."""
    if value is None:
        return None
    text = value.lower() if isinstance(value, str) else value
    return str(v.one_of(*PROTOCOLS)(text))


def ip_version(value: Any) -> int:
    try:
        number = int(value) if not isinstance(value, bool) else value
    except (TypeError, ValueError):
        raise v.NotConvertible(f"'{value}' is not an integer") from None
    return int(v.one_of(4, 6)(number))


def port_range(value: Any) -> str | None:
    """``type:port_range``: ``N`` or ``N:M`` within [0, 65535], in upstream's
    words; a range whose first port is above its second is the plugin's
    ``FirewallRuleInvalidPortValue``."""
    if value is None:
        return None
    ports = str(value).split(":")
    if len(ports) > 2 or any(not p for p in ports):
        raise v.Invalid("Port range must be two integers separated by a colon")
    for part in ports:
        if not part.isascii() or not part.isdigit():
            raise v.Invalid(f"Invalid port: {part}")
        if int(part) > 65535:
            raise v.Invalid(f"Invalid port: {part}, the port must be in the range [0, 65535]")
    return ":".join(ports)


def _shared() -> Any:
    return attr("shared", v.boolean, default=False, allow_post=True, allow_put=True,
                enforce_policy=True, required_by_policy=True, is_filter=True,
                is_sort_key=True, convert_filter=v.filter_bool)


FIREWALL_RULE = resource(
    "firewall_rule", "firewall_rules",
    *standard_attributes(),
    _shared(),
    attr("protocol", protocol, default=None, allow_post=True, allow_put=True,
         is_filter=True, is_sort_key=True),
    attr("ip_version", ip_version, default=4, allow_post=True, allow_put=True,
         is_filter=True, is_sort_key=True, convert_filter=v.filter_int),
    attr("source_ip_address", v.or_none(v.ip_or_subnet), default=None, allow_post=True,
         allow_put=True, is_filter=True, is_sort_key=True),
    attr("destination_ip_address", v.or_none(v.ip_or_subnet), default=None,
         allow_post=True, allow_put=True, is_filter=True, is_sort_key=True),
    attr("source_port", port_range, default=None, allow_post=True, allow_put=True),
    attr("destination_port", port_range, default=None, allow_post=True, allow_put=True),
    attr("action", action, default=DENY, allow_post=True, allow_put=True, is_filter=True,
         is_sort_key=True),
    attr("enabled", v.boolean, default=True, allow_post=True, allow_put=True,
         is_filter=True, is_sort_key=True, convert_filter=v.filter_bool),
    attr("firewall_policy_id"),
    url_name="fwaas/firewall_rules",
)

FIREWALL_POLICY = resource(
    "firewall_policy", "firewall_policies",
    *standard_attributes(),
    _shared(),
    attr("firewall_rules", v.uuid_list, default=None, allow_post=True, allow_put=True,
         is_filter=True),
    attr("audited", v.boolean, default=False, allow_post=True, allow_put=True,
         is_filter=True, is_sort_key=True, convert_filter=v.filter_bool),
    actions={"insert_rule": "PUT", "remove_rule": "PUT"},
    url_name="fwaas/firewall_policies",
)

FIREWALL_GROUP = resource(
    "firewall_group", "firewall_groups",
    *standard_attributes(),
    _shared(),
    attr("admin_state_up", v.boolean, default=True, allow_post=True, allow_put=True,
         is_filter=True, is_sort_key=True, convert_filter=v.filter_bool),
    attr("status", is_filter=True, is_sort_key=True),
    attr("ingress_firewall_policy_id", v.or_none(v.uuid), default=None, allow_post=True,
         allow_put=True, is_filter=True, is_sort_key=True),
    attr("egress_firewall_policy_id", v.or_none(v.uuid), default=None, allow_post=True,
         allow_put=True, is_filter=True, is_sort_key=True),
    attr("ports", v.uuid_list, default=None, allow_post=True, allow_put=True, is_filter=True),
    url_name="fwaas/firewall_groups",
)

RESOURCES = (FIREWALL_RULE, FIREWALL_POLICY, FIREWALL_GROUP)

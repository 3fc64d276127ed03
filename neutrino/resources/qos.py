"""QoS resources declared as data: policies, the rule types, rule types' listing.

Every rule type is one ``RuleType`` entry: its value fields with their
validators and defaults, and the directions it accepts. The API resources
(``/v2.0/qos/policies/{id}/<type>_rules`` and the ``qos-rules-alias``
collections ``/v2.0/qos/alias_<type>_rules/{id}``) are generated from these
entries, so adding a type is adding an entry.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from neutrino import errors
from neutrino.resources import rbac
from neutrino.resources import validators as v
from neutrino.resources.attributes import (
    UNSET,
    Attribute,
    AttributeMap,
    ResourceDef,
    attr,
    resource,
    standard_attributes,
)
from neutrino.resources.extensions import described

INT_MAX = 2 ** 31 - 1  # upstream's DB_INTEGER_MAX_VALUE
INGRESS, EGRESS, ANY = "ingress", "egress", "any"
DIRECTIONS = (INGRESS, EGRESS)
DSCP_MARKS = (0, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34, 36, 38, 40, 44, 46,
              48, 56)

BANDWIDTH_LIMIT = "bandwidth_limit"
DSCP_MARKING = "dscp_marking"
MINIMUM_BANDWIDTH = "minimum_bandwidth"
MINIMUM_PACKET_RATE = "minimum_packet_rate"
PACKET_RATE_LIMIT = "packet_rate_limit"

# The aliases of the QoS plugin, ``qos`` first (extension drivers list it alone).
DESCRIPTORS = [described(alias) for alias in (
    "qos", "qos-bw-limit-direction", "qos-bw-minimum-ingress", "qos-default",
    "qos-port-network-policy", "qos-pps-minimum", "qos-pps-minimum-rule-alias", "qos-pps",
    "qos-rule-type-details", "qos-rule-type-filter", "qos-rules-alias")]
# ``resource_request`` of ports, computed from the minimum rules.
RESOURCE_REQUEST_DESCRIPTORS = [described(alias) for alias in (
    "port-resource-request", "port-resource-request-groups")]

POLICIES = "policies"  # the collection's key in the resource map and in JSON
POLICY_KEY = "qos_policy_id"  # a rule's parent


one_of = v.one_of


def _to_int(value: Any) -> int:
    """``convert_to_int``: failures are "Invalid input for operation"."""
    if isinstance(value, bool):
        return int(value)
    try:
        return int(value)
    except (TypeError, ValueError):
        raise v.NotConvertible(f"'{value}' is not an integer") from None


def _in_range(value: Any) -> int:
    bounded: int = v.integer(0, INT_MAX)(_to_int(value))
    return bounded


@dataclass(frozen=True)
class Param:
    """A parameter range or set a QoS backend supports (``qos-rule-type-details``)."""

    kind: str  # "range" or "choices"
    values: tuple[Any, ...]

    def accepts(self, value: Any) -> bool:
        if self.kind == "range":
            return value is not None and self.values[0] <= value <= self.values[1]
        return value in self.values

    def describe(self, name: str) -> dict[str, Any]:
        values: Any = ({"start": self.values[0], "end": self.values[1]}
                       if self.kind == "range" else list(self.values))
        return {"parameter_name": name, "parameter_values": values,
                "parameter_type": self.kind}


def value_range(lo: int = 0, hi: int = INT_MAX) -> Param:
    return Param("range", (lo, hi))


def choices(*values: Any) -> Param:
    return Param("choices", tuple(values))


@dataclass(frozen=True)
class RuleType:
    name: str
    # value fields in upstream's display order: name -> default (UNSET: required)
    fields: dict[str, Any]
    directions: tuple[str, ...] = ()  # empty: the type has no direction
    validators: dict[str, v.Validator] = field(default_factory=dict)

    @property
    def singular(self) -> str:
        return f"{self.name}_rule"

    @property
    def plural(self) -> str:
        return f"{self.name}_rules"

    @property
    def alias_singular(self) -> str:
        return f"alias_{self.singular}"

    @property
    def alias_plural(self) -> str:
        return f"alias_{self.plural}"

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(self.fields) + (("direction",) if self.directions else ())

    def attributes(self, creating: bool = True) -> list[Attribute]:
        out = [attr("id", v.uuid, is_filter=True, is_sort_key=True, convert_filter=str)]
        for name, default in self.fields.items():
            check = self.validators.get(name, _in_range)
            out.append(attr(name, check, default=default, allow_post=creating, allow_put=True,
                            is_filter=True, is_sort_key=True, convert_filter=v.filter_int))
        if self.directions:
            out.append(attr("direction", one_of(*self.directions), default=EGRESS,
                            allow_post=creating, allow_put=True, is_filter=True,
                            is_sort_key=True))
        return out


RULE_TYPES: dict[str, RuleType] = {r.name: r for r in (
    RuleType(BANDWIDTH_LIMIT, {"max_kbps": UNSET, "max_burst_kbps": 0}, DIRECTIONS),
    RuleType(DSCP_MARKING, {"dscp_mark": UNSET},
             validators={"dscp_mark": one_of(*DSCP_MARKS, convert=_to_int)}),
    RuleType(MINIMUM_BANDWIDTH, {"min_kbps": UNSET}, DIRECTIONS),
    RuleType(MINIMUM_PACKET_RATE, {"min_kpps": UNSET}, (ANY, *DIRECTIONS)),
    RuleType(PACKET_RATE_LIMIT, {"max_kpps": UNSET, "max_burst_kpps": 0}, DIRECTIONS),
)}
# Types that have a ``qos-rules-alias`` collection in upstream 29.
ALIASED = (BANDWIDTH_LIMIT, DSCP_MARKING, MINIMUM_BANDWIDTH, MINIMUM_PACKET_RATE)


POLICY = resource(
    "policy", POLICIES,
    *standard_attributes(),
    attr("shared", v.boolean, default=False, allow_post=True, allow_put=True,
         is_filter=True, convert_filter=v.filter_bool),
    # ``qos-default``: the project's default policy (one per project).
    attr("is_default", v.boolean, default=False, allow_post=True, allow_put=True,
         is_filter=True, convert_filter=v.filter_bool),
    attr("rules"),
    attr("tags", v.list_of(v.string(255)), default=[], allow_post=True),
    url_name="qos/policies",
)


def _rule(rule_type: RuleType) -> ResourceDef:
    """A rule type under its policy: ``/v2.0/qos/policies/{id}/<type>_rules``."""
    return resource(
        rule_type.singular, rule_type.plural,
        *rule_type.attributes(), attr(POLICY_KEY, is_visible=False),
        parent=POLICIES, parent_key=POLICY_KEY, has_tags=False,
        policy_name=f"policy_{rule_type.singular}")


def _alias_rule(rule_type: RuleType) -> ResourceDef:
    """``qos-rules-alias``: a rule by id alone (GET, PUT, DELETE)."""
    return resource(
        rule_type.alias_singular, rule_type.alias_plural,
        *rule_type.attributes(creating=False), attr(POLICY_KEY, is_visible=False),
        # The policy's owner, for ``rule:ext_parent_owner``; never shown.
        attr("ext_parent:project_id", is_visible=False),
        has_tags=False, url_name=f"qos/{rule_type.alias_plural}")


# One collection per rule type, generated from its entry.
RULES = tuple(_rule(rule_type) for rule_type in RULE_TYPES.values())
ALIAS_RULES = tuple(_alias_rule(RULE_TYPES[name]) for name in ALIASED)


def _flag(raw: str) -> bool:
    try:
        return v.boolean(raw)
    except v.Invalid as exc:
        raise errors.InvalidInput(error_message=str(exc)) from None


# ``/v2.0/qos/rule-types``: what the loaded backends can enforce.
RULE_TYPE = resource(
    "rule_type", "rule_types",
    attr("type"),
    attr("drivers"),  # ``qos-rule-type-details``
    # ``qos-rule-type-filter``
    attr("all_rules", is_filter=True, is_visible=False, convert_filter=_flag),
    attr("all_supported", is_filter=True, is_visible=False, convert_filter=_flag),
    has_tags=False, url_name="qos/rule-types", primary_key="type",
)

RESOURCES = (POLICY, RULE_TYPE, *RULES, *ALIAS_RULES)

RBAC_OBJECT_TYPE = "qos_policy"


def _rbac_object_type(value: Any) -> str:
    """RBAC's ``object_type`` once QoS policies can be shared."""
    if isinstance(value, str) and value in (*rbac.OBJECT_TYPES, RBAC_OBJECT_TYPE):
        return value
    raise v.NotConvertible(f"'{value}' is not a valid RBAC object type")


# What the QoS plugin adds to ``rbac_policies``: its object type.
RBAC_QOS_POLICY: AttributeMap = {"rbac_policies": [
    attr("object_type", _rbac_object_type, allow_post=True, enforce_policy=True,
         is_filter=True, is_sort_key=True)]}

# What the ``qos`` extension driver adds: a policy of a network's or a port's own,
# and, on ports, the policy their network has.
POLICY_ID = "qos_policy_id"
NETWORK_POLICY_ID = "qos_network_policy_id"
RESOURCE_REQUEST: AttributeMap = {"ports": [attr("resource_request")]}
QOS_POLICY_ID: AttributeMap = {
    "networks": [attr(POLICY_ID, v.or_none(v.uuid), default=None, allow_post=True,
                      allow_put=True, enforce_policy=True)],
    "ports": [attr(POLICY_ID, v.or_none(v.uuid), default=None, allow_post=True,
                   allow_put=True, enforce_policy=True),
              attr(NETWORK_POLICY_ID)],
}

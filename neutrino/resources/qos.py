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
from neutrino.resources import validators as v
from neutrino.resources.attributes import (UNSET, Attribute, ResourceDef, attr,
                                           standard_attributes)
from neutrino.resources.extensions import ExtensionDescriptor

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

_DESCRIPTORS = [
    ("qos", "Quality of Service", "The Quality of Service extension.",
     "2015-06-08T10:00:00-00:00"),
    ("qos-bw-limit-direction", "Direction for QoS bandwidth limit rule",
     "Allow to configure QoS bandwidth limit rule with specific direction: ingress or egress",
     "2017-04-10T10:00:00-00:00"),
    ("qos-bw-minimum-ingress", "Ingress direction for QoS minimum bandwidth rule",
     "Allow to configure QoS minumum bandwidth rule with ingress direction.",
     "2018-07-09T10:00:00-00:00"),
    ("qos-default", "QoS default policy", "Expose the QoS default policy per project",
     "2017-041-06T10:00:00-00:00"),
    ("qos-port-network-policy", "QoS port network policy ID",
     "Adds a the QoS network ID to the port definition", "2019-11-01T10:00:00-00:00"),
    ("qos-pps-minimum", "QoS minimum packet rate rule",
     "Allow to configure QoS minimum packet rate rule.", "2021-07-14T10:00:00-00:00"),
    ("qos-pps-minimum-rule-alias", "QoS minimum packet rate rule alias",
     "API to enable GET, PUT and DELETE operations on QoS minimum packet rate rule without "
     "specifying policy ID", "2021-10-22T10:00:00-00:00"),
    ("qos-pps", "QoS Rule Type Packet per Second Extension",
     "Add QoS Rule Type Packet per Second", "2021-05-12T10:00:00-00:00"),
    ("qos-rule-type-details", "Details of QoS rule types",
     "Expose details about QoS rule types supported by loaded backend drivers",
     "2017-06-22T10:00:00-00:00"),
    ("qos-rule-type-filter", "Allow to filter the list of QoS rule types",
     "Allows to filter the QoS rule type list adding two new flags. \"all_rules\" prints all "
     "implemented QoS rule types.\"all_supported\" prints all supported QoS rule types by "
     "the loaded mechanism drivers", "2022-02-02T10:00:00-00:00"),
    ("qos-rules-alias", "Quality of Service rules alias API",
     "API to enable GET, PUT and DELETE operations on QoS policy rules without specifying "
     "policy ID", "2018-10-07T10:00:00-00:00"),
]
# ``GET /v2.0/extensions`` entries, as upstream words them.
DESCRIPTORS = [ExtensionDescriptor(*d) for d in _DESCRIPTORS]

POLICIES = "policies"  # the collection's key in the resource map and in JSON
POLICY_KEY = "qos_policy_id"  # a rule's parent


def one_of(*allowed: Any, convert: v.Validator | None = None) -> v.Validator:
    """Upstream's ``type:values`` check and its wording ("x is not in valid_values")."""
    def check(value: Any) -> Any:
        if convert is not None:
            value = convert(value)
        if isinstance(value, bool) or value not in allowed:
            raise v.Invalid(f"{value} is not in valid_values")
        return value
    return check


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


def policy() -> ResourceDef:
    r = ResourceDef("policy", POLICIES, url_name="qos/policies")
    r.add(*standard_attributes())
    r.add(
        attr("shared", v.boolean, default=False, allow_post=True, allow_put=True,
             is_filter=True, convert_filter=v.filter_bool),
        # ``qos-default``: the project's default policy (one per project).
        attr("is_default", v.boolean, default=False, allow_post=True, allow_put=True,
             is_filter=True, convert_filter=v.filter_bool),
        attr("rules"),
        attr("tags", v.list_of(v.string(255)), default=[], allow_post=True),
    )
    return r


def rule(rule_type: RuleType) -> ResourceDef:
    """A rule type under its policy: ``/v2.0/qos/policies/{id}/<type>_rules``."""
    r = ResourceDef(rule_type.singular, rule_type.plural, parent=POLICIES, parent_key=POLICY_KEY,
                    has_tags=False, policy_name=f"policy_{rule_type.singular}")
    r.add(*rule_type.attributes(), attr(POLICY_KEY, is_visible=False))
    return r


def alias_rule(rule_type: RuleType) -> ResourceDef:
    """``qos-rules-alias``: a rule by id alone (GET, PUT, DELETE)."""
    r = ResourceDef(rule_type.alias_singular, rule_type.alias_plural, has_tags=False,
                    url_name=f"qos/{rule_type.alias_plural}")
    r.add(*rule_type.attributes(creating=False), attr(POLICY_KEY, is_visible=False),
          # The policy's owner, for ``rule:ext_parent_owner``; never shown.
          attr("ext_parent:project_id", is_visible=False))
    return r


def _flag(raw: str) -> bool:
    try:
        return v.boolean(raw)
    except v.Invalid as exc:
        raise errors.InvalidInput(error_message=str(exc)) from None


def rule_type_resource() -> ResourceDef:
    """``/v2.0/qos/rule-types``: what the loaded backends can enforce."""
    r = ResourceDef("rule_type", "rule_types", has_tags=False, url_name="qos/rule-types")
    r.add(attr("type"),
          attr("drivers"),  # ``qos-rule-type-details``
          # ``qos-rule-type-filter``
          attr("all_rules", is_filter=True, is_visible=False, convert_filter=_flag),
          attr("all_supported", is_filter=True, is_visible=False, convert_filter=_flag))
    return r

"""Which QoS rules the loaded mechanism drivers can enforce, and where.

Mechanism drivers declare their QoS support as data (``qos_rules``,
``qos_vif_types``, ``qos_vnic_types`` on the driver class), so the answers
here need the configured driver classes only, never an agent: the rule
types listed by ``/v2.0/qos/rule-types`` (those every QoS-capable driver
supports, as upstream; ``all_supported``: those any supports), their
details, and whether a rule can be applied to a port or a network.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from neutrino.plugins import loader
from neutrino.resources import qos

NAMESPACE = "neutrino.ml2.mechanism_drivers"
# A port without a working binding is judged by its vnic_type.
UNBOUND_VIF_TYPES = ("unbound", "binding_failed")


@dataclass(frozen=True)
class Backend:
    """One QoS-capable mechanism driver, by its configured name."""

    name: str
    rules: Mapping[str, Mapping[str, qos.Param]]
    vif_types: tuple[str, ...]
    vnic_types: tuple[str, ...]

    def supports(self, rule: Mapping[str, Any]) -> bool:
        params = self.rules.get(rule["type"])
        if not params:
            return False
        return all(p.accepts(rule.get(name)) for name, p in params.items())

    def serves(self, vif_type: str, vnic_type: str) -> bool:
        if vif_type in UNBOUND_VIF_TYPES:
            return vnic_type in self.vnic_types
        return vif_type in self.vif_types


class QosSupport:
    def __init__(self, backends: list[Backend]) -> None:
        self.backends = backends

    @classmethod
    def from_conf(cls, conf: Any) -> "QosSupport":
        """The QoS-capable drivers of ``[ml2] mechanism_drivers`` (already
        checked at start-up by the mechanism manager), in configured order."""
        backends = []
        for name in dict.fromkeys(n.strip() for n in conf.ml2.mechanism_drivers if n.strip()):
            driver = loader.load_class(NAMESPACE, name)
            if getattr(driver, "qos_rules", None):
                backends.append(Backend(name, driver.qos_rules, tuple(driver.qos_vif_types),
                                        tuple(driver.qos_vnic_types)))
        return cls(backends)

    def rule_types(self, all_supported: bool = False, all_rules: bool = False) -> list[str]:
        if all_rules:
            return list(qos.RULE_TYPES)
        if not self.backends:
            return []
        sets = [set(b.rules) for b in self.backends]
        wanted = set.union(*sets) if all_supported else set.intersection(*sets)
        return [name for name in qos.RULE_TYPES if name in wanted]

    def details(self, rule_type: str) -> list[dict[str, Any]]:
        return [{"name": b.name,
                 "supported_parameters": [p.describe(n) for n, p in b.rules[rule_type].items()]}
                for b in self.backends if rule_type in b.rules]

    def port_accepts(self, rule: Mapping[str, Any], vif_type: str, vnic_type: str) -> bool:
        return any(b.serves(vif_type, vnic_type) and b.supports(rule) for b in self.backends)

    def network_accepts(self, rule: Mapping[str, Any]) -> bool:
        return any(b.supports(rule) for b in self.backends)

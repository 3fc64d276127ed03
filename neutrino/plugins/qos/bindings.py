"""Which networks and ports a QoS policy applies to, and whether it can.

A port's policy is its own, else its network's; ports the network itself
owns (``network:*``: DHCP, router interfaces) do not take the network's
policy, except router gateways, as upstream applies rules. A policy can be
attached only where some loaded QoS backend can enforce every rule: on a
network any backend will do; on a port, one that serves the port's binding
(its ``vif_type`` once bound, its ``vnic_type`` before).
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.db import tables as t
from neutrino.plugins.qos.policies import load_rules
from neutrino.plugins.qos.support import QosSupport
from neutrino.resources import qos

NB = t.qos_network_policy_bindings
PB = t.qos_port_policy_bindings
# Built once: every port create asks for its network's policy.
_NETWORK_POLICY = sa.select(NB.c.policy_id).where(NB.c.network_id == sa.bindparam("network"))
_PORT_POLICY = sa.select(PB.c.policy_id).where(PB.c.port_id == sa.bindparam("port"))
MINIMUM_TYPES = (qos.MINIMUM_BANDWIDTH, qos.MINIMUM_PACKET_RATE)
GATEWAY_OWNERS = ("network:router_gateway", "network:floatingip_agent_gateway")


def inherits_network_policy(device_owner: str | None) -> bool:
    owner = device_owner or ""
    return not owner.startswith("network:") or owner in GATEWAY_OWNERS


def _inheriting(ports: Any) -> Any:
    """SQL: ports of ``ports`` that take their network's policy."""
    return sa.or_(~ports.c.device_owner.like("network:%"),
                  ports.c.device_owner.in_(GATEWAY_OWNERS))


def rules_of(conn: Connection, policy_id: str) -> list[dict[str, Any]]:
    return load_rules(conn, [policy_id])[policy_id]


def _port_kinds(conn: Connection, port_filter: Any) -> list[tuple[str, str, str]]:
    """(port id, vif_type, vnic_type) for each distinct binding kind among
    the ports ``port_filter`` selects: rules are judged per kind, not per port."""
    p, b = t.ports, t.ml2_port_bindings
    rows = conn.execute(
        sa.select(p.c.id, b.c.vif_type, b.c.vnic_type)
        .select_from(p.outerjoin(b, b.c.port_id == p.c.id))
        .where(port_filter).order_by(p.c.id))
    kinds: dict[tuple[str, str], str] = {}
    for row in rows:
        kinds.setdefault((row.vif_type or "unbound", row.vnic_type or "normal"), row.id)
    return [(pid, vif, vnic) for (vif, vnic), pid in kinds.items()]


def check_ports(support: QosSupport, rules: Iterable[Mapping[str, Any]],
                kinds: list[tuple[str, str, str]]) -> None:
    for rule in rules:
        for port_id, vif_type, vnic_type in kinds:
            if not support.port_accepts(rule, vif_type, vnic_type):
                raise errors.QosRuleNotSupported(rule_type=rule["type"], port_id=port_id)


def check_network(support: QosSupport, rules: Iterable[Mapping[str, Any]],
                  network_id: str) -> None:
    for rule in rules:
        if not support.network_accepts(rule):
            raise errors.QosRuleNotSupportedByNetwork(rule_type=rule["type"],
                                                      network_id=network_id)


def ports_using(conn: Connection, policy_id: str) -> list[tuple[str, str, str]]:
    """Binding kinds of the ports the policy applies to, directly or through
    their network."""
    p = t.ports
    own = sa.select(PB.c.port_id).where(PB.c.policy_id == policy_id)
    nets = sa.select(NB.c.network_id).where(NB.c.policy_id == policy_id)
    through_network = sa.and_(p.c.network_id.in_(nets), p.c.id.not_in(sa.select(PB.c.port_id)),
                              _inheriting(p))
    return _port_kinds(conn, sa.or_(p.c.id.in_(own), through_network))


def network_ports_inheriting(conn: Connection, network_id: str) -> list[tuple[str, str, str]]:
    p = t.ports
    return _port_kinds(conn, sa.and_(p.c.network_id == network_id,
                                     p.c.id.not_in(sa.select(PB.c.port_id)), _inheriting(p)))


def network_policy(conn: Connection, network_id: str) -> str | None:
    return conn.execute(_NETWORK_POLICY, {"network": network_id}).scalar()


def port_policy(conn: Connection, port_id: str) -> str | None:
    return conn.execute(_PORT_POLICY, {"port": port_id}).scalar()


def port_binding(conn: Connection, port_id: str) -> tuple[str, str]:
    b = t.ml2_port_bindings
    row = conn.execute(sa.select(b.c.vif_type, b.c.vnic_type)
                       .where(b.c.port_id == port_id)).first()
    return (row.vif_type, row.vnic_type) if row is not None else ("unbound", "normal")


def instance_port_using(conn: Connection, policy_id: str) -> str | None:
    """A port owned by an instance (``compute:*``) that the policy applies
    to, directly or through its network (upstream counts every port of the
    network without a policy of its own), if any."""
    p = t.ports
    own = sa.select(PB.c.port_id).where(PB.c.policy_id == policy_id)
    nets = sa.select(NB.c.network_id).where(NB.c.policy_id == policy_id)
    through_network = sa.and_(p.c.network_id.in_(nets), p.c.id.not_in(sa.select(PB.c.port_id)))
    return conn.execute(sa.select(p.c.id).where(
        sa.or_(p.c.id.in_(own), through_network),
        p.c.device_owner.startswith("compute:")).limit(1)).scalar()


def refuse_minimum_rule_change(conn: Connection, policy_id: str, rule_type: str) -> None:
    """Instances' allocations in Placement were made from the policy's
    minimum rules: upstream refuses to change those rules under them."""
    if rule_type in MINIMUM_TYPES and instance_port_using(conn, policy_id) is not None:
        raise errors.NotImplementedError(
            "Cannot update QoS policies/rules backed by resources tracked in Placement")

"""QoS rules: one handler for every rule type, and the rules between rules.

A policy holds at most one rule per type and direction; a bandwidth limit
may not be below a minimum bandwidth of the same direction (nor the other
way round); minimum packet rate rules are either direction-less (``any``)
or directional, never both. A change is then checked against every port
the policy applies to (``QosRuleNotSupported``), and the policy's revision
advances, all in the caller's transaction under a lock on the policy.
"""
from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection
from sqlalchemy import exc as sa_exc

from neutrino import errors
from neutrino.db import tables as t
from neutrino.db.engine import RetryRequest
from neutrino.plugins import store
from neutrino.plugins.qos import bindings
from neutrino.plugins.qos.policies import P, rule_dict
from neutrino.plugins.qos.support import QosSupport
from neutrino.resources import qos

R = t.qos_rules


def _conflicts(policy_id: str, rule: dict[str, Any], others: list[dict[str, Any]]) -> None:
    """Upstream's checks, in its order: parameters, then duplicates."""
    for other in others:
        if other["type"] == qos.DSCP_MARKING or other.get("direction") != rule.get("direction"):
            continue
        if (rule["type"] == qos.BANDWIDTH_LIMIT and other["type"] == qos.MINIMUM_BANDWIDTH
                and other["min_kbps"] > rule["max_kbps"]):
            raise errors.QoSRuleParameterConflict(
                rule_value=rule["max_kbps"], policy_id=policy_id,
                existing_rule=other["type"], existing_value=other["min_kbps"])
        if (rule["type"] == qos.MINIMUM_BANDWIDTH and other["type"] == qos.BANDWIDTH_LIMIT
                and other["max_kbps"] < rule["min_kbps"]):
            raise errors.QoSRuleParameterConflict(
                rule_value=rule["min_kbps"], policy_id=policy_id,
                existing_rule=other["type"], existing_value=other["max_kbps"])
    if rule["type"] == qos.MINIMUM_PACKET_RATE:
        for other in others:
            if other["type"] != qos.MINIMUM_PACKET_RATE:
                continue
            if (rule["direction"] == qos.ANY) != (other["direction"] == qos.ANY):
                raise errors.QoSRuleParameterConflict(
                    rule_value=rule["direction"], policy_id=policy_id,
                    existing_rule=other["type"], existing_value=other["direction"])
    for other in others:
        if other["type"] == rule["type"] and other.get("direction") == rule.get("direction"):
            raise errors.QoSRulesConflict(new_rule_type=rule["type"], rule_id=other["id"],
                                          policy_id=policy_id)


class Rules:
    table = R

    def __init__(self, support: QosSupport) -> None:
        self.support = support

    def _policy_rules(self, conn: Connection, policy_id: str) -> list[dict[str, Any]]:
        store.get_row(conn, P, policy_id, lambda: errors.QosPolicyNotFound(policy_id=policy_id),
                      for_update=True)
        return bindings.rules_of(conn, policy_id)

    def _settle(self, conn: Connection, policy_id: str) -> None:
        """After a change: every port the policy applies to must still take
        its rules; then the policy's revision advances."""
        bindings.check_ports(self.support, bindings.rules_of(conn, policy_id),
                             bindings.ports_using(conn, policy_id))
        store.bump(conn, P, policy_id)

    def create(self, conn: Connection, rtype: qos.RuleType, data: dict[str, Any]) -> str:
        policy_id = data[qos.POLICY_KEY]
        existing = self._policy_rules(conn, policy_id)
        rule = {"type": rtype.name, **{c: data[c] for c in rtype.columns}}
        _conflicts(policy_id, rule, existing)
        rid = store.new_id()
        values = {c: data[c] for c in rtype.columns}
        try:
            with conn.begin_nested():
                conn.execute(sa.insert(R).values(id=rid, qos_policy_id=policy_id,
                                                 rule_type=rtype.name, created_at=store.now(),
                                                 **values))
        except sa_exc.IntegrityError:
            raise RetryRequest() from None  # a concurrent twin: the retry reports it
        self._settle(conn, policy_id)
        return rid

    def row(self, conn: Connection, rtype: qos.RuleType, rid: str, policy_id: str = "") -> Any:
        found = conn.execute(sa.select(R).where(R.c.id == rid,
                                                R.c.rule_type == rtype.name)).first()
        if found is None:
            raise errors.QosRuleNotFound(rule_id=rid, policy_id=policy_id)
        return found

    def get(self, conn: Connection, rtype: qos.RuleType, rid: str) -> dict[str, Any]:
        return rule_dict(self.row(conn, rtype, rid))

    def list(self, conn: Connection, rtype: qos.RuleType,
             query: store.ListQuery) -> tuple[list[dict[str, Any]], bool]:
        clauses = store.column_clauses(R, query.filters, {})
        clauses.append(R.c.rule_type == rtype.name)
        rows, more = store.paged_select(conn, R, clauses, query)
        return [rule_dict(r) for r in rows], more

    def update(self, conn: Connection, rtype: qos.RuleType, rid: str,
               data: dict[str, Any]) -> None:
        policy_id = self.row(conn, rtype, rid).qos_policy_id
        existing = self._policy_rules(conn, policy_id)
        current = next(r for r in existing if r["id"] == rid)
        values = {c: data[c] for c in rtype.columns if c in data}
        rule = {**current, **values}
        _conflicts(policy_id, rule, [r for r in existing if r["id"] != rid])
        if values:
            conn.execute(sa.update(R).where(R.c.id == rid).values(**values))
        self._settle(conn, policy_id)

    def delete(self, conn: Connection, rtype: qos.RuleType, rid: str) -> None:
        policy_id = self.row(conn, rtype, rid).qos_policy_id
        self._policy_rules(conn, policy_id)
        conn.execute(sa.delete(R).where(R.c.id == rid))
        store.bump(conn, P, policy_id)

"""Firewall policies: their ordered rules, sharing, and writes.

A policy's rules are kept with their 1-based positions; ``insert_rule``
puts one at the top, or before or after a rule the policy holds, and
``remove_rule`` takes one out, as upstream. A policy may hold its own
project's rules and shared ones; a shared policy only shared ones. Any
change clears ``audited`` unless the change sets it. The two policies of a
project's default group are named ``default ingress``/``default egress``:
no other may take those names, and they are not changed through the API.
"""
from __future__ import annotations

import uuid
from typing import Any, Sequence

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.plugins import store
from neutrino.plugins.firewall import rows
from neutrino.resources import firewall as res

P, PR, R = rows.P, rows.PR, rows.R
DEFAULT_NAMES = (res.DEFAULT_FWP_INGRESS, res.DEFAULT_FWP_EGRESS)


def _check_rules(conn: Connection, ctx: Context, policy: dict[str, Any],
                 rule_ids: Sequence[str]) -> None:
    """Each rule exists for the caller and may be in this policy."""
    for rule_id in rule_ids:
        rule = conn.execute(sa.select(R).where(R.c.id == rule_id)).first()
        if rule is None or not rows.sees(ctx, rule):
            raise rows.rule_not_found(rule_id)
        if policy["shared"] and not rule.shared:
            raise errors.FirewallRuleSharingConflict(firewall_rule_id=rule_id,
                                                     firewall_policy_id=policy["id"])
        if not rule.shared and rule.project_id != policy["project_id"]:
            raise errors.FirewallRuleConflict(firewall_rule_id=rule_id,
                                              project_id=rule.project_id)


def _set_rules(conn: Connection, policy_id: str, rule_ids: Sequence[str]) -> None:
    conn.execute(sa.delete(PR).where(PR.c.firewall_policy_id == policy_id))
    if rule_ids:
        conn.execute(sa.insert(PR), [{"firewall_policy_id": policy_id, "firewall_rule_id": r,
                                      "position": i} for i, r in enumerate(rule_ids, 1)])


def create(conn: Connection, ctx: Context, data: dict[str, Any], default: bool = False) -> str:
    if not default and data.get("name") in DEFAULT_NAMES:
        raise errors.FirewallDefaultParameterExists(resource_type="Firewall Policy",
                                                    name=data["name"])
    row = store.standard_row(ctx.project_id, data, revision=0)
    row.update(shared=bool(data.get("shared")), audited=bool(data.get("audited")))
    rule_ids = data.get("firewall_rules") or []
    _check_rules(conn, ctx, {**row}, rule_ids)
    conn.execute(sa.insert(P).values(**row))
    _set_rules(conn, row["id"], rule_ids)
    if data.get("tags"):
        store.tag_new(conn, row["id"], data["tags"])
    return str(row["id"])


def update(conn: Connection, ctx: Context, pid: str, data: dict[str, Any],
           revision: int | None) -> None:
    current = rows.row(conn, "firewall_policies", pid, for_update=True)
    if current.name in DEFAULT_NAMES:
        raise errors.FirewallDefaultObjectUpdateRestricted(resource_type="Firewall Group",
                                                           resource_id=pid)
    if data.get("name") in DEFAULT_NAMES:
        raise errors.FirewallDefaultParameterExists(resource_type="Firewall Policy",
                                                    name=data["name"])
    store.check_revision(conn, P, pid, revision)
    shared = data.get("shared", bool(current.shared))
    if data.get("shared") is False:
        for group in rows.groups_with_policies(conn, [pid]):
            if group.project_id != current.project_id:
                raise errors.FirewallPolicyInUse(firewall_policy_id=pid)
    if "firewall_rules" in data:
        _check_rules(conn, ctx, {"id": pid, "shared": shared,
                                 "project_id": current.project_id}, data["firewall_rules"])
        _set_rules(conn, pid, data["firewall_rules"])
    elif shared:
        for rule_id in rows.policy_rules(conn, [pid])[pid]:
            rule = rows.row(conn, "firewall_rules", rule_id)
            if not rule.shared:
                raise errors.FirewallPolicySharingConflict(firewall_rule_id=rule_id,
                                                           firewall_policy_id=pid)
    values = {k: data[k] for k in ("name", "description", "shared", "audited") if k in data}
    values.setdefault("audited", False)
    store.bump(conn, P, pid, values)


def delete(conn: Connection, pid: str, revision: int | None) -> None:
    rows.row(conn, "firewall_policies", pid, for_update=True)
    if rows.groups_with_policies(conn, [pid]):
        raise errors.FirewallPolicyInUse(firewall_policy_id=pid)
    store.check_revision(conn, P, pid, revision)
    store.delete_tags(conn, pid)
    conn.execute(sa.delete(P).where(P.c.id == pid))


def _rule_info(body: Any) -> str:
    """Upstream's checks of an insert/remove body: the rule id, a UUID."""
    if not isinstance(body, dict) or "firewall_rule_id" not in body:
        raise errors.FirewallRuleInfoMissing()
    rule_id = body["firewall_rule_id"]
    try:
        uuid.UUID(str(rule_id))
    except ValueError:
        raise rows.rule_not_found(str(rule_id)) from None
    return str(rule_id)


def _not_associated(rule_id: str, pid: str) -> errors.NeutronException:
    return errors.FirewallRuleNotAssociatedWithPolicy(firewall_rule_id=rule_id,
                                                      firewall_policy_id=pid)


def insert_rule(conn: Connection, ctx: Context, pid: str, body: Any) -> None:
    rule_id = _rule_info(body)
    policy = rows.row(conn, "firewall_policies", pid, for_update=True)
    order = rows.policy_rules(conn, [pid])[pid]
    if rule_id in order:
        raise errors.FirewallRuleAlreadyAssociated(firewall_rule_id=rule_id,
                                                   firewall_policy_id=pid)
    rule = conn.execute(sa.select(R).where(R.c.id == rule_id)).first()
    if rule is None or not rows.sees(ctx, rule):
        raise rows.rule_not_found(rule_id)
    if not rule.shared and rule.project_id != policy.project_id:
        raise errors.FirewallRuleConflict(firewall_rule_id=rule_id, project_id=rule.project_id)
    before, after = body.get("insert_before"), body.get("insert_after")
    if before:
        if before not in order:
            raise _not_associated(before, pid)
        position = order.index(before)
    elif after:
        if after not in order:
            raise _not_associated(after, pid)
        position = order.index(after) + 1
    else:
        position = 0
    order.insert(position, rule_id)
    _set_rules(conn, pid, order)
    conn.execute(sa.update(P).where(P.c.id == pid).values(audited=False))


def remove_rule(conn: Connection, ctx: Context, pid: str, body: Any) -> None:
    rule_id = _rule_info(body)
    rows.row(conn, "firewall_policies", pid, for_update=True)
    rule = conn.execute(sa.select(R).where(R.c.id == rule_id)).first()
    if rule is None or not rows.sees(ctx, rule):
        raise rows.rule_not_found(rule_id)
    order = rows.policy_rules(conn, [pid])[pid]
    if rule_id not in order:
        raise _not_associated(rule_id, pid)
    order.remove(rule_id)
    _set_rules(conn, pid, order)
    conn.execute(sa.update(P).where(P.c.id == pid).values(audited=False))

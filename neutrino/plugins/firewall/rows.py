"""FWaaS rows as the API shows them, and who may see or use them.

A rule, policy or group is seen by its project, by admins and, when
``shared``, by every project (the API's ``get_*`` rules decide what is
shown; the plugin uses the same test where upstream looks one up with the
caller's context). A rule keeps each port range as its two ends, shown
as ``N`` or ``N:M`` as upstream writes them.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import sqlalchemy as sa
from sqlalchemy import Connection, Table

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import store

R = t.firewall_rules_v2
P = t.firewall_policies_v2
PR = t.firewall_policy_rule_associations_v2
G = t.firewall_groups_v2
GP = t.firewall_group_port_associations_v2
D = t.default_firewall_groups


def rule_not_found(rid: str) -> errors.NeutronException:
    return errors.FirewallRuleNotFound(firewall_rule_id=rid)


def policy_not_found(rid: str) -> errors.NeutronException:
    return errors.FirewallPolicyNotFound(firewall_policy_id=rid)


def group_not_found(rid: str) -> errors.NeutronException:
    return errors.FirewallGroupNotFound(firewall_id=rid)


NOT_FOUND: dict[str, Callable[[str], errors.NeutronException]] = {
    "firewall_rules": rule_not_found, "firewall_policies": policy_not_found,
    "firewall_groups": group_not_found}
TABLES: dict[str, Table] = {"firewall_rules": R, "firewall_policies": P, "firewall_groups": G}


def sees(ctx: Context, row: Any) -> bool:
    return bool(ctx.is_admin or row.project_id == ctx.project_id or row.shared)


def visible_clause(ctx: Context, table: Table) -> Any:
    """None for admins; else the caller's own rows and the shared ones."""
    if ctx.is_admin:
        return None
    return sa.or_(table.c.project_id == ctx.project_id, table.c.shared.is_(True))


def row(conn: Connection, plural: str, rid: str, for_update: bool = False) -> Any:
    return store.get_row(conn, TABLES[plural], rid, lambda: NOT_FOUND[plural](rid),
                         for_update=for_update)


def seen_row(conn: Connection, ctx: Context, plural: str, rid: str,
             for_update: bool = False) -> Any:
    """The row if the caller may see it, else the resource's 404."""
    found = row(conn, plural, rid, for_update)
    if not sees(ctx, found):
        raise NOT_FOUND[plural](rid)
    return found


# -- port ranges -----------------------------------------------------------------------

def port_ends(text: str | None) -> tuple[int | None, int | None]:
    """``N`` or ``N:M`` as its two ends; a reversed range is refused as upstream."""
    if not text:
        return None, None
    low, _, high = text.partition(":")
    high = high or low
    if int(low) > int(high):
        raise errors.FirewallRuleInvalidPortValue(port=f"{low}:{high}")
    return int(low), int(high)


def port_text(low: int | None, high: int | None) -> str | None:
    if low is None:
        return None
    return str(low) if low == high else f"{low}:{high}"


# -- dicts -------------------------------------------------------------------------------

def rule_dict(r: Any) -> dict[str, Any]:
    return {**store.standard_dict(r), "shared": bool(r.shared), "protocol": r.protocol,
            "ip_version": r.ip_version, "source_ip_address": r.source_ip_address,
            "destination_ip_address": r.destination_ip_address,
            "source_port": port_text(r.source_port_range_min, r.source_port_range_max),
            "destination_port": port_text(r.destination_port_range_min,
                                          r.destination_port_range_max),
            "action": r.action, "enabled": bool(r.enabled), "firewall_policy_id": None}


def rule_dicts(conn: Connection, rows: Sequence[Any]) -> list[dict[str, Any]]:
    tags = store.load_tags(conn, [r.id for r in rows])
    return [{**rule_dict(r), "tags": tags.get(r.id, [])} for r in rows]


def policy_rules(conn: Connection, policy_ids: Sequence[str]) -> dict[str, list[str]]:
    """Each policy's rule ids, in their order."""
    out: dict[str, list[str]] = {pid: [] for pid in policy_ids}
    for part in store.chunks(list(policy_ids)):
        for a in conn.execute(sa.select(PR).where(PR.c.firewall_policy_id.in_(part))
                              .order_by(PR.c.firewall_policy_id, PR.c.position)):
            out[a.firewall_policy_id].append(a.firewall_rule_id)
    return out


def policy_dicts(conn: Connection, rows: Sequence[Any]) -> list[dict[str, Any]]:
    ids = [r.id for r in rows]
    tags, rules = store.load_tags(conn, ids), policy_rules(conn, ids)
    return [{**store.standard_dict(r), "shared": bool(r.shared), "audited": bool(r.audited),
             "firewall_rules": rules.get(r.id, []), "tags": tags.get(r.id, [])}
            for r in rows]


def group_ports(conn: Connection, group_ids: Sequence[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {gid: [] for gid in group_ids}
    for part in store.chunks(list(group_ids)):
        for a in conn.execute(sa.select(GP).where(GP.c.firewall_group_id.in_(part))
                              .order_by(GP.c.port_id)):
            out[a.firewall_group_id].append(a.port_id)
    return out


def group_dicts(conn: Connection, rows: Sequence[Any]) -> list[dict[str, Any]]:
    ids = [r.id for r in rows]
    tags, ports = store.load_tags(conn, ids), group_ports(conn, ids)
    return [{**store.standard_dict(r), "shared": bool(r.shared),
             "admin_state_up": bool(r.admin_state_up), "status": r.status,
             "ingress_firewall_policy_id": r.ingress_firewall_policy_id,
             "egress_firewall_policy_id": r.egress_firewall_policy_id,
             "ports": ports.get(r.id, []), "tags": tags.get(r.id, [])} for r in rows]


DICTS: dict[str, Callable[[Connection, Sequence[Any]], list[dict[str, Any]]]] = {
    "firewall_rules": rule_dicts, "firewall_policies": policy_dicts,
    "firewall_groups": group_dicts}


def policies_with_rule(conn: Connection, rule_id: str) -> list[str]:
    return [r.firewall_policy_id for r in conn.execute(
        sa.select(PR.c.firewall_policy_id).where(PR.c.firewall_rule_id == rule_id)
        .order_by(PR.c.firewall_policy_id))]


def groups_with_policies(conn: Connection, policy_ids: Sequence[str]) -> list[Any]:
    if not policy_ids:
        return []
    return list(conn.execute(sa.select(G).where(sa.or_(
        G.c.ingress_firewall_policy_id.in_(list(policy_ids)),
        G.c.egress_firewall_policy_id.in_(list(policy_ids)))).order_by(G.c.id)))

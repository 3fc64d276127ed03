"""What agents are told about logs: upstream's ``sg_log_info`` dicts.

A log covers the active, loggable ports it names: its target, else the
members of its group, else every port of its project in a group. Each port
comes with the rules of the groups the log covers on it (the group named,
or all of the port's), as upstream's OVS driver reads them.
"""
from __future__ import annotations

from typing import Any, Iterable

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino.db import tables as t
from neutrino.plugins import store
from neutrino.plugins.logging.validate import loggable_on
from neutrino.resources import logging as res

L, P, B = t.logs, t.ports, t.ml2_port_bindings
SGB, SGR, SG = t.securitygroupportbindings, t.securitygrouprules, t.securitygroups
IP_PREFIX = {"ingress": "source_ip_prefix", "egress": "dest_ip_prefix"}


def log_dict(row: Any) -> dict[str, Any]:
    """A log as the API and the pushes to agents show it."""
    project = row.project_id
    return {"id": row.id, "project_id": project, "tenant_id": project, "name": row.name,
            "description": row.description, "resource_type": row.resource_type,
            "resource_id": row.resource_id, "target_id": row.target_id, "event": row.event,
            "enabled": row.enabled, "revision_number": row.revision_number,
            "created_at": store.iso(row.created_at), "updated_at": store.iso(row.updated_at)}


def _groups_of(conn: Connection, port_ids: Iterable[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    ids = list(port_ids)
    if ids:
        for row in conn.execute(sa.select(SGB.c.port_id, SGB.c.security_group_id)
                                .where(SGB.c.port_id.in_(ids))):
            out.setdefault(row.port_id, []).append(row.security_group_id)
    return out


def _rule_dict(row: Any) -> dict[str, Any]:
    rule = {"direction": row.direction, "ethertype": row.ethertype}
    for key in ("protocol", "port_range_min", "port_range_max", "remote_group_id"):
        if getattr(row, key) is not None:
            rule[key] = getattr(row, key)
    if row.remote_ip_prefix is not None:
        rule[IP_PREFIX[row.direction]] = row.remote_ip_prefix
    rule["security_group_id"] = row.security_group_id
    return rule


def _rules_of(conn: Connection, group_ids: set[str]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    if group_ids:
        for row in conn.execute(sa.select(SGR).where(SGR.c.security_group_id.in_(group_ids))
                                .order_by(SGR.c.id)):
            out.setdefault(row.security_group_id, []).append(_rule_dict(row))
    return out


def _make(conn: Connection, log: Any, port_ids: list[str]) -> dict[str, Any]:
    groups = _groups_of(conn, port_ids)
    covered = {pid: ([log.resource_id] if log.resource_id else groups.get(pid, []))
               if not log.resource_id or log.resource_id in groups.get(pid, []) else []
               for pid in port_ids}
    rules = _rules_of(conn, {g for gs in covered.values() for g in gs})
    return {"id": log.id, "event": log.event, "project_id": log.project_id,
            "ports_log": [{"port_id": pid, "security_group_rules":
                           [r for g in covered[pid] for r in rules.get(g, [])]}
                          for pid in port_ids]}


def _enabled_logs() -> Any:
    return sa.select(L).where(L.c.resource_type == res.SECURITY_GROUP, L.c.enabled)


def for_port(conn: Connection, port_id: str) -> list[dict[str, Any]]:
    """``get_sg_log_info_for_port``: the enabled logs of the port's project
    that cover it, each with this port alone."""
    port = conn.execute(sa.select(P.c.project_id).where(P.c.id == port_id)).first()
    if port is None:
        return []
    groups = _groups_of(conn, [port_id]).get(port_id, [])
    logs = conn.execute(_enabled_logs().where(
        L.c.project_id == port.project_id,
        sa.or_(L.c.target_id == port_id,
               L.c.resource_id.in_(groups) if groups else sa.false(),
               sa.and_(L.c.target_id.is_(None), L.c.resource_id.is_(None))))
        .order_by(L.c.id)).all()
    return [_make(conn, log, [port_id]) for log in logs]


def _logged_ports(conn: Connection, log: Any) -> list[str]:
    if log.target_id is not None:
        candidates = sa.select(P.c.id).where(P.c.id == log.target_id)
    elif log.resource_id is not None:
        candidates = sa.select(SGB.c.port_id).where(SGB.c.security_group_id == log.resource_id)
    else:
        candidates = (sa.select(SGB.c.port_id).join(SG, SG.c.id == SGB.c.security_group_id)
                      .where(SG.c.project_id == log.project_id))
    rows = conn.execute(
        sa.select(P.c.id, B.c.vif_type, B.c.vnic_type)
        .select_from(P.outerjoin(B, B.c.port_id == P.c.id))
        .where(P.c.id.in_(candidates), P.c.status == "ACTIVE").order_by(P.c.id)).all()
    return [r.id for r in rows if loggable_on(r.vif_type, r.vnic_type)]


def for_log_resources(conn: Connection, log_resources: list[dict[str, Any]]
                      ) -> list[dict[str, Any]]:
    """``get_sg_log_info_for_log_resources``: each log with every port it covers."""
    ids = [lr["id"] for lr in log_resources if lr.get("id")]
    rows = {r.id: r for r in conn.execute(sa.select(L).where(L.c.id.in_(ids)))} if ids else {}
    return [_make(conn, rows[i], _logged_ports(conn, rows[i])) for i in ids if i in rows]

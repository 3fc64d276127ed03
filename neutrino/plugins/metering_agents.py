"""The metering service and its agents: sync data and the casts (the RPC
endpoint is ``metering_rpc``, loaded by the RPC process only).

A label applies to every router of its project, or, when ``shared``, to
every router (upstream's label-router relation). Metering agents run beside
L3 agents: one asks ``get_sync_data_metering`` on topic ``metering_plugin``
for the enabled routers its host's L3 agent serves, each with the labels
and rules applying to it (``_metering_labels``). After a label or rule is
created or deleted, the hosts of the alive, enabled L3 agents hosting the
affected routers get upstream's casts on topic ``metering_agent``
(``add_metering_label``, ``remove_metering_label``,
``add_metering_label_rule``, ``remove_metering_label_rule``); without the
L3 plugin they go to every metering agent. Router changes are not cast, as
upstream: agents pick them up on their periodic resync.
"""
from __future__ import annotations

from typing import Any, Iterable

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino.db import tables as t
from neutrino.plugins import store
from neutrino.rpc import topics
from neutrino.rpc.casts import Casts

LABELS_KEY = "_metering_labels"  # upstream's METERING_LABEL_KEY
L3_SERVICE = "L3_ROUTER_NAT"
lb, ru, rt = t.meteringlabels.c, t.meteringlabelrules.c, t.routers.c


def rule_dict(row: Any) -> dict[str, Any]:
    return {"id": row.id, "metering_label_id": row.metering_label_id,
            "direction": row.direction, "remote_ip_prefix": row.remote_ip_prefix,
            "source_ip_prefix": row.source_ip_prefix,
            "destination_ip_prefix": row.destination_ip_prefix, "excluded": row.excluded}


def _router_dict(row: Any) -> dict[str, Any]:
    return {"id": row.id, "name": row.name, "project_id": row.project_id,
            "tenant_id": row.project_id, "admin_state_up": row.admin_state_up,
            "status": row.status, "gw_port_id": row.gw_port_id,
            "distributed": row.distributed, LABELS_KEY: []}


def _routers_of(conn: Connection, labels: list[Any], enabled_only: bool) -> dict[str, list[Any]]:
    """Router rows each label applies to (its project's, or all when shared)."""
    clauses = [rt.admin_state_up.is_(True)] if enabled_only else []
    every: list[Any] = []
    if any(label.shared for label in labels):
        every = list(conn.execute(sa.select(t.routers).where(*clauses).order_by(rt.id)))
    projects = sorted({label.project_id for label in labels if not label.shared})
    by_project: dict[str, list[Any]] = {}
    for part in store.chunks(projects):
        for row in conn.execute(sa.select(t.routers).where(rt.project_id.in_(part), *clauses)
                                .order_by(rt.id)):
            by_project.setdefault(row.project_id, []).append(row)
    return {label.id: every if label.shared else by_project.get(label.project_id, [])
            for label in labels}


def sync_data(conn: Connection, label_id: str | None = None,
              router_ids: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """Upstream's ``get_sync_data_metering``: enabled routers with their labels."""
    query = sa.select(t.meteringlabels).order_by(lb.id)
    if label_id:
        query = query.where(lb.id == label_id)
    labels = list(conn.execute(query))
    rules: dict[str, list[dict[str, Any]]] = {}
    for part in store.chunks([label.id for label in labels]):
        for row in conn.execute(sa.select(t.meteringlabelrules)
                                .where(ru.metering_label_id.in_(part)).order_by(ru.id)):
            rules.setdefault(row.metering_label_id, []).append(rule_dict(row))
    wanted = set(router_ids) if router_ids is not None else None
    routers: dict[str, dict[str, Any]] = {}
    for label in labels:
        for row in _routers_of(conn, [label], enabled_only=True)[label.id]:
            if wanted is not None and row.id not in wanted:
                continue
            router = routers.setdefault(row.id, _router_dict(row))
            router[LABELS_KEY].append({"id": label.id, "name": label.name,
                                       "shared": label.shared,
                                       "rules": rules.get(label.id, [])})
    return list(routers.values())


def rule_sync_data(conn: Connection, rule: dict[str, Any]) -> list[dict[str, Any]]:
    """Upstream's data of a rule cast: each router of the label with ``{id, rule}``."""
    label = conn.execute(sa.select(t.meteringlabels)
                         .where(lb.id == rule["metering_label_id"])).first()
    if label is None:
        return []
    out = []
    for row in _routers_of(conn, [label], enabled_only=False)[label.id]:
        router = _router_dict(row)
        router[LABELS_KEY].append({"id": label.id, "rule": rule})
        out.append(router)
    return out


class MeteringAgentNotifier:
    """Casts to metering agents (upstream's MeteringAgentNotifyAPI), after commit."""

    def __init__(self, plugin: Any) -> None:
        self.plugin = plugin
        self.casts = Casts(plugin.conf)

    def notify(self, method: str, routers: list[dict[str, Any]]) -> None:
        if not routers or not self.casts.enabled:
            return
        l3 = self.plugin.l3()
        if l3 is None:
            self.casts.cast(topics.METERING_AGENT, method, fanout=True, routers=routers)
            return
        with self.plugin.db.reader() as conn:
            hosts = l3.scheduler.hosts_to_notify(conn, [r["id"] for r in routers])
        by_id = {r["id"]: r for r in routers}
        for host, router_ids in sorted(hosts.items()):
            self.casts.cast(topics.METERING_AGENT, method, server=host,
                            routers=[by_id[rid] for rid in router_ids])

    def router_deleted(self, router_id: str) -> None:
        self.casts.cast(topics.METERING_AGENT, "router_deleted", fanout=True,
                        router_id=router_id)

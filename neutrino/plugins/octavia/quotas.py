"""Octavia's quotas: per project, per kind of object; -1 is unlimited and
an unset (null) limit is the configured default (``[octavia]
default_*_quota``). Checked inside the creating transaction."""
from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins.octavia import faults, store
from neutrino.resources import octavia as res

Q = t.octavia_quotas
# kind of object -> quota key
KIND_KEYS = {"loadbalancer": "load_balancer", "listener": "listener", "pool": "pool",
             "member": "member", "healthmonitor": "health_monitor", "l7policy": "l7policy",
             "l7rule": "l7rule"}
LABELS = {"load_balancer": "LoadBalancer", "listener": "Listener", "pool": "Pool",
          "member": "Member", "health_monitor": "HealthMonitor", "l7policy": "L7Policy",
          "l7rule": "L7Rule"}
MAX_QUOTA = 2000000000


class Quotas:
    def __init__(self, plugin: Any) -> None:
        self.plugin = plugin

    def defaults(self) -> dict[str, int]:
        conf = self.plugin.conf.octavia
        return {key: int(getattr(conf, option)) for key, _, option in res.QUOTA_KEYS}

    def _explicit(self, conn: Connection, project_id: str) -> dict[str, Any] | None:
        row = conn.execute(sa.select(Q.c.attrs).where(Q.c.project_id == project_id)).first()
        return None if row is None else dict(json.loads(row.attrs))

    def limit(self, conn: Connection, kind: str, project_id: str) -> int:
        key = KIND_KEYS[kind]
        explicit = self._explicit(conn, project_id) or {}
        value = explicit.get(key)
        return self.defaults()[key] if value is None else int(value)

    def check(self, conn: Connection, kind: str, project_id: str, adding: int) -> None:
        limit = self.limit(conn, kind, project_id)
        if limit < 0 or adding <= 0:
            return
        if store.count(conn, kind, project_id) + adding > limit:
            raise faults.Quota(resource=LABELS[KIND_KEYS[kind]])

    @staticmethod
    def shape(project_id: str, values: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {"project_id": project_id}
        for key, twin, _ in res.QUOTA_KEYS:
            if twin:
                out[twin] = values.get(key)
            out[key] = values.get(key)
        out["tenant_id"] = project_id
        return out

    # -- the API --------------------------------------------------------------

    def list(self, ctx: Context, project_filter: str | None) -> list[dict[str, Any]]:
        policy = self.plugin.policy
        if policy.allowed(ctx, "quota", "get_all-global", None):
            wanted = project_filter
        else:
            policy.authorize(ctx, "quota", "get_all", ctx.project_id)
            wanted = ctx.project_id
        with self.plugin.db.reader() as conn:
            query = sa.select(Q)
            if wanted is not None:
                query = query.where(Q.c.project_id == wanted)
            rows = conn.execute(query.order_by(Q.c.project_id)).all()
        return [self.shape(r.project_id, json.loads(r.attrs)) for r in rows]

    def get(self, ctx: Context, project_id: str) -> dict[str, Any]:
        self.plugin.policy.authorize(ctx, "quota", "get_one", project_id)
        with self.plugin.db.reader() as conn:
            explicit = self._explicit(conn, project_id) or {}
        return self.shape(project_id, self._effective(explicit))

    def _effective(self, explicit: dict[str, Any]) -> dict[str, Any]:
        defaults = self.defaults()
        return {k: defaults[k] if explicit.get(k) is None else explicit[k] for k in defaults}

    def get_defaults(self, ctx: Context, project_id: str) -> dict[str, Any]:
        self.plugin.policy.authorize(ctx, "quota", "get_defaults", project_id)
        return self.shape(project_id, self.defaults())

    def update(self, ctx: Context, project_id: str, raw: Any) -> dict[str, Any]:
        self.plugin.policy.authorize(ctx, "quota", "put", project_id)
        if not isinstance(raw, dict) or not isinstance(raw.get("quota"), dict):
            raise faults.InvalidInput("quota", raw, "Mandatory field missing.")
        given = raw["quota"]
        keys = {twin or key: key for key, twin, _ in res.QUOTA_KEYS}
        keys.update({key: key for key, _, _ in res.QUOTA_KEYS})
        unknown = [k for k in given if k not in keys]
        if unknown:
            raise faults.UnknownAttribute("quota", unknown)
        changes: dict[str, Any] = {}
        for name, value in given.items():
            if value is not None:
                if isinstance(value, bool) or not isinstance(value, int):
                    raise faults.InvalidInput(name, value, "Wrong type. Expected 'int'")
                if value < -1 or value > MAX_QUOTA:
                    raise faults.InvalidInput(
                        name, value, "Value should be greater or equal to -1"
                        if value < -1 else f"Value should be lower or equal to {MAX_QUOTA}")
            changes[keys[name]] = value

        def op(conn: Connection) -> dict[str, Any]:
            current = self._explicit(conn, project_id)
            merged = {key: None for key, _, _ in res.QUOTA_KEYS}
            merged.update(current or {})
            merged.update(changes)
            if current is None:
                conn.execute(sa.insert(Q).values(project_id=project_id,
                                                 attrs=json.dumps(merged)))
            else:
                conn.execute(sa.update(Q).where(Q.c.project_id == project_id).values(
                    attrs=json.dumps(merged)))
            return merged
        merged = self.plugin.write(op)
        return self.shape(project_id, self._effective(merged))

    def delete(self, ctx: Context, project_id: str) -> None:
        self.plugin.policy.authorize(ctx, "quota", "delete", project_id)

        def op(conn: Connection) -> None:
            done = conn.execute(sa.delete(Q).where(Q.c.project_id == project_id))
            if not done.rowcount:
                raise faults.NotFound(resource="Quota", id=project_id)
        self.plugin.write(op)

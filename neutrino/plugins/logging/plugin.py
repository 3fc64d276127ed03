"""The ``log`` service plugin: security-group logs on SQL, pushed to agents.

Logs are admin-only by upstream's default policy (a project's manager may
handle its own). A change agents must act on (a log made enabled, its
``enabled`` changed, a log deleted) is pushed to every agent on
``neutron-vo-Log-1.0``; agents then ask which of their ports it covers
(``rpc``). A log goes with its security group and its target port (the
table's foreign keys), as upstream's callbacks delete them.
"""
from __future__ import annotations

from typing import Any, Callable, TypeVar

import sqlalchemy as sa
from oslo_policy import policy
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import store
from neutrino.plugins.base import ApiExtension, ServicePlugin
from neutrino.plugins.logging import validate
from neutrino.plugins.logging.info import log_dict
from neutrino.resources import logging as res
from neutrino.rpc import topics

T = TypeVar("T")
L = t.logs
ADMIN_OR_MANAGER = "(rule:admin_only) or (role:manager and project_id:%(project_id)s)"
POLICIES = ("get_loggable_resource", "create_log", "get_log", "update_log", "delete_log")
UPDATABLE = ("name", "description", "enabled")


def _not_found(log_id: str) -> Callable[[], Exception]:
    return lambda: errors.LogResourceNotFound(log_id=log_id)


class Pusher:
    """After a commit: tell every agent of a log they must act on."""

    def __init__(self, casts: Any) -> None:
        self.casts = casts

    def push(self, log: dict[str, Any], event_type: str) -> None:
        if self.casts is not None and self.casts.enabled:
            self.casts.cast(topics.LOG_PUSH, "push", fanout=True, resource_type="Log",
                            resource_list=[log], event_type=event_type)


class Logs:
    """The ``logs`` collection."""

    def __init__(self, plugin: "LoggingPlugin") -> None:
        self.plugin = plugin

    def write(self, fn: Callable[[Connection], T]) -> T:
        return self.plugin.core.write(fn)

    def _visible(self, ctx: Context) -> list[Any]:
        return [] if ctx.is_admin else [L.c.project_id == ctx.project_id]

    def _row(self, conn: Connection, ctx: Context, rid: str, for_update: bool = False) -> Any:
        row = store.get_row(conn, L, rid, _not_found(rid), for_update=for_update)
        if not ctx.is_admin and row.project_id != ctx.project_id:
            raise _not_found(rid)()
        return row

    def create(self, ctx: Context, plural: str,
               items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        def op(conn: Connection) -> list[dict[str, Any]]:
            out = []
            for item in items:
                validate.check(conn, ctx, item)
                row = store.standard_row(ctx.project_id, item, revision=0)
                row.update(resource_type=item["resource_type"],
                           resource_id=item.get("resource_id"),
                           target_id=item.get("target_id"),
                           event=item.get("event") or res.ALL,
                           enabled=bool(item.get("enabled", True)))
                conn.execute(sa.insert(L).values(**row))
                out.append(log_dict(self._row(conn, ctx, row["id"])))
            return out
        created = self.write(op)
        for log in created:
            if log["enabled"]:
                self.plugin.pusher.push(log, "created")
        return created

    def get(self, ctx: Context, plural: str, rid: str) -> dict[str, Any]:
        with self.plugin.db.reader() as conn:
            return log_dict(self._row(conn, ctx, rid))

    def list(self, ctx: Context, plural: str,
             query: store.ListQuery) -> tuple[list[dict[str, Any]], bool]:
        clauses = store.column_clauses(L, query.filters, {}) + self._visible(ctx)
        with self.plugin.db.reader() as conn:
            rows, more = store.paged_select(conn, L, clauses, query)
        return [log_dict(r) for r in rows], more

    def update(self, ctx: Context, plural: str, rid: str, data: dict[str, Any],
               revision: int | None = None) -> dict[str, Any]:
        values = {k: data[k] for k in UPDATABLE if k in data}

        def op(conn: Connection) -> dict[str, Any]:
            self._row(conn, ctx, rid, for_update=True)
            store.bump(conn, L, rid, values, revision)
            return log_dict(self._row(conn, ctx, rid))
        updated = self.write(op)
        if "enabled" in data:
            self.plugin.pusher.push(updated, "updated")
        return updated

    def delete(self, ctx: Context, plural: str, rid: str, revision: int | None = None) -> None:
        def op(conn: Connection) -> dict[str, Any]:
            row = self._row(conn, ctx, rid, for_update=True)
            store.check_revision(conn, L, rid, revision)
            conn.execute(sa.delete(L).where(L.c.id == rid))
            return log_dict(row)
        self.plugin.pusher.push(self.write(op), "deleted")


class LoggableResources:
    """``loggable_resources``: the types a driver logs (listed only)."""

    def list(self, ctx: Context, plural: str,
             query: store.ListQuery) -> tuple[list[dict[str, Any]], bool]:
        return [{"type": kind} for kind in validate.SUPPORTED_TYPES], False

    def get(self, ctx: Context, plural: str, rid: str) -> dict[str, Any]:
        raise errors.ResourceNotFound()

    def create(self, ctx: Context, plural: str, items: list[dict[str, Any]]) -> Any:
        raise errors.MethodNotAllowed()

    def update(self, ctx: Context, plural: str, rid: str, data: dict[str, Any],
               revision: int | None = None) -> Any:
        raise errors.MethodNotAllowed()

    def delete(self, ctx: Context, plural: str, rid: str, revision: int | None = None) -> None:
        raise errors.MethodNotAllowed()


class LoggingPlugin(ServicePlugin):
    """Logging of security-group traffic (upstream's ``log`` service plugin)."""

    service_type = "LOG_API"
    supported_extension_aliases = ("logging",)

    def __init__(self, conf: Any, db: Any) -> None:
        super().__init__(conf, db)
        self.logs = Logs(self)
        self.pusher = Pusher(None)
        errors.register_not_found("log", lambda rid: errors.LogResourceNotFound(log_id=rid))

    def connect(self, core: Any) -> None:
        super().connect(core)
        self.pusher = Pusher(getattr(core, "casts", None))

    def rpc_endpoints(self) -> dict[str, list[Any]]:
        # deferred: endpoints load oslo.messaging, which API workers never import
        from neutrino.plugins.logging.rpc import LoggingRpcEndpoint
        return {topics.LOGGING_PLUGIN: [LoggingRpcEndpoint(self.db)]}

    def collections(self) -> dict[str, Any]:
        return {"logs": self.logs, "loggable_resources": LoggableResources()}

    def extensions(self) -> list[ApiExtension]:
        rules = [policy.RuleDefault(name, ADMIN_OR_MANAGER, scope_types=["project"])
                 for name in POLICIES]
        return [ApiExtension(descriptor=res.LOGGING,
                             resources=[res.LOG, res.LOGGABLE_RESOURCE], policies=rules)]

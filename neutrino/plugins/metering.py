"""The ``metering`` service plugin: labels and their rules, on SQL.

The API and its rules live here (validation, overlap refusal, a label
taking its rules with it); what metering agents are told and asked is in
``metering_agents``. Non-admins see their own project's labels and the
rules of those labels, as upstream's default policy allows.
"""
from __future__ import annotations

import ipaddress
from typing import Any, Callable, TypeVar

import netaddr
import sqlalchemy as sa
from oslo_policy import policy
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.db.engine import retrying
from neutrino.plugins import metering_agents as agents
from neutrino.plugins import store
from neutrino.plugins.base import ApiExtension, ServicePlugin
from neutrino.resources import metering as res
from neutrino.rpc import topics

T = TypeVar("T")
lb = t.meteringlabels.c
ru = t.meteringlabelrules.c
ADMIN_OR_MANAGER = "(rule:admin_only) or (role:manager and project_id:%(project_id)s)"
ADMIN_OR_READER = "(rule:admin_only) or (role:reader and project_id:%(project_id)s)"


def _label_dict(row: Any) -> dict[str, Any]:
    m = row._mapping if hasattr(row, "_mapping") else row
    return {"id": m["id"], "name": m["name"], "description": m["description"],
            "shared": m["shared"], "project_id": m["project_id"], "tenant_id": m["project_id"]}


def _rule_dict(row: Any) -> dict[str, Any]:
    return {"id": row.id, "metering_label_id": row.metering_label_id,
            "direction": row.direction, "remote_ip_prefix": row.remote_ip_prefix,
            "source_ip_prefix": row.source_ip_prefix,
            "destination_ip_prefix": row.destination_ip_prefix, "excluded": row.excluded,
            "project_id": row.project_id, "tenant_id": row.project_id}


def _cast_rule(rule: dict[str, Any]) -> dict[str, Any]:
    """A rule as casts carry it (upstream's rule dict, without the project)."""
    return {k: v for k, v in rule.items() if k not in ("project_id", "tenant_id")}


def _rules_select() -> Any:
    """Rules with their label's project (a rule has none of its own)."""
    return (sa.select(t.meteringlabelrules, lb.project_id)
            .join(t.meteringlabels, lb.id == ru.metering_label_id).subquery("rules"))


def check_rule(rule: dict[str, Any]) -> None:
    """Upstream's checks of a rule's prefixes, in its order and words."""
    for name in res.PREFIXES:
        value = rule.get(name)
        if value:
            try:
                ipaddress.ip_interface(value)
            except ValueError as exc:
                raise errors.Invalid(message=f"{name}: {value} is invalid [{exc}].") from None
    if rule.get("remote_ip_prefix") and (rule.get("source_ip_prefix")
                                         or rule.get("destination_ip_prefix")):
        raise errors.Invalid(message="Cannot use 'remote-ip-prefix' in conjunction with "
                                     "'source-ip-prefix' or 'destination-ip-prefix'.")
    if not any(rule.get(name) for name in res.PREFIXES):
        raise errors.Invalid(message="You must define at least one of the following "
                                     "parameters 'remote_ip_prefix', or 'source_ip_prefix' "
                                     "or 'destination_ip_prefix'.")


class _Store:
    def __init__(self, db: Any, notifier: Any = None) -> None:
        self.db = db
        self.notifier = notifier

    @property
    def casting(self) -> bool:
        """Whether agents are told of changes (no bus: no sync data to compute)."""
        return self.notifier is not None and self.notifier.casts.enabled

    def _notify(self, method: str, routers: list[dict[str, Any]]) -> None:
        if self.casting:
            self.notifier.notify(method, routers)

    def write(self, fn: Callable[[Connection], T]) -> T:
        @retrying
        def run() -> T:
            with self.db.writer() as conn:
                return fn(conn)
        return run()


class Labels(_Store):
    """``metering_labels``: create, show, list, delete (no update, as upstream)."""

    def _row(self, conn: Connection, rid: str) -> Any:
        row = conn.execute(sa.select(t.meteringlabels).where(lb.id == rid)).first()
        if row is None:
            raise errors.MeteringLabelNotFound(label_id=rid)
        return row

    def create(self, ctx: Context, plural: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        def op(conn: Connection) -> list[dict[str, Any]]:
            rows = [{"id": item.get("id") or store.new_id(), "project_id": item["project_id"],
                     "name": item.get("name") or "", "shared": bool(item.get("shared")),
                     "description": item.get("description") or ""} for item in items]
            conn.execute(sa.insert(t.meteringlabels), rows)
            return rows
        created = [_label_dict(r) for r in self.write(op)]
        for label in created if self.casting else ():
            with self.db.reader() as conn:
                data = agents.sync_data(conn, label_id=label["id"])
            self._notify("add_metering_label", data)
        return created

    def get(self, ctx: Context, plural: str, rid: str) -> dict[str, Any]:
        with self.db.reader() as conn:
            return _label_dict(self._row(conn, rid))

    def list(self, ctx: Context, plural: str,
             query: store.ListQuery) -> tuple[list[dict[str, Any]], bool]:
        clauses = store.column_clauses(t.meteringlabels, query.filters, {})
        if not ctx.is_admin:
            clauses.append(lb.project_id == ctx.project_id)
        with self.db.reader() as conn:
            rows, more = store.paged_select(conn, t.meteringlabels, clauses, query)
        return [_label_dict(r) for r in rows], more

    def update(self, ctx: Context, plural: str, rid: str, data: dict[str, Any],
               revision: int | None = None) -> dict[str, Any]:
        raise errors.NotImplementedError()  # unreachable: nothing is writable

    def delete(self, ctx: Context, plural: str, rid: str, revision: int | None = None) -> None:
        def op(conn: Connection) -> list[dict[str, Any]]:
            self._row(conn, rid)
            # what agents must stop counting
            data = agents.sync_data(conn, label_id=rid) if self.casting else []
            conn.execute(sa.delete(t.meteringlabelrules).where(ru.metering_label_id == rid))
            conn.execute(sa.delete(t.meteringlabels).where(lb.id == rid))
            return data
        self._notify("remove_metering_label", self.write(op))


class Rules(_Store):
    """``metering_label_rules``: create, show, list, delete."""

    def _row(self, conn: Connection, rid: str) -> Any:
        rules = _rules_select()
        row = conn.execute(sa.select(rules).where(rules.c.id == rid)).first()
        if row is None:
            raise errors.MeteringLabelRuleNotFound(rule_id=rid)
        return row

    def create(self, ctx: Context, plural: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        def op(conn: Connection) -> list[str]:
            ids = []
            for item in items:
                check_rule(item)
                label = conn.execute(sa.select(lb.id, lb.project_id)
                                     .where(lb.id == item["metering_label_id"])).first()
                if label is None or not (ctx.is_admin or label.project_id == ctx.project_id):
                    raise errors.MeteringLabelNotFound(label_id=item["metering_label_id"])
                self._check_overlap(conn, item)
                rid = item.get("id") or store.new_id()
                conn.execute(sa.insert(t.meteringlabelrules).values(
                    id=rid, metering_label_id=label.id, direction=item["direction"],
                    excluded=bool(item.get("excluded")),
                    **{name: str(netaddr.IPNetwork(item[name])) if item.get(name) else None
                       for name in res.PREFIXES}))
                ids.append(rid)
            return ids
        ids = self.write(op)
        with self.db.reader() as conn:
            created = [_rule_dict(self._row(conn, rid)) for rid in ids]
            casts = [agents.rule_sync_data(conn, _cast_rule(rule))
                     for rule in (created if self.casting else ())]
        for data in casts:
            self._notify("add_metering_label_rule", data)
        return created

    def _check_overlap(self, conn: Connection, rule: dict[str, Any]) -> None:
        """Upstream refuses only overlapping ``remote_ip_prefix`` rules of one
        label, direction and ``excluded``."""
        new = rule.get("remote_ip_prefix")
        if not new:
            return
        existing = [r.remote_ip_prefix for r in conn.execute(sa.select(ru.remote_ip_prefix).where(
            ru.metering_label_id == rule["metering_label_id"],
            ru.direction == rule["direction"], ru.excluded == bool(rule.get("excluded")),
            ru.remote_ip_prefix.is_not(None)))]
        if existing and netaddr.IPSet(existing) & netaddr.IPSet([new]):
            raise errors.MeteringLabelRuleOverlaps(remote_ip_prefix=new)

    def get(self, ctx: Context, plural: str, rid: str) -> dict[str, Any]:
        with self.db.reader() as conn:
            return _rule_dict(self._row(conn, rid))

    def list(self, ctx: Context, plural: str,
             query: store.ListQuery) -> tuple[list[dict[str, Any]], bool]:
        rules = _rules_select()
        clauses = store.column_clauses(rules, query.filters, {})
        if not ctx.is_admin:
            clauses.append(rules.c.project_id == ctx.project_id)
        with self.db.reader() as conn:
            rows, more = store.paged_select(conn, rules, clauses, query)
        return [_rule_dict(r) for r in rows], more

    def update(self, ctx: Context, plural: str, rid: str, data: dict[str, Any],
               revision: int | None = None) -> dict[str, Any]:
        # Upstream declares the prefixes writable but implements no update.
        raise errors.NotImplementedError()

    def delete(self, ctx: Context, plural: str, rid: str, revision: int | None = None) -> None:
        def op(conn: Connection) -> list[dict[str, Any]]:
            rule = _cast_rule(_rule_dict(self._row(conn, rid)))
            data = agents.rule_sync_data(conn, rule) if self.casting else []
            conn.execute(sa.delete(t.meteringlabelrules).where(ru.id == rid))
            return data
        self._notify("remove_metering_label_rule", self.write(op))


class MeteringPlugin(ServicePlugin):
    """Neutron Metering: labels and label rules, counted by metering agents."""

    service_type = "METERING"
    supported_extension_aliases = (res.METERING.alias, res.SOURCE_AND_DESTINATION.alias)

    def __init__(self, conf: Any, db: Any) -> None:
        super().__init__(conf, db)
        self.agent_notifier = agents.MeteringAgentNotifier(self)
        self.agent_notifiers["Metering agent"] = self.agent_notifier
        self.labels = Labels(db, self.agent_notifier)
        self.rules = Rules(db, self.agent_notifier)
        self.directory: Any = None

    def bind(self, plugins: Any) -> None:
        self.directory = plugins

    def l3(self) -> Any:
        """The L3 plugin (routers and their agents), when loaded."""
        if self.directory is None:  # before the directory binds the plugins
            return None
        return self.directory.services.get(agents.L3_SERVICE)

    def rpc_endpoints(self) -> dict[str, list[Any]]:
        """``metering_plugin`` for metering agents."""
        # deferred: endpoints load oslo.messaging, which API workers never import
        from neutrino.plugins.metering_rpc import MeteringRpcEndpoint
        return {topics.METERING_PLUGIN: [MeteringRpcEndpoint(self)]}

    def collections(self) -> dict[str, Any]:
        return {"metering_labels": self.labels, "metering_label_rules": self.rules}

    def extensions(self) -> list[ApiExtension]:
        rules = []
        for singular in ("metering_label", "metering_label_rule"):
            rules += [policy.RuleDefault(f"create_{singular}", ADMIN_OR_MANAGER,
                                         scope_types=["project"]),
                      policy.RuleDefault(f"get_{singular}", ADMIN_OR_READER,
                                         scope_types=["project"]),
                      policy.RuleDefault(f"delete_{singular}", ADMIN_OR_MANAGER,
                                         scope_types=["project"])]
        return [ApiExtension(descriptor=res.METERING,
                             resources=[res.METERING_LABEL, res.METERING_LABEL_RULE],
                             policies=rules),
                ApiExtension(descriptor=res.SOURCE_AND_DESTINATION)]

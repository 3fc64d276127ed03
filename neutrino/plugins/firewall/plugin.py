"""The ``firewall_v2`` service plugin: FWaaS v2 on SQL, applied by agents.

Serves ``/v2.0/fwaas/firewall_rules``, ``firewall_policies`` (with the
``insert_rule``/``remove_rule`` actions) and ``firewall_groups``, with
upstream's checks, statuses and default policy rules. Its one service
driver is upstream's agent driver (``[service_providers] service_provider
= FIREWALL_V2:<name>:neutron_fwaas...agents.FirewallAgentDriver:default``,
which is also what the plugin brings when none is configured): after a
commit that changes what a group enforces, the agents are told on
``firewall_agent`` (fanout, upstream's topic and methods) and fetch the
groups of their routers' ports on ``q-firewall-plugin``, where they report
each group's status back (``rpc``).
"""
from __future__ import annotations

import logging
from typing import Any, Callable, TypeVar

import sqlalchemy as sa
from oslo_policy import policy
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import events as ev
from neutrino.plugins import store
from neutrino.plugins.base import ApiExtension, ServicePlugin
from neutrino.plugins.firewall import groups, policies, rows, rules
from neutrino.plugins.loader import PluginLoadError
from neutrino.quota.engine import Countable
from neutrino.resources import firewall as res
from neutrino.rpc import topics

LOG = logging.getLogger(__name__)
T = TypeVar("T")

SERVICE_TYPE = "FIREWALL_V2"
AGENT_DRIVER = ("neutron_fwaas.services.firewall.service_drivers.agents.agents."
                "FirewallAgentDriver")
DEFAULT_PROVIDER = {"service_type": SERVICE_TYPE, "name": "fwaas_db", "driver": AGENT_DRIVER,
                    "default": True}

MEMBER = "(rule:admin_only) or (role:member and project_id:%(project_id)s)"
READER = "(rule:admin_only) or (role:reader and project_id:%(project_id)s)"
ADMIN = "rule:admin_only"
VIF_TYPE = "binding:vif_type"
UNBOUND = (None, "", "unbound", "binding_failed")
SINGULARS = {"firewall_rules": "firewall_rule", "firewall_policies": "firewall_policy",
             "firewall_groups": "firewall_group"}


def _policies() -> list[policy.RuleDefault]:
    """neutron-fwaas's rules and their default strings."""
    rules_: dict[str, str] = {}
    for singular, plural in (("firewall_group", "firewall_groups"),
                             ("firewall_policy", "firewall_policies"),
                             ("firewall_rule", "firewall_rules")):
        rules_[f"shared_{plural}"] = f"field:{plural}:shared=True"
        for verb in ("create", "update", "delete"):
            rules_[f"{verb}_{singular}"] = MEMBER
            rules_[f"{verb}_{singular}:shared"] = ADMIN
        rules_[f"get_{singular}"] = f"({READER}) or (rule:shared_{plural})"
    rules_["insert_rule"] = rules_["remove_rule"] = MEMBER
    return [policy.RuleDefault(n, c, scope_types=None if n.startswith("shared_") else ["project"])
            for n, c in rules_.items()]


def _provider(conf: Any) -> dict[str, Any]:
    """The default ``FIREWALL_V2`` provider configured (or the plugin's own);
    only upstream's agent driver is served."""
    lines = [line.split(":") for line in conf.service_providers.service_provider]
    mine = [p for p in lines if p and p[0] == SERVICE_TYPE]
    if not mine:
        return DEFAULT_PROVIDER
    chosen = next((p for p in mine if len(p) == 4 and p[3] == "default"), mine[0])
    if len(chosen) < 3 or chosen[2] != AGENT_DRIVER:
        raise PluginLoadError(
            f"[service_providers] service_provider: FIREWALL_V2 driver "
            f"'{chosen[2] if len(chosen) > 2 else ''}' is not served; use {AGENT_DRIVER}")
    return {"service_type": SERVICE_TYPE, "name": chosen[1], "driver": chosen[2],
            "default": True}


class AgentNotifier:
    """After a commit: tell the agents (upstream's fanout casts on
    ``firewall_agent``) which ports a group gained and lost."""

    def __init__(self, casts: Any) -> None:
        self.casts = casts

    def group_changed(self, method: str, group: dict[str, Any], added: list[str],
                      removed: list[str]) -> None:
        if self.casts is None or not self.casts.enabled or not (added or removed):
            return
        payload = {**group, "add-port-ids": added, "del-port-ids": removed}
        self.casts.cast(topics.FIREWALL_AGENT, method, fanout=True, firewall_group=payload,
                        host="")


class FirewallPluginV2(ServicePlugin):
    """Firewall as a service v2: rules, policies and groups on router ports."""

    service_type = SERVICE_TYPE
    supported_extension_aliases = (res.FWAAS_V2.alias,)

    def __init__(self, conf: Any, db: Any) -> None:
        super().__init__(conf, db)
        provider = _provider(conf)
        self.driver_name = provider["name"]
        self.service_providers = (provider,)
        self.notifier = AgentNotifier(None)
        for plural, factory in rows.NOT_FOUND.items():
            errors.register_not_found(SINGULARS[plural], factory)

    def connect(self, core: Any) -> None:
        super().connect(core)
        self.notifier = AgentNotifier(getattr(core, "casts", None))
        core.events.subscribe("ports", ev.AFTER_CREATE, self._port_created)
        core.events.subscribe("ports", ev.AFTER_UPDATE, self._port_updated)

    # -- the default group on new instance ports ---------------------------------------

    def _port_created(self, ctx: Any, port: dict[str, Any]) -> None:
        if port.get(VIF_TYPE) not in UNBOUND:
            self.join_default(port)

    def _port_updated(self, ctx: Any, original: dict[str, Any] | None,
                      current: dict[str, Any]) -> None:
        if (original or {}).get(VIF_TYPE) in UNBOUND and current.get(VIF_TYPE) not in UNBOUND:
            self.join_default(current)

    def join_default(self, port: dict[str, Any]) -> None:
        """A compute port's first binding where the L2 extension serves it:
        into its project's default group (made if missing), and its agent told."""
        if not str(port.get("device_owner") or "").startswith(res.COMPUTE_PREFIX):
            return
        with self.db.reader() as conn:  # no default group made for ports never served
            if not groups.l2_supported(conn, str(port["id"])):
                return
        self.ensure_default(port.get("project_id"))
        gid = self._write(lambda conn: groups.join_default(conn, port))
        if gid is not None:
            self._tell([({"id": gid}, [])])

    # -- transactions ---------------------------------------------------------------

    def _write(self, fn: Callable[[Connection], T]) -> T:
        return self.core.write(fn)  # type: ignore[no-any-return]

    def _shown(self, conn: Connection, plural: str, ids: list[str]) -> list[dict[str, Any]]:
        table = rows.TABLES[plural]
        found = {r.id: r for r in conn.execute(sa.select(table).where(table.c.id.in_(ids)))}
        return rows.DICTS[plural](conn, [found[i] for i in ids])

    def _quota(self, conn: Connection, ctx: Context) -> None:
        quota = self.core.quota
        if quota is not None:
            for project, deltas in sorted(ctx.quota_request.items()):
                quota.enforce(conn, project, deltas)

    def ensure_default(self, project_id: str | None) -> None:
        """The project's default group, made on its first use of the API."""
        if not project_id:
            return
        with self.db.reader() as conn:
            if groups.default_of(conn, project_id):
                return
        try:
            self._write(lambda conn: groups.make_default(conn, self.conf, project_id))
        except sa.exc.IntegrityError:
            LOG.debug("default firewall group of %s made concurrently", project_id)

    # -- the collection interface ----------------------------------------------------

    def get(self, ctx: Context, plural: str, rid: str, **kw: Any) -> dict[str, Any]:
        with self.db.reader() as conn:
            found = rows.row(conn, plural, rid)
            item = rows.DICTS[plural](conn, [found])[0]
            if plural == "firewall_rules":
                # upstream's show (only) names the policies holding the rule
                item["firewall_policy_id"] = rows.policies_with_rule(conn, rid) or None
        return item

    def list(self, ctx: Context, plural: str,
             query: store.ListQuery) -> tuple[list[dict[str, Any]], bool]:
        wanted = query.filters.get("project_id") or query.filters.get("tenant_id")
        self.ensure_default(str(wanted[0]) if wanted else ctx.project_id)
        table = rows.TABLES[plural]
        special = {"firewall_rules": lambda vals: table.c.id.in_(
            sa.select(rows.PR.c.firewall_policy_id).where(
                rows.PR.c.firewall_rule_id.in_(vals))),
                   "ports": lambda vals: table.c.id.in_(
            sa.select(rows.GP.c.firewall_group_id).where(rows.GP.c.port_id.in_(vals)))}
        clauses = store.column_clauses(table, query.filters, special)
        scope = rows.visible_clause(ctx, table)
        if scope is not None:
            clauses.append(scope)
        with self.db.reader() as conn:
            found, more = store.paged_select(conn, table, clauses, query)
            return rows.DICTS[plural](conn, found), more

    def create(self, ctx: Context, plural: str,
               items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if plural == "firewall_groups":
            for item in items:
                self.ensure_default(item.get("project_id") or ctx.project_id)

        def op(conn: Connection) -> list[dict[str, Any]]:
            self._quota(conn, ctx)
            if plural == "firewall_rules":
                ids = [rules.create(conn, ctx, item) for item in items]
            elif plural == "firewall_policies":
                ids = [policies.create(conn, ctx, item) for item in items]
            else:
                ids = [groups.create(conn, ctx, item, self.driver_name)
                       for item in items]
            return self._shown(conn, plural, ids)
        made = self._write(op)
        if plural == "firewall_groups":
            for group in made:
                if group["status"] != res.INACTIVE:
                    self.notifier.group_changed("create_firewall_group", group,
                                                group["ports"], [])
        return made

    def update(self, ctx: Context, plural: str, rid: str, data: dict[str, Any],
               revision: int | None = None) -> dict[str, Any]:
        told: list[tuple[dict[str, Any], list[str]]] = []

        def op(conn: Connection) -> dict[str, Any]:
            if plural == "firewall_rules":
                rows.row(conn, plural, rid, for_update=True)
                touched = rules.update(conn, rid, data, revision)
                self._pending(conn, touched, told)
            elif plural == "firewall_policies":
                policies.update(conn, ctx, rid, data, revision)
                if "firewall_rules" in data:
                    self._pending(conn, [rid], told)
            else:
                old_ports, notify = groups.update(conn, ctx, rid, data, revision,
                                                  self.driver_name)
                if notify:
                    told.append(({"id": rid}, old_ports))
            return self._shown(conn, plural, [rid])[0]
        updated = self._write(op)
        self._tell(told)
        return updated

    def _pending(self, conn: Connection, policy_ids: list[str],
                 told: list[tuple[dict[str, Any], list[str]]]) -> None:
        for gid in groups.policies_changed(conn, policy_ids):
            told.append(({"id": gid}, []))

    def _tell(self, told: list[tuple[dict[str, Any], list[str]]]) -> None:
        """Casts for changed groups: the ports to apply it on again (all it
        holds) and those it left."""
        if not told:
            return
        with self.db.reader() as conn:
            for stub, old_ports in told:
                found = conn.execute(sa.select(rows.G).where(rows.G.c.id == stub["id"])).first()
                if found is None:
                    continue
                group = rows.group_dicts(conn, [found])[0]
                removed = [p for p in old_ports if p not in group["ports"]]
                self.notifier.group_changed("update_firewall_group", group, group["ports"],
                                            removed)

    def delete(self, ctx: Context, plural: str, rid: str, revision: int | None = None,
               **kw: Any) -> None:
        def op(conn: Connection) -> None:
            if plural == "firewall_rules":
                rules.delete(conn, rid, revision)
            elif plural == "firewall_policies":
                policies.delete(conn, rid, revision)
            else:
                groups.delete(conn, ctx, rid, revision)
        self._write(op)

    def action(self, ctx: Context, plural: str, rid: str, name: str, body: Any) -> Any:
        """``insert_rule``/``remove_rule``: the bare policy, as upstream answers."""
        told: list[tuple[dict[str, Any], list[str]]] = []

        def op(conn: Connection) -> dict[str, Any]:
            if name == "insert_rule":
                policies.insert_rule(conn, ctx, rid, body)
            elif name == "remove_rule":
                policies.remove_rule(conn, ctx, rid, body)
            else:
                raise errors.HTTPNotFound()
            self._pending(conn, [rid], told)
            return self._shown(conn, plural, [rid])[0]
        shown = self._write(op)
        self._tell(told)
        return shown

    def set_tags(self, ctx: Context, plural: str, rid: str, add: list[str] | None = None,
                 remove: list[str] | None = None, replace: list[str] | None = None
                 ) -> list[str]:
        table = rows.TABLES[plural]
        return self._write(lambda conn: store.edit_tags(
            conn, table, SINGULARS[plural], rid, lambda: rows.NOT_FOUND[plural](rid),
            add=add, remove=remove, replace=replace))

    # -- what agents see ---------------------------------------------------------------

    def groups_for_ports(self, port_ids: list[str]) -> list[dict[str, Any]]:
        """The groups holding any of ``port_ids``, each with its ordered
        ``ingress_rule_list``/``egress_rule_list`` (upstream's agent shape)
        and its ports among those asked about."""
        with self.db.reader() as conn:
            links = [r for part in store.chunks(sorted(set(port_ids))) for r in conn.execute(
                sa.select(rows.GP).where(rows.GP.c.port_id.in_(part)))]
            ids = sorted({r.firewall_group_id for r in links})
            if not ids:
                return []
            found = list(conn.execute(sa.select(rows.G).where(rows.G.c.id.in_(ids))
                                      .order_by(rows.G.c.id)))
            shown = rows.group_dicts(conn, found)
            policy_ids = sorted({g[k] for g in shown for k in groups.POLICY_KEYS if g[k]})
            order = rows.policy_rules(conn, policy_ids)
            rule_ids = sorted({r for ids_ in order.values() for r in ids_})
            by_id = {r.id: rows.rule_dict(r) for part in store.chunks(rule_ids)
                     for r in conn.execute(sa.select(rows.R).where(rows.R.c.id.in_(part)))}
        asked = set(port_ids)
        for group in shown:
            group["ports"] = [p for p in group["ports"] if p in asked]
            for direction in ("ingress", "egress"):
                pid = group[f"{direction}_firewall_policy_id"]
                group[f"{direction}_rule_list"] = [by_id[r] for r in order.get(pid, [])
                                                   if r in by_id] if pid else []
        return shown

    def report_status(self, group_id: str, status: str) -> bool:
        return self._write(lambda conn: groups.set_status(conn, group_id, status))

    # -- wiring ------------------------------------------------------------------------

    def rpc_endpoints(self) -> dict[str, list[Any]]:
        # deferred: endpoints load oslo.messaging, which API workers never import
        from neutrino.plugins.firewall.rpc import FirewallCallbacks
        return {topics.FIREWALL_PLUGIN: [FirewallCallbacks(self)]}

    def collections(self) -> dict[str, Any]:
        return {"firewall_rules": self, "firewall_policies": self, "firewall_groups": self}

    def quota_countables(self) -> list[Countable]:
        return [Countable("firewall_group", t.firewall_groups_v2, "quota_firewall_group"),
                Countable("firewall_policy", t.firewall_policies_v2, "quota_firewall_policy"),
                Countable("firewall_rule", t.firewall_rules_v2, "quota_firewall_rule")]

    def extensions(self) -> list[ApiExtension]:
        return [ApiExtension(descriptor=res.FWAAS_V2, resources=list(res.RESOURCES),
                             policies=_policies())]

"""The ``routers`` collection: rows, how they are shown, and their lifecycle.

A router is its row plus what hangs off it: the gateway port
(``gateway``), interface ports (``interfaces``) and static routes
(``routes``). Lists load all of that in a few queries per page, never per
router.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import availability_zones as az
from neutrino.plugins import events as ev
from neutrino.plugins import store
from neutrino.plugins.flavor_bindings import flavor_row
from neutrino.plugins.l3 import common as c
from neutrino.plugins.l3 import dvr, qos
from neutrino.plugins.l3 import flavors as l3_flavors
from neutrino.plugins.l3 import gateway as gw
from neutrino.plugins.l3 import ha as ha_mod
from neutrino.plugins.l3 import routes as routes_mod
from neutrino.resources.attributes import AUTO

if TYPE_CHECKING:
    from oslo_config import cfg

    from neutrino.db.engine import Database
    from neutrino.plugins.core import CorePlugin
    from neutrino.plugins.l3.notifier import L3AgentNotifier


def visible_clause(ctx: Context) -> Any:
    return None if ctx.is_admin else t.routers.c.project_id == ctx.project_id


def to_dicts(conn: Connection, rows: Sequence[Any], with_qos: bool = False,
             with_flavor: bool = False) -> list[dict[str, Any]]:
    """``with_qos``: the gateway info shows its ``qos_policy_id`` (``qos-gateway-ip``)
    when it has one or its network has a policy, as upstream; ``with_flavor``:
    the router shows its ``flavor_id`` (``l3-flavors``)."""
    ids = [r.id for r in rows]
    tags = store.load_tags(conn, ids)
    routes = store.children(conn, t.routerroutes, "router_id", ids,
                            (t.routerroutes.c.destination, t.routerroutes.c.nexthop))
    gw_ids = [r.gw_port_id for r in rows if r.gw_port_id]
    nets: dict[str, str] = {}
    for part in store.chunks(gw_ids):
        nets.update(conn.execute(sa.select(t.ports.c.id, t.ports.c.network_id)
                                 .where(t.ports.c.id.in_(part))).tuples().all())
    ips = c.port_ips(conn, gw_ids) if gw_ids else {}
    zones = _zones(conn, ids)
    policies = qos.router_policies(conn, ids) if with_qos and gw_ids else {}
    net_policies = qos.network_policies(conn, set(nets.values())) if with_qos and gw_ids else {}
    out = []
    for row in rows:
        d = store.standard_dict(row)
        info = None
        if row.gw_port_id and row.gw_port_id in nets:
            info = {"network_id": nets[row.gw_port_id], "enable_snat": row.enable_snat,
                    "external_fixed_ips": [{"subnet_id": a.subnet_id,
                                            "ip_address": a.ip_address}
                                           for a in ips.get(row.gw_port_id, [])]}
            if row.id in policies or info["network_id"] in net_policies:
                info[qos.POLICY_ID] = policies.get(row.id)
        d.update(admin_state_up=row.admin_state_up, status=row.status,
                 distributed=row.distributed, ha=row.ha,
                 external_gateway_info=info,
                 routes=[{"destination": r.destination, "nexthop": r.nexthop}
                         for r in routes.get(row.id, [])],
                 tags=tags.get(row.id, []),
                 availability_zone_hints=az.from_text(row.availability_zone_hints),
                 availability_zones=sorted(zones.get(row.id, ())))
        if with_flavor:
            d["flavor_id"] = row.flavor_id
        out.append(d)
    return out


def _zones(conn: Connection, ids: Sequence[str]) -> dict[str, set[str]]:
    """``router_availability_zone``: the zones of the L3 agents hosting each router."""
    b, a = t.routerl3agentbindings.c, t.agents.c
    out: dict[str, set[str]] = {}
    for part in store.chunks(list(ids)):
        for row in conn.execute(sa.select(b.router_id, a.availability_zone)
                                .join(t.agents, a.id == b.l3_agent_id)
                                .where(b.router_id.in_(part))):
            if row.availability_zone:
                out.setdefault(row.router_id, set()).add(row.availability_zone)
    return out


@dataclass(eq=False)
class Routers:
    """Serves ``routers`` with the core collections' interface."""

    table = t.routers

    core: CorePlugin
    conf: cfg.ConfigOpts
    db: Database
    gateway: gw.Gateway
    ha: ha_mod.HighAvailability
    distributed: dvr.Distributed
    notifier: L3AgentNotifier
    with_qos: bool = False  # ``qos-gateway-ip``: the QoS plugin is loaded
    # ``l3-flavors`` (the flavors plugin loaded): a flavor's provider, with the
    # service-type plugin's providers of a driver.
    flavor_providers: Callable[[str], list[dict[str, Any]]] | None = None

    @property
    def flavored(self) -> bool:
        return self.flavor_providers is not None

    # -- reading -----------------------------------------------------------------

    def get(self, ctx: Context, plural: str, rid: str) -> dict[str, Any]:
        with self.db.reader() as conn:
            row = store.get_row(conn, t.routers, rid, lambda: c.router_not_found(rid))
            return to_dicts(conn, [row], self.with_qos, self.flavored)[0]

    def list(self, ctx: Context, plural: str,
             query: store.ListQuery) -> tuple[list[dict[str, Any]], bool]:
        clauses = store.column_clauses(t.routers, query.filters, {})
        scope = visible_clause(ctx)
        if scope is not None:
            clauses.append(scope)
        with self.db.reader() as conn:
            rows, more = store.paged_select(conn, t.routers, clauses, query)
            return to_dicts(conn, rows, self.with_qos, self.flavored), more

    # -- writing -------------------------------------------------------------------

    def create(self, ctx: Context, plural: str,
               items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return c.create_all(items, lambda item, quota: self._create_one(ctx, item, quota=quota),
                            lambda router_id: self.delete(c.internal(), plural, router_id))

    def _create_one(self, ctx: Context, data: dict[str, Any],
                    quota: bool = True) -> dict[str, Any]:
        info = data.get("external_gateway_info")
        if info is not None:
            with self.db.reader() as conn:
                gw.validate(conn, ctx, info)
                self._check_policy(conn, ctx, info)

        flavor_id = data.get("flavor_id", AUTO)
        if flavor_id is not AUTO and self.flavor_providers is not None:
            with self.db.reader() as conn:
                l3_flavors.check_flags(
                    l3_flavors.provider_of(conn, flavor_id, self.flavor_providers), data)
        ha = data.get("ha")
        ha = self.conf.l3_ha if ha is None else ha
        project_id = data.get("project_id") or ctx.project_id
        hints = az.requested(data, self.conf.default_availability_zones)

        def insert(conn: Connection) -> str | None:
            if quota:
                c.enforce_quota(self.core, conn, ctx)
            if ha and ha_mod.network_id(conn, project_id) is None:
                return None  # its HA network went meanwhile: make it again
            if hints:
                az.validate(conn, "router", hints)
            row = store.standard_row(ctx.project_id, data)
            row["availability_zone_hints"] = az.to_text(hints)
            if flavor_id is not AUTO:
                # Locked: a delete of the flavor waits, then sees this router.
                row["flavor_id"] = flavor_row(conn, flavor_id, for_update=True).id
            distributed = data.get("distributed")
            row.update(admin_state_up=data.get("admin_state_up", True), status="ACTIVE",
                       gw_port_id=None, enable_snat=self.conf.enable_snat_by_default,
                       distributed=self.conf.router_distributed
                       if distributed is None else distributed, ha=ha)
            conn.execute(sa.insert(t.routers).values(**row))
            if data.get("tags"):
                store.tag_new(conn, row["id"], data["tags"])
            return row["id"]
        rid = None
        for _ in range(3):
            if ha:
                self.ha.ensure_network(project_id)
            rid = self.core.write(insert)
            if rid is not None:
                break
        if rid is None:
            raise errors.Conflict()  # the project's HA network keeps disappearing
        if info is not None:
            try:
                snat = info.get("enable_snat", self.conf.enable_snat_by_default)
                self.gateway.attach(rid, info, snat)
                self._gateway_policy(rid, info)
            except Exception:
                self.delete(c.internal(), "routers", rid)
                raise
            self.notifier.routers_updated([rid])
        return self.get(ctx, "routers", rid)

    def update(self, ctx: Context, plural: str, rid: str, data: dict[str, Any],
               revision: int | None = None) -> dict[str, Any]:
        with self.db.reader() as conn:
            row = store.get_row(conn, t.routers, rid, lambda: c.router_not_found(rid))
            if revision is not None:
                store.check_revision(conn, t.routers, rid, revision)
            if data.get("external_gateway_info") is not None:
                self._check_policy(conn, ctx, data["external_gateway_info"])
            migrating = dvr.check_migration(row, data.get("distributed"))
            ha_changing = ha_mod.check_migration(row, data)
        if ha_changing:
            if data["ha"]:
                self.ha.ensure_network(row.project_id)
            else:
                self.ha.delete_ports(rid)
        if migrating or ha_changing:
            self.distributed.migrate(
                rid, data["distributed"] if migrating else None,
                data["ha"] if ha_changing else None)
        if ha_changing:
            self._ha_changed(rid, row.project_id, data["ha"])
        if "external_gateway_info" in data:
            self.gateway.set(ctx, rid, data["external_gateway_info"])
            self._gateway_policy(rid, data["external_gateway_info"])
        values = {k: data[k] for k in ("name", "description", "admin_state_up") if k in data}
        if values or "routes" in data:
            def op(conn: Connection) -> None:
                c.lock_router(conn, rid)
                if "routes" in data:
                    routes_mod.replace(self.core, conn, rid, data["routes"])
                store.bump(conn, t.routers, rid, values)
            self.core.write(op)
        if migrating or "external_gateway_info" in data:
            for host in self.notifier.scheduler.unbind_misfits(rid):
                self.notifier.router_removed_from_agent(rid, host)
        self.notifier.routers_updated([rid])
        return self.get(ctx, plural, rid)

    def _check_policy(self, conn: Connection, ctx: Context, info: dict[str, Any]) -> None:
        if self.with_qos:
            qos.check_usable(conn, ctx, info.get(qos.POLICY_ID))

    def _gateway_policy(self, rid: str, info: dict[str, Any] | None) -> None:
        """The gateway's policy as the request says: gone with the gateway,
        unchanged when the request does not name it."""
        if not self.with_qos or (info is not None and qos.POLICY_ID not in info):
            return
        policy_id = None if info is None else info[qos.POLICY_ID]

        def op(conn: Connection) -> None:
            row = c.lock_router(conn, rid)
            policy = policy_id if row.gw_port_id is not None else None
            if qos.set_router_policy(conn, rid, policy):
                store.bump(conn, t.routers, rid)
        self.core.write(op)

    def delete(self, ctx: Context, plural: str, rid: str, revision: int | None = None) -> None:
        """Refused while interfaces are attached; the gateway port goes too."""
        def op(conn: Connection) -> tuple[Any, list[str]]:
            row = c.lock_router(conn, rid)
            ha_ports = [p.id for p in c.router_ports(conn, rid, ha_mod.HA_INTERFACE)]
            store.check_revision(conn, t.routers, rid, revision)
            attached = [p.id for p in c.router_ports(conn, rid)
                        if p.port_type not in (c.GATEWAY, ha_mod.HA_INTERFACE)]
            if attached:
                raise errors.RouterInUse(router_id=rid,
                                         reason="has ports still attached: "
                                                + ", ".join(attached))
            # other service plugins' say (a VPN service keeps its router)
            self.core.events.notify("routers", ev.PRECOMMIT_DELETE, conn, ctx, {"id": rid})
            conn.execute(sa.delete(t.routerports).where(t.routerports.c.router_id == rid))
            conn.execute(sa.delete(t.routerroutes).where(t.routerroutes.c.router_id == rid))
            conn.execute(sa.delete(t.routerl3agentbindings).where(
                t.routerl3agentbindings.c.router_id == rid))
            store.delete_tags(conn, rid)
            qos.set_router_policy(conn, rid, None)
            conn.execute(sa.delete(t.routers).where(t.routers.c.id == rid))
            return row, ha_ports
        row, ha_ports = self.core.write(op)
        if row.gw_port_id is not None:
            self.gateway._delete_port(row.gw_port_id)
        for port_id in ha_ports:
            self.gateway._delete_port(port_id)
        if row.ha:
            self.ha.cleanup_network(row.project_id)
        self.notifier.router_deleted(rid)

    def _ha_changed(self, router_id: str, project_id: str, ha: bool) -> None:
        """After ``ha`` changed: the router leaves its agents to be scheduled
        afresh (as upstream), and the HA network goes with the last HA router."""
        b = t.routerl3agentbindings

        def unbind(conn: Connection) -> list[str]:
            hosts = [r.host for r in conn.execute(
                sa.select(t.agents.c.host).join(b, b.c.l3_agent_id == t.agents.c.id)
                .where(b.c.router_id == router_id))]
            conn.execute(sa.delete(b).where(b.c.router_id == router_id))
            return hosts
        for host in self.core.write(unbind):
            self.notifier.router_removed_from_agent(router_id, host)
        if not ha:
            self.ha.cleanup_network(project_id)

    def set_tags(self, ctx: Context, plural: str, rid: str, add: list[str] | None = None,
                 remove: list[str] | None = None,
                 replace: list[str] | None = None) -> list[str]:
        return self.core.write(lambda conn: store.edit_tags(
            conn, t.routers, "router", rid, lambda: c.router_not_found(rid),
            add, remove, replace))

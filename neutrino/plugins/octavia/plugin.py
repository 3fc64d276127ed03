"""The ``octavia`` service plugin: the Octavia v2 load-balancer API's
behaviour (the API itself is ``neutrino.api.octavia``, served under
``[octavia] path_prefix`` by the same server).

It owns the model (one table of graph objects, the definitions, quotas and
listener stats), Octavia's checks and policies, and the status lifecycle;
the providers (``provider_api``) realise load balancers and report back
through this plugin, which is their ``StatusReporter``.
"""
from __future__ import annotations

import logging
from typing import Any, Callable, TypeVar

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import loader
from neutrino.plugins.base import PeriodicTask, ServicePlugin
from neutrino.plugins.octavia import faults, graph, store
from neutrino.plugins.octavia import provider_api as papi
from neutrino.plugins.octavia.definitions import Definitions
from neutrino.plugins.octavia.loadbalancers import LoadBalancers
from neutrino.plugins.octavia.objects import Change, Graphs
from neutrino.plugins.octavia.policies import Enforcer
from neutrino.plugins.octavia.quotas import Quotas
from neutrino.plugins.octavia.vips import Vips
from neutrino.resources import lb_graph as g

LOG = logging.getLogger(__name__)
T = TypeVar("T")
PROVIDERS = "neutrino.octavia.providers"
KIND_OF = {papi.LOADBALANCERS: "loadbalancer", papi.LISTENERS: "listener",
           papi.POOLS: "pool", papi.MEMBERS: "member", papi.HEALTHMONITORS: "healthmonitor",
           papi.L7POLICIES: "l7policy", papi.L7RULES: "l7rule"}
STATS = ("bytes_in", "bytes_out", "active_connections", "total_connections", "request_errors")


class OctaviaPlugin(ServicePlugin, papi.StatusReporter):
    """The Octavia v2 load-balancer API (service type ``load-balancer``)."""

    service_type = "LOADBALANCERV2"

    def __init__(self, conf: Any, db: Any) -> None:
        super().__init__(conf, db)
        self.policy = Enforcer()
        self.objects = Graphs(self)
        self.loadbalancers = LoadBalancers(self)
        self.quotas = Quotas(self)
        self.definitions = Definitions(self)
        self.vips = Vips(self)
        self._providers: dict[str, papi.ProviderDriver] = {}

    # -- what the parts share --------------------------------------------------

    def write(self, fn: Callable[[Connection], T]) -> T:
        return self.core.write(fn)  # type: ignore[no-any-return]

    def provider(self, name: str) -> papi.ProviderDriver:
        if name not in self._providers:
            try:
                cls = loader.load_driver_class(PROVIDERS, name, papi.ProviderDriver,
                                               "[octavia] enabled_provider_drivers")
            except loader.PluginLoadError:
                raise faults.ProviderNotFound(prov=name) from None
            self._providers[name] = cls(self.conf, self)
        return self._providers[name]

    def hand_over(self, change: Change) -> None:
        """After the commit: the provider's call. A provider that fails puts
        what was pending in ERROR, as Octavia does with a driver error."""
        driver = self.provider(change.provider)
        method = getattr(driver, change.call)
        try:
            if change.call == "loadbalancer_delete":
                method(change.graph, change.cascade)
            elif change.call.startswith("loadbalancer_"):
                method(change.graph)
            else:
                method(change.graph, change.target)
        except Exception:  # noqa: BLE001 - any provider failure is the objects' ERROR
            LOG.exception("provider %s failed on %s", change.provider, change.call)
            self.update_statuses([papi.ObjectStatus(s.kind, s.id, g.ERROR)
                                  for s in papi.pending_statuses(change.graph)])

    def qos_policy(self, policy_id: str) -> None:
        with self.db.reader() as conn:
            found = conn.execute(sa.select(t.qos_policies.c.id).where(
                t.qos_policies.c.id == policy_id)).first()
        if found is None:
            raise faults.InvalidSubresource(resource="QoS Policy", id=policy_id)

    # -- the provider's reports (StatusReporter) -------------------------------

    def update_statuses(self, statuses: list[papi.ObjectStatus]) -> None:
        def op(conn: Connection) -> list[str]:
            released: list[str] = []
            gone: list[str] = []
            for st in statuses:
                if st.provisioning_status == g.DELETED:
                    if st.kind == papi.LOADBALANCERS:
                        objs = store.of_loadbalancer(conn, st.id)
                        for obj in objs:
                            if obj["id"] == st.id and obj.get("vip_port_made"):
                                released.append(obj["vip_port_id"])
                        gone += [o["id"] for o in objs]
                    else:
                        gone.append(st.id)
                    continue
                values: dict[str, Any] = {}
                if st.provisioning_status is not None:
                    values["provisioning_status"] = st.provisioning_status
                    values["updated_at"] = store.now()
                if st.operating_status is not None:
                    values["operating_status"] = st.operating_status
                if values:
                    conn.execute(sa.update(store.OBJ).where(
                        store.OBJ.c.id == st.id, store.OBJ.c.kind == KIND_OF[st.kind]).values(
                            **values))
            store.remove(conn, gone)
            return released
        for port_id in self.write(op):
            self.vips.release(port_id)

    def update_stats(self, stats: list[papi.ListenerStats]) -> None:
        S = t.octavia_listener_stats

        def op(conn: Connection) -> None:
            for st in stats:
                listener = store.one(conn, st.listener_id, "listener")
                if listener is None:
                    continue
                values = {k: getattr(st, k) for k in STATS}
                done = conn.execute(sa.update(S).where(
                    S.c.listener_id == st.listener_id).values(**values))
                if not done.rowcount:
                    conn.execute(sa.insert(S).values(
                        listener_id=st.listener_id,
                        loadbalancer_id=listener["loadbalancer_id"], **values))
        self.write(op)

    def graph(self, loadbalancer_id: str) -> g.LoadBalancer | None:
        with self.db.reader() as conn:
            return self.objects.graph_of(conn, loadbalancer_id)

    def graphs(self, provider: str) -> list[g.LoadBalancer]:
        with self.db.reader() as conn:
            objs = graph.Objects(store.of_projects(conn, None))
        return [graph.build(o, objs) for o in objs.all
                if o["kind"] == "loadbalancer" and o.get("provider") == provider]

    # -- reads the API asks for ------------------------------------------------

    def stats(self, ctx: Context, kind: str, oid: str) -> dict[str, int]:
        S = t.octavia_listener_stats
        with self.db.reader() as conn:
            obj = store.one(conn, oid, kind)
            if obj is None:
                raise faults.NotFound(resource="Load Balancer" if kind == "loadbalancer"
                                      else "Listener", id=oid)
            self.policy.authorize(ctx, kind, "get_stats", obj["project_id"])
            column = S.c.loadbalancer_id if kind == "loadbalancer" else S.c.listener_id
            rows = conn.execute(sa.select(S).where(column == oid)).all()
        return {k: sum(int(getattr(r, k)) for r in rows) for k in STATS}

    def providers(self, ctx: Context) -> list[dict[str, str]]:
        self.policy.authorize(ctx, "provider", "get_all", ctx.project_id)
        return [{"name": name, "description": description}
                for name, description in self.conf.octavia.enabled_provider_drivers.items()]

    def capabilities(self, ctx: Context, name: str, what: str) -> list[dict[str, str]]:
        policy = "provider-flavor" if what == "flavor" else "provider-availability-zone"
        self.policy.authorize(ctx, policy, "get_all", ctx.project_id)
        if name not in self.conf.octavia.enabled_provider_drivers:
            raise faults.ProviderNotEnabled(prov=name)
        driver = self.provider(name)
        found = (driver.flavor_capabilities() if what == "flavor"
                 else driver.availability_zone_capabilities())
        return [{"name": k, "description": v} for k, v in found.items()]

    def amphorae(self, ctx: Context) -> list[dict[str, Any]]:
        """No provider here runs amphorae: the list is empty, as Octavia's
        for load balancers of a provider without them."""
        self.policy.authorize(ctx, "amphora", "get_all", ctx.project_id)
        return []

    def amphora(self, ctx: Context, action: str, amphora_id: str) -> None:
        self.policy.authorize(ctx, "amphora", action, ctx.project_id)
        raise faults.NotFound(resource="Amphora", id=amphora_id)

    # -- the RPC process -------------------------------------------------------

    def _enabled(self) -> list[papi.ProviderDriver]:
        return [self.provider(n) for n in self.conf.octavia.enabled_provider_drivers]

    def rpc_endpoints(self) -> dict[str, list[Any]]:
        out: dict[str, list[Any]] = {}
        for driver in self._enabled():
            for topic, endpoints in driver.rpc_endpoints().items():
                out.setdefault(topic, []).extend(endpoints)
        return out

    def periodic_tasks(self) -> list[PeriodicTask]:
        return [task for driver in self._enabled() for task in driver.periodic_tasks()]

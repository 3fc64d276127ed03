"""What L3 agents call on the server (topic ``q-l3-plugin``), as upstream's
L3RpcCallback: the routers their host serves, in the shape upstream's
agent reads (``gw_port``, ``_interfaces``, ``_floatingips`` with each
port's subnets and MTU; ``_conntrack_helpers`` with that plugin), and the
floating IPs' status as they applied it.

A host's routers are loaded in a fixed number of queries, however many
routers, ports and floating IPs it has.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Callable

import netaddr
import oslo_messaging
import sqlalchemy as sa

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import store
from neutrino.plugins.l3 import common as c
from neutrino.plugins.l3 import conntrack_helpers as cths
from neutrino.plugins.l3 import dvr_hosts, dvr_sync
from neutrino.plugins.l3 import floatingips as fips_mod
from neutrino.plugins.l3 import ha as ha_mod
from neutrino.plugins.l3 import ndp_proxies as nps
from neutrino.plugins.l3 import port_forwardings as pfs
from neutrino.plugins.l3 import routers as routers_mod
from neutrino.plugins.l3 import scheduler as sched

if TYPE_CHECKING:
    from oslo_config import cfg

    from neutrino.db.engine import Database
    from neutrino.plugins.core import CorePlugin
    from neutrino.plugins.l3.scheduler import Scheduler

LOG = logging.getLogger(__name__)

FIP_STATUSES = ("ACTIVE", "DOWN", "ERROR")
HOST_ID = "binding:host_id"
CONNTRACK_HELPER = "CONNTRACKHELPER"  # the service type of the conntrack helper plugin
PORT_FORWARDING = "PORTFORWARDING"  # the service type of the port forwarding plugin


def _subnet_info(subnet: dict[str, Any]) -> dict[str, Any]:
    return {"id": subnet["id"], "cidr": subnet["cidr"], "gateway_ip": subnet["gateway_ip"],
            "dns_nameservers": subnet["dns_nameservers"],
            "ipv6_ra_mode": subnet["ipv6_ra_mode"], "subnetpool_id": subnet["subnetpool_id"]}


class L3RpcEndpoint:
    # 1.x of upstream's L3 plugin API; methods for HA, DVR and prefix
    # delegation are absent with those features.
    target = oslo_messaging.Target(version="1.13")

    def __init__(self, core: CorePlugin, conf: cfg.ConfigOpts, db: Database,
                 scheduler: Scheduler, ha: ha_mod.HighAvailability,
                 services: Callable[[], list[str]], with_qos: bool = False) -> None:
        self.core = core
        self.conf = conf
        self.db = db
        self.scheduler = scheduler
        self.ha = ha
        self.services = services  # the loaded service types
        self.dvr = dvr_sync.DvrSync(core, db)
        # ``qos-fip``, ``qos-gateway-ip``: floating IPs and gateway info carry
        # their ``qos_policy_id``, and so does the gateway port (upstream's sync data)
        self.with_qos = with_qos

    # -- routers -----------------------------------------------------------------

    def _host_router_ids(self, host: str, router_ids: list[str] | None) -> list[str]:
        scheduler = self.scheduler
        if self.conf.router_auto_schedule:
            scheduler.auto_schedule(host)
        with self.db.reader() as conn:
            agent = scheduler.agent_on_host(conn, host)
            if agent is None or not agent.admin_state_up:
                return []
            ids = scheduler.router_ids_on_agent(conn, agent.id)
            if sched.agent_mode(agent) in dvr_hosts.DVR_MODES:
                ids = sorted({*ids, *dvr_hosts.router_ids_on_host(conn, host)})
        if router_ids:
            ids = [r for r in ids if r in set(router_ids)]
        return ids

    def update_ha_routers_states(self, context: Any, **kwargs: Any) -> None:
        """``l3-ha``: an agent reports {router_id: active|standby} on its host."""
        host, states = kwargs.get("host"), kwargs.get("states") or {}
        with self.db.reader() as conn:
            agent = self.scheduler.agent_on_host(conn, host)
        if agent is None:
            return
        self.ha.set_states(agent.id, states)
        active = sorted(r for r, s in states.items() if s == "active")
        if active:  # as upstream: the router's ports are bound where it is active
            self._bind_router_ports(host, active)

    def _bind_router_ports(self, host: str, router_ids: list[str]) -> None:
        """Gateway and interface ports of ``router_ids`` bound to ``host``, so
        that host's L2 agent wires them (a port update reaches every L2 agent)."""
        admin = Context.admin()
        rp = t.routerports.c
        with self.db.reader() as conn:
            port_ids = list(conn.execute(sa.select(rp.port_id).where(
                rp.router_id.in_(router_ids), rp.port_type != ha_mod.HA_INTERFACE)).scalars())
        elsewhere = [port_id for port_id, port in self._ports(admin, port_ids).items()
                     if port.get(HOST_ID) != host]
        if elsewhere:
            self.core.bind_ports(admin, elsewhere, host)

    def get_router_ids(self, context: Any, host: str, **kwargs: Any) -> list[str]:
        return self._host_router_ids(host, None)

    def sync_routers(self, context: Any, host: str, router_ids: list[str] | None = None,
                     **kwargs: Any) -> list[dict[str, Any]]:
        ids = self._host_router_ids(host, router_ids)
        routers = self.sync_data(ids) if ids else []
        if any(r.get("distributed") for r in routers):
            with self.db.reader() as conn:
                agent = self.scheduler.agent_on_host(conn, host)
            self.dvr.extend(host, agent, routers,
                            lambda ids: self._ports(Context.admin(), ids))
        self._ha_interfaces(host, routers)
        self._ensure_host(host, routers)
        return routers

    def _ha_interfaces(self, host: str, routers: list[dict[str, Any]]) -> None:
        """``l3-ha``: each HA router gets this host's HA port (``_ha_interface``)
        and the state the server last heard from this host (``_ha_state``)."""
        ha = [r for r in routers if r.get("ha")]
        if not ha:
            return
        b = t.ha_router_agent_port_bindings.c
        with self.db.reader() as conn:
            agent = self.scheduler.agent_on_host(conn, host)
            rows = list(conn.execute(sa.select(b.router_id, b.port_id, b.state).where(
                b.router_id.in_([r["id"] for r in ha]), b.l3_agent_id == agent.id))
                ) if agent is not None else []
        ports = self._ports(Context.admin(), [row.port_id for row in rows])
        mine = {row.router_id: (ports.get(row.port_id), row.state) for row in rows}
        for router in ha:
            port, state = mine.get(router["id"], (None, None))
            if port is not None:
                router["_ha_interface"], router["_ha_state"] = port, state

    def sync_data(self, router_ids: list[str]) -> list[dict[str, Any]]:
        """Upstream's sync data of the enabled routers among ``router_ids``."""
        admin = Context.admin()
        with self.db.reader() as conn:
            rows = [r for part in store.chunks(router_ids) for r in conn.execute(
                sa.select(t.routers).where(t.routers.c.id.in_(part),
                                           t.routers.c.admin_state_up.is_(True)))]
            routers = routers_mod.to_dicts(conn, rows, self.with_qos)
            rp = t.routerports.c
            links = [r for part in store.chunks([r.id for r in rows]) for r in conn.execute(
                sa.select(rp.router_id, rp.port_id, rp.port_type)
                .where(rp.router_id.in_(part)))]
            fip_rows = [r for part in store.chunks([r.id for r in rows]) for r in conn.execute(
                sa.select(t.floatingips).where(t.floatingips.c.router_id.in_(part)))]
            fips = fips_mod.to_dicts(conn, fip_rows, self.with_qos)
            helpers = (cths.of_routers(conn, [r.id for r in rows])
                       if CONNTRACK_HELPER in self.services() else None)
            ids = [r.id for r in rows]
            forwardings = (pfs.of_routers(conn, ids)
                           if PORT_FORWARDING in self.services() else None)
            ndp_state, proxies = nps.state(conn, ids), nps.of_routers(conn, ids)
        ports = self._ports(admin, [link.port_id for link in links])
        by_router: dict[str, dict[str, Any]] = {r["id"]: r for r in routers}
        vr_ids = self._vr_ids(rows)
        for router, row in zip(routers, rows):
            router.update(gw_port_id=row.gw_port_id, enable_snat=row.enable_snat,
                          _interfaces=[], _floatingips=[], _snat_router_interfaces=[],
                          enable_ndp_proxy=bool(row.gw_port_id and ndp_state.get(row.id)),
                          _ndp_proxies=proxies.get(row.id, []))
            if row.id in vr_ids:
                router.update(ha=True, ha_vr_id=vr_ids[row.id])
        for link in links:
            port = ports.get(link.port_id)
            if port is None or link.port_type == ha_mod.HA_INTERFACE:
                continue
            router = by_router[link.router_id]
            if link.port_type == c.GATEWAY:
                router["gw_port"] = port
                if self.with_qos:
                    info = router.get("external_gateway_info") or {}
                    port["qos_policy_id"] = info.get("qos_policy_id")
            elif link.port_type == dvr_sync.CENTRALIZED_SNAT:
                router["_snat_router_interfaces"].append(port)
            else:
                router["_interfaces"].append(port)
        for fip in fips:
            by_router[fip["router_id"]]["_floatingips"].append(fip)
        if forwardings is not None:  # upstream's agent extension pulls them per router
            for router in routers:
                router["_port_forwardings"] = forwardings.get(router["id"], [])
        if helpers is not None:  # upstream's agent extension pulls them per router
            for router in routers:
                router["_conntrack_helpers"] = [cths.to_dict(h)
                                                for h in helpers.get(router["id"], [])]
        return routers

    def _vr_ids(self, rows: list[Any]) -> dict[str, int]:
        """Each HA router's VRRP id (allocated with its first HA port)."""
        ids = [r.id for r in rows if r.ha]
        if not ids:
            return {}
        v = t.ha_router_vrid_allocations.c
        with self.db.reader() as conn:
            return {row.router_id: row.vr_id for part in store.chunks(ids)
                    for row in conn.execute(sa.select(v.router_id, v.vr_id).where(
                        v.router_id.in_(part)))}

    def _ports(self, admin: Context, port_ids: list[str]) -> dict[str, dict[str, Any]]:
        """Ports with their subnets' details and MTU, as the agent plugs them."""
        if not port_ids:
            return {}
        ports, _ = self.core.list(admin, "ports", store.ListQuery(filters={"id": port_ids}))
        net_ids = sorted({p["network_id"] for p in ports})
        subnets, _ = self.core.list(admin, "subnets",
                                    store.ListQuery(filters={"network_id": net_ids}))
        networks, _ = self.core.list(admin, "networks", store.ListQuery(filters={"id": net_ids}))
        mtu = {n["id"]: n.get("mtu") for n in networks}
        by_id = {s["id"]: s for s in subnets}
        for port in ports:
            on = [i["subnet_id"] for i in port["fixed_ips"]]
            port["subnets"] = [_subnet_info(by_id[s]) for s in on if s in by_id]
            port["extra_subnets"] = [_subnet_info(s) for s in subnets
                                     if s["network_id"] == port["network_id"]
                                     and s["id"] not in on]
            for fixed in port["fixed_ips"]:
                if fixed["subnet_id"] in by_id:
                    fixed["prefixlen"] = netaddr.IPNetwork(by_id[fixed["subnet_id"]]["cidr"]
                                                           ).prefixlen
            port["address_scopes"] = {"4": None, "6": None}
            port["mtu"] = mtu.get(port["network_id"])
        return {p["id"]: p for p in ports}

    def _ensure_host(self, host: str, routers: list[dict[str, Any]]) -> None:
        """The router's ports are bound to the host serving it (then L2 wires
        them): those of all routers at once (``bind_ports``), a cold sync
        binding every port of the host's routers."""
        unbound: dict[str, list[dict[str, Any]]] = {}
        for router in routers:
            # an HA router's own ports follow its active agent (update_ha_routers_states)
            mine = ([router.get("_ha_interface")] if router.get("ha")
                    else [router.get("gw_port"), *router["_interfaces"]])
            if router.get("distributed"):
                # ``dvr``: every host wires the distributed ports (bound once, to
                # the first host asking); the gateway and SNAT ports go with the
                # SNAT binding
                mine = [p for p in router["_interfaces"] if not p.get(HOST_ID)]
                if router.get("gw_port_host") == host:
                    mine += [router.get("gw_port"), *router["_snat_router_interfaces"]]
            for port in mine:
                if port is None or port.get(HOST_ID) == host and (
                        port.get("binding:vif_type") != "binding_failed"):
                    continue
                unbound.setdefault(port["id"], []).append(port)
        if not unbound:
            return
        bound = self.core.bind_ports(Context.admin(), list(unbound), host)
        for port_id in bound:  # a port gone meanwhile is left as it was read
            for port in unbound[port_id]:
                port[HOST_ID] = host

    # -- networks ----------------------------------------------------------------

    def get_external_network_id(self, context: Any, **kwargs: Any) -> str | None:
        with self.db.reader() as conn:
            ids = sorted(conn.execute(sa.select(t.externalnetworks.c.network_id)).scalars())
        if len(ids) > 1:
            raise errors.TooManyExternalNetworks()
        return ids[0] if ids else None

    def get_service_plugin_list(self, context: Any, **kwargs: Any) -> list[str]:
        return self.services()

    # -- floating IPs ------------------------------------------------------------

    def update_floatingip_statuses(self, context: Any, router_id: str,
                                   fip_statuses: dict[str, str], **kwargs: Any) -> None:
        """Statuses as the agent applied them (unknown floating IPs are
        skipped: deleted meanwhile)."""
        f = t.floatingips.c

        def op(conn: Any) -> None:
            ids = [i for i, status in fip_statuses.items() if status in FIP_STATUSES]
            current = dict(conn.execute(sa.select(f.id, f.status).where(f.id.in_(ids)))
                           .tuples().all()) if ids else {}
            for fip_id in sorted(current):
                if current[fip_id] != fip_statuses[fip_id]:
                    store.bump(conn, t.floatingips, fip_id, {"status": fip_statuses[fip_id]})
        self.core.write(op)

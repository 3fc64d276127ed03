"""``dvr``: what an L3 agent's ``sync_routers`` adds for distributed routers.

Upstream's DVR sync data, for the host asking:

- ``gw_port_host``: the host of the ``dvr_snat`` agent the router's SNAT
  part is bound to (that host builds the ``snat-`` namespace);
- ``_snat_router_interfaces``: the ``router_centralized_snat`` ports
  (apart from ``_interfaces``, the distributed ports every host plugs);
- each floating IP's ``host``: where its port is bound (the host that
  answers for it, through its ``fip-`` namespace);
- ``_floatingip_agent_interfaces``: this host's floating IP agent gateway
  port on the router's external network, made the first time the host
  has a floating IP of it (``network:floatingip_agent_gateway``, bound to
  the host, ``device_id`` the host's L3 agent);
- ``_arp_entries``: the address and MAC of every other port on the
  router's subnets, which each host's router namespace holds as permanent
  neighbours (a router port on many hosts with one MAC cannot learn them:
  replies would go to the instance's own host's copy).
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import store
from neutrino.plugins.l3 import dvr_hosts

if TYPE_CHECKING:
    from neutrino.db.engine import Database
    from neutrino.plugins.core import CorePlugin

LOG = logging.getLogger(__name__)

CENTRALIZED_SNAT = "network:router_centralized_snat"


def snat_hosts(conn: Any, router_ids: list[str]) -> dict[str, str]:
    """The host of each router's (first) binding."""
    b, a = t.routerl3agentbindings.c, t.agents.c
    out: dict[str, str] = {}
    for part in store.chunks(router_ids):
        for row in conn.execute(sa.select(b.router_id, a.host).join(t.agents, a.id == b.l3_agent_id)
                                .where(b.router_id.in_(part)).order_by(b.binding_index)):
            out.setdefault(row.router_id, row.host)
    return out


def port_hosts(conn: Any, port_ids: list[str]) -> dict[str, str]:
    b = t.ml2_port_bindings.c
    return {row.port_id: row.host for part in store.chunks(sorted(set(port_ids)))
            for row in conn.execute(sa.select(b.port_id, b.host).where(b.port_id.in_(part)))}


def arp_entries(conn: Any, subnet_ids: list[str]) -> dict[str, list[dict[str, str]]]:
    """Per subnet, the (address, MAC) of its ports but distributed router ports."""
    ip, p = t.ipallocations.c, t.ports.c
    out: dict[str, list[dict[str, str]]] = {}
    for part in store.chunks(sorted(set(subnet_ids))):
        for row in conn.execute(sa.select(ip.subnet_id, ip.ip_address, p.mac_address)
                                .join(t.ports, p.id == ip.port_id)
                                .where(ip.subnet_id.in_(part),
                                       p.device_owner != dvr_hosts.INTERFACE_DISTRIBUTED)
                                .order_by(ip.ip_address)):
            out.setdefault(row.subnet_id, []).append(
                {"ip_address": row.ip_address, "mac_address": row.mac_address,
                 "subnet_id": row.subnet_id})
    return out


class DvrSync:
    def __init__(self, core: CorePlugin, db: Database) -> None:
        self.core = core
        self.db = db

    def extend(self, host: str, agent: Any, routers: list[dict[str, Any]],
               load_ports: Any) -> None:
        """Add the DVR keys to the distributed ones among ``routers``
        (``load_ports``: ids -> the ports as the sync data shows them)."""
        dist = [r for r in routers if r.get("distributed")]
        if not dist:
            return
        ids = [r["id"] for r in dist]
        subnets = {r["id"]: sorted({i["subnet_id"] for port in r["_interfaces"]
                                    for i in port["fixed_ips"]}) for r in dist}
        with self.db.reader() as conn:
            gw_hosts = snat_hosts(conn, ids)
            fixed_hosts = port_hosts(conn, [f["port_id"] for r in dist
                                            for f in r["_floatingips"] if f.get("port_id")])
            arp = arp_entries(conn, [s for subs in subnets.values() for s in subs])
        for router in dist:
            router["gw_port_host"] = gw_hosts.get(router["id"])
            for fip in router["_floatingips"]:
                fip["host"] = fixed_hosts.get(fip.get("port_id") or "")
            router["_arp_entries"] = [e for s in subnets[router["id"]] for e in arp.get(s, [])]
            router["_floatingip_agent_interfaces"] = []
        if agent is None:
            return
        wanted = sorted({r["gw_port"]["network_id"] for r in dist if r.get("gw_port")
                         and any(f.get("host") == host for f in r["_floatingips"])})
        external = {r["gw_port"]["network_id"] for r in dist if r.get("gw_port")}
        self.drop_unused_gateways(host, sorted(external - set(wanted)))
        gateways = self.agent_gateways(host, agent.id, wanted, load_ports)
        for router in dist:
            gw = router.get("gw_port")
            if gw and gw["network_id"] in gateways:
                router["_floatingip_agent_interfaces"] = [gateways[gw["network_id"]]]

    def drop_unused_gateways(self, host: str, network_ids: list[str]) -> None:
        """The host's agent gateway ports on ``network_ids`` go once no
        floating IP of those networks has its port on the host (as upstream's
        agent gateway port goes with the host's last floating IP)."""
        if not network_ids:
            return
        p, b, f = t.ports.c, t.ml2_port_bindings.c, t.floatingips.c
        with self.db.reader() as conn:
            used = {row.floating_network_id for row in conn.execute(
                sa.select(f.floating_network_id).distinct()
                .join(t.ml2_port_bindings, b.port_id == f.fixed_port_id)
                .where(f.floating_network_id.in_(network_ids), b.host == host))}
            idle = [row.id for row in conn.execute(
                sa.select(p.id).join(t.ml2_port_bindings, b.port_id == p.id)
                .where(p.device_owner == dvr_hosts.FIP_AGENT_GATEWAY, b.host == host,
                       p.network_id.in_(sorted(set(network_ids) - used))))]
        for port_id in idle:
            try:
                self.core.delete(Context.admin(), "ports", port_id)
            except errors.NotFound:
                pass

    def agent_gateways(self, host: str, agent_id: str, network_ids: list[str],
                       load_ports: Any) -> dict[str, dict[str, Any]]:
        """This host's floating IP agent gateway port on each network, made when missing."""
        if not network_ids:
            return {}
        p, b = t.ports.c, t.ml2_port_bindings.c
        with self.db.reader() as conn:
            have = {row.network_id: row.id for row in conn.execute(
                sa.select(p.id, p.network_id).join(t.ml2_port_bindings, b.port_id == p.id)
                .where(p.device_owner == dvr_hosts.FIP_AGENT_GATEWAY, b.host == host,
                       p.network_id.in_(network_ids)))}
        for network_id in network_ids:
            if network_id in have:
                continue
            try:
                port = self.core.create(Context.admin(), "ports", [{
                    "project_id": "", "network_id": network_id, "name": "",
                    "admin_state_up": True, "device_id": agent_id,
                    "device_owner": dvr_hosts.FIP_AGENT_GATEWAY,
                    "binding:host_id": host, "port_security_enabled": False}])[0]
            except errors.NeutronException:
                LOG.exception("no floating IP agent gateway for %s on %s", host, network_id)
                continue
            have[network_id] = port["id"]
        ports = load_ports(list(have.values()))
        return {net: ports[pid] for net, pid in have.items() if pid in ports}

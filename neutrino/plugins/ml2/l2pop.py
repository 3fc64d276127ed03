"""l2population: tell tunnelling L2 agents which MAC/IP lives behind which
tunnel endpoint, so they pre-populate forwarding (and ARP) entries instead of
flooding to every host (upstream's l2pop driver and
``L2populationAgentNotifyAPI``, on ``q-agent-notifier-l2population-update``).

Entries are ``{network_id: {"segment_id", "network_type", "ports":
{tunnel_ip: [[mac, ip], ...]}}}``; the all-zero entry is the "flood to this
endpoint" entry a host needs once it has a port of the network.

- A port going ACTIVE on a host: everyone learns its MAC/IPs behind that
  host's ``tunneling_ip``; if it is the host's first active port of the
  network, everyone adds the host to the network's flooding list, and the
  host alone is told every other endpoint of the network and its ports.
- A port that was ACTIVE going DOWN, moving away or deleted: the reverse,
  the host's flooding entry going with its last active port of the network.
- Addresses of a bound port changing: ``update_fdb_entries`` with
  ``chg_ip`` (before/after).

Only segments of a type the host's agent tunnels (its ``l2pop_network_types``,
else ``tunnel_types``) are populated. Messages are computed after the change
is committed, from the database, in a fixed number of queries.
"""
from __future__ import annotations

import json
import logging
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from neutrino.db import tables as t
from neutrino.plugins import events as ev
from neutrino.plugins.l3 import dvr_hosts
from neutrino.plugins.ml2 import segments_db
from neutrino.plugins.ml2.agent_notifier import bound_segment
from neutrino.plugins.ml2.dvr_ports import serviceable
from neutrino.rpc import topics
from neutrino.rpc.casts import Casts

LOG = logging.getLogger(__name__)

FLOODING_ENTRY = ["00:00:00:00:00:00", "0.0.0.0"]
DVR_INTERFACE = "network:router_interface_distributed"
P, B, A = t.ports.c, t.ml2_port_bindings.c, t.agents.c
Fdb = dict[str, Any]


def _configurations(text: str | None) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def port_entries(port: dict[str, Any]) -> list[list[str]]:
    return [[port["mac_address"], ip["ip_address"]] for ip in port.get("fixed_ips") or []]


@dataclass(frozen=True)
class _Member:
    """A distributed router port on one of its hosts, as a row of ``_active_ports``."""
    id: str
    mac_address: str
    device_owner: str
    host: str


class L2Population:
    def __init__(self, db: Any, casts: Casts) -> None:
        self.db, self.casts = db, casts

    def subscribe(self, events: ev.Events) -> None:
        if self.casts.enabled:
            events.subscribe("ports", ev.AFTER_UPDATE, self._port_updated)
            events.subscribe("ports", ev.AFTER_DELETE, self._port_deleted)

    # -- casts (upstream's methods and argument) ------------------------------------------

    def _fanout(self, method: str, fdb: Fdb) -> None:
        if fdb:
            self.casts.cast(topics.L2POPULATION_UPDATE, method, fanout=True, fdb_entries=fdb)

    def _to_host(self, method: str, fdb: Fdb, host: str) -> None:
        if fdb:
            self.casts.cast(topics.L2POPULATION_UPDATE, method, server=host, fdb_entries=fdb)

    # -- lookups ---------------------------------------------------------------------

    @staticmethod
    def _tunnel_agents(conn: Any, hosts: list[str]) -> dict[str, dict[str, Any]]:
        """Per host, the configurations of its agent that has a tunnel endpoint."""
        out: dict[str, dict[str, Any]] = {}
        if hosts:
            for row in conn.execute(sa.select(A.host, A.configurations)
                                    .where(A.host.in_(sorted(set(hosts))))):
                conf = _configurations(row.configurations)
                if conf.get("tunneling_ip"):
                    out.setdefault(row.host, conf)
        return out

    @staticmethod
    def _segment(conn: Any, port: dict[str, Any], agent: dict[str, Any],
                 use_binding: bool = True) -> dict[str, Any] | None:
        """The port's segment if the agent populates its type: the bound one,
        or (binding gone: deleted, moved) the network's segment of such a type."""
        types = agent.get("l2pop_network_types") or agent.get("tunnel_types") or []
        segment = bound_segment(conn, port["id"]) if use_binding else None
        candidates = [segment] if segment else segments_db.dicts_of_network(
            conn, port["network_id"])
        return next((s for s in candidates if s and s["network_type"] in types), None)

    @staticmethod
    def _active_ports(conn: Any, network_id: str) -> list[Any]:
        active = list(conn.execute(
            sa.select(P.id, P.mac_address, P.device_owner, B.host)
            .join(t.ml2_port_bindings, B.port_id == P.id)
            .where(P.network_id == network_id, P.status == "ACTIVE", B.host != "")))
        # ``dvr``: a distributed router's port is on every host the router routes
        # on (upstream's per-host bindings), each a member of its network
        dvr_ports = list(conn.execute(sa.select(P.id, P.mac_address, P.device_id).where(
            P.network_id == network_id, P.device_owner == DVR_INTERFACE)))
        if dvr_ports:
            hosts = dvr_hosts.hosts_of(conn, sorted({r.device_id for r in dvr_ports}))
            have = {(r.id, r.host) for r in active}
            for row in dvr_ports:
                for host in sorted(hosts.get(row.device_id, ())):
                    if (row.id, host) not in have:
                        active.append(_Member(row.id, row.mac_address, DVR_INTERFACE, host))
        return active

    def distributed_member(self, port: dict[str, Any], host: str) -> None:
        """``dvr``: a port the distributed routers of its subnets serve went up
        on ``host``: the host is now a member of every network of those
        routers (their ports are there): it gets their entries, the others
        flood to it."""
        subnets = [i["subnet_id"] for i in port.get("fixed_ips") or ()]
        with self.db.reader() as conn:
            routers = dvr_hosts.routers_of_subnets(conn, subnets)
            if not routers:
                return
            networks = sorted({r.network_id for r in conn.execute(
                sa.select(P.network_id).where(P.device_owner == DVR_INTERFACE,
                                              P.device_id.in_(routers)))}
                              - {port["network_id"]})
            agent = self._tunnel_agents(conn, [host]).get(host)
            if agent is None:
                return
            agent_ip = agent["tunneling_ip"]
            updates = []
            for network_id in networks:
                segment = self._segment(conn, {"id": "", "network_id": network_id}, agent,
                                        use_binding=False)
                if segment is None:
                    continue
                _, peers = self._peer_entries(conn, network_id, host, agent_ip)
                updates.append((network_id, segment, peers))
        for network_id, segment, peers in updates:
            if peers:
                full = self._template(segment, network_id, agent_ip)
                full[network_id]["ports"] = peers
                self._to_host("add_fdb_entries", full, host)
            fanout = self._template(segment, network_id, agent_ip)
            fanout[network_id]["ports"][agent_ip].append(FLOODING_ENTRY)
            self._fanout("add_fdb_entries", fanout)

    @staticmethod
    def _template(segment: dict[str, Any], network_id: str, agent_ip: str) -> Fdb:
        return {network_id: {"segment_id": segment["segmentation_id"],
                             "network_type": segment["network_type"],
                             "ports": {agent_ip: []}}}

    # -- what changes ----------------------------------------------------------------

    def _peer_entries(self, conn: Any, network_id: str, host: str,
                      agent_ip: str) -> tuple[list[Any], dict[str, list[list[str]]]]:
        """The network's active ports and, per other endpoint, its flooding
        entry and its ports' MAC/IPs (what ``host`` needs to reach them)."""
        active = self._active_ports(conn, network_id)
        others = [r for r in active if r.host != host]
        agents = self._tunnel_agents(conn, [r.host for r in others])
        ips: dict[str, list[str]] = defaultdict(list)
        ids = [r.id for r in others]
        for part in range(0, len(ids), 500):
            for row in conn.execute(sa.select(t.ipallocations.c.port_id,
                                              t.ipallocations.c.ip_address)
                                    .where(t.ipallocations.c.port_id.in_(
                                        ids[part:part + 500]))):
                ips[row.port_id].append(row.ip_address)
        peers: dict[str, list[list[str]]] = {}
        for row in others:
            other_ip = (agents.get(row.host) or {}).get("tunneling_ip")
            if not other_ip or other_ip == agent_ip:
                continue
            entries = peers.setdefault(other_ip, [FLOODING_ENTRY])
            if row.device_owner != DVR_INTERFACE:
                entries.extend([row.mac_address, ip] for ip in ips[row.id])
        return active, peers

    def port_up(self, port: dict[str, Any], host: str) -> None:
        network_id = port["network_id"]
        with self.db.reader() as conn:
            agent = self._tunnel_agents(conn, [host]).get(host)
            segment = self._segment(conn, port, agent) if agent else None
            if agent is None or segment is None:
                return
            active, peers = self._peer_entries(conn, network_id, host, agent["tunneling_ip"])
        agent_ip = agent["tunneling_ip"]
        fanout = self._template(segment, network_id, agent_ip)
        mine = sum(1 for r in active if r.host == host)
        # Two: another port may have gone ACTIVE on the host at the same time.
        if mine in (1, 2):
            if peers:
                full = self._template(segment, network_id, agent_ip)
                full[network_id]["ports"] = peers
                self._to_host("add_fdb_entries", full, host)
            fanout[network_id]["ports"][agent_ip].append(FLOODING_ENTRY)
        if port.get("device_owner") != DVR_INTERFACE:
            fanout[network_id]["ports"][agent_ip].extend(port_entries(port))
        self._fanout("add_fdb_entries", fanout)

    def refresh_host(self, ports: list[dict[str, Any]], host: str) -> None:
        """An agent that lost its entries (restarted) reports ``ports`` up with
        ``refresh_tunnels``: send it the full entries of their networks, once
        per network (upstream's agent-restart case)."""
        with self.db.reader() as conn:
            agent = self._tunnel_agents(conn, [host]).get(host)
            if agent is None:
                return
            full: Fdb = {}
            for port in {p["network_id"]: p for p in ports}.values():
                segment = self._segment(conn, port, agent)
                if segment is None:
                    continue
                _, peers = self._peer_entries(conn, port["network_id"], host,
                                              agent["tunneling_ip"])
                if peers:
                    full[port["network_id"]] = {"segment_id": segment["segmentation_id"],
                                                "network_type": segment["network_type"],
                                                "ports": peers}
        self._to_host("add_fdb_entries", full, host)

    def port_down(self, port: dict[str, Any], host: str, use_binding: bool = True) -> None:
        network_id = port["network_id"]
        with self.db.reader() as conn:
            agent = self._tunnel_agents(conn, [host]).get(host)
            segment = self._segment(conn, port, agent, use_binding) if agent else None
            if agent is None or segment is None:
                return
            left = sum(1 for r in self._active_ports(conn, network_id)
                       if r.host == host and r.id != port["id"])
        agent_ip = agent["tunneling_ip"]
        fdb = self._template(segment, network_id, agent_ip)
        if left == 0:  # the host's last port of the network: stop flooding to it
            fdb[network_id]["ports"][agent_ip].append(FLOODING_ENTRY)
        if port.get("device_owner") != DVR_INTERFACE:
            fdb[network_id]["ports"][agent_ip].extend(port_entries(port))
        self._fanout("remove_fdb_entries", fdb)

    def ips_changed(self, original: dict[str, Any], port: dict[str, Any], host: str) -> None:
        before = {ip["ip_address"] for ip in original.get("fixed_ips") or []}
        after = {ip["ip_address"] for ip in port.get("fixed_ips") or []}
        gone, new = sorted(before - after), sorted(after - before)
        if not (gone or new):
            return
        with self.db.reader() as conn:
            agent = self._tunnel_agents(conn, [host]).get(host)
        if agent is None:
            return
        change: dict[str, Any] = {}
        if gone:
            change["before"] = [[port["mac_address"], ip] for ip in gone]
        if new:
            change["after"] = [[port["mac_address"], ip] for ip in new]
        self._fanout("update_fdb_entries",
                     {"chg_ip": {port["network_id"]: {agent["tunneling_ip"]: change}}})

    # -- event subscribers -------------------------------------------------------------

    def _port_updated(self, ctx: Any, original: dict[str, Any], port: dict[str, Any]) -> None:
        old_host = original.get("binding:host_id") or ""
        host = port.get("binding:host_id") or ""
        was, now = original.get("status"), port.get("status")
        if old_host and original.get("fixed_ips") != port.get("fixed_ips"):
            self.ips_changed(original, port, old_host)
        if old_host and old_host != host:
            if was == "ACTIVE":  # moved: the old host no longer has it
                self.port_down(original, old_host, use_binding=False)
        elif host and was != now:
            if now == "ACTIVE":
                self.port_up(port, host)
                if serviceable(port.get("device_owner") or ""):
                    self.distributed_member(port, host)
            elif was == "ACTIVE":
                self.port_down(port, host)

    def _port_deleted(self, ctx: Any, port: dict[str, Any]) -> None:
        host = port.get("binding:host_id") or ""
        if host and port.get("status") == "ACTIVE":
            self.port_down(port, host, use_binding=False)

"""The Linux bridge agent's reconcile loop.

Each pass: list the ``tap<port_id[:11]>`` devices of the host (the compute
service creates them; the agent only bridges them), ask the server about
the new and the changed ones, make sure each one's network has its bridge
``brq<network_id[:11]>`` with its uplink (``vxlan-<vni>`` for VXLAN, the
mapped interface for flat), put the tap in it, and report the devices up
or down. A network left without taps loses the bridge and the VXLAN device
the agent made. VLAN networks are not carried: this kernel has no 802.1Q
devices, so the agent reports only ``local``, ``flat`` and ``vxlan`` and
the mechanism driver binds nothing else here.

VXLAN floods go to every endpoint ``tunnel_sync`` lists (or to
``vxlan_group``); with ``l2_population`` the server's fdb messages add a
static forwarding and ARP entry per remote port, and the device does not
learn. Security groups are one nftables ruleset (``nftables``), rebuilt
when a filtered port or its groups change.

Casts (port update/delete, network delete, security group changes, fdb
messages) only mark work; the loop does it, and a restart resyncs all.
"""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any

from oslo_config import cfg

from neutrino.agents import secgroup_facts
from neutrino.agents.base import Agent, poll
from neutrino.agents.bridge_interface import bridge_name
from neutrino.agents.linuxbridge import config, nftables
from neutrino.agents.linuxbridge.linux import FLOOD_MAC, Host
from neutrino.agents.rpc import PluginApi
from neutrino.agents.secgroup_facts import PortFacts
from neutrino.rpc import topics

LOG = logging.getLogger(__name__)
TAP_PREFIX = "tap"
SYNC_EVERY = 5  # passes between tunnel_sync calls when nothing changed
NETWORK_TYPES = ("local", "flat", "vxlan")


def tap_name(port_id: str) -> str:
    return (TAP_PREFIX + port_id)[:14]


def vxlan_name(vni: int) -> str:
    return f"vxlan-{vni}"


@dataclass
class Wired:
    port_id: str
    network_id: str
    admin_up: bool


@dataclass(frozen=True)
class Net:
    network_type: str
    segmentation_id: int | None
    bridge: str
    uplink: str | None  # vxlan device or physical interface
    ours: bool  # False for a bridge of bridge_mappings: never deleted


class Endpoint:
    """The casts to L2 agents; each only marks work for the loop."""

    def __init__(self, agent: "LinuxBridgeAgent", version: str) -> None:
        import oslo_messaging
        self.target = oslo_messaging.Target(version=version)
        self.agent = agent

    def port_update(self, context: Any, **kwargs: Any) -> None:
        self.agent.mark_dirty((kwargs.get("port") or {}).get("id"))

    def port_delete(self, context: Any, **kwargs: Any) -> None:
        self.agent.mark_dirty(kwargs.get("port_id"))

    def network_delete(self, context: Any, **kwargs: Any) -> None:
        self.agent.network_changed(kwargs.get("network_id"))

    def network_update(self, context: Any, **kwargs: Any) -> None:
        self.agent.network_changed((kwargs.get("network") or {}).get("id"))

    def security_groups_rule_updated(self, context: Any, **kwargs: Any) -> None:
        self.agent.groups_changed(kwargs.get("security_groups") or [], members=False)

    def security_groups_member_updated(self, context: Any, **kwargs: Any) -> None:
        self.agent.groups_changed(kwargs.get("security_groups") or [], members=True)

    def security_groups_provider_updated(self, context: Any, **kwargs: Any) -> None:
        self.agent.groups_changed(None, members=True)

    def add_fdb_entries(self, context: Any, fdb_entries: dict[str, Any], **kw: Any) -> None:
        self.agent.fdb_changed(fdb_entries, add=True)

    def remove_fdb_entries(self, context: Any, fdb_entries: dict[str, Any], **kw: Any) -> None:
        self.agent.fdb_changed(fdb_entries, add=False)

    def update_fdb_entries(self, context: Any, fdb_entries: dict[str, Any], **kw: Any) -> None:
        for network_id, change in (fdb_entries.get("chg_ip") or {}).items():
            for ip, moves in change.items():
                for key, add in (("before", False), ("after", True)):
                    if moves.get(key):
                        self.agent.fdb_changed({network_id: {"ports": {ip: moves[key]}}}, add)


class LinuxBridgeAgent(Agent):
    agent_type = "Linux bridge agent"
    binary = "neutron-linuxbridge-agent"
    topic = "N/A"

    def __init__(self, conf: cfg.ConfigOpts, host: str | None = None,
                 plugin_rpc: Any = None, linux: Host | None = None) -> None:
        config.register(conf)
        super().__init__(conf, host)
        lb, vx = conf.LINUX_BRIDGE, conf.VXLAN
        self.interfaces = config.pairs(lb.physical_interface_mappings,
                                       "physical_interface_mappings", "interface")
        self.bridges = config.pairs(lb.bridge_mappings, "bridge_mappings", "bridge")
        self.vxlan = bool(vx.enable_vxlan and vx.local_ip)
        if vx.enable_vxlan and not vx.local_ip and conf.VXLAN.l2_population:
            raise ValueError("[vxlan] local_ip is required with l2_population")
        self.firewall = config.firewall(conf)
        self.linux = linux or Host(lb.namespace)
        self.plugin_rpc = plugin_rpc
        self.wired: dict[str, Wired] = {}  # tap -> its port
        self.nets: dict[str, Net] = {}
        self.peers: set[str] = set()
        self.l2pop: dict[str, dict[str, set[tuple[str, str]]]] = {}  # net -> ip -> entries
        self.facts: dict[str, PortFacts | None] = {}  # tap -> filtering (None: none)
        self.groups: dict[str, tuple[set[str], set[str]]] = {}
        self.ruleset: str | None = None
        self._dirty: set[str] = set()  # taps
        self._sg_dirty: set[str] = set()
        self._fdb_dirty = True
        self._lock = threading.Lock()
        self._first = True
        self._passes = 0

    def configurations(self) -> dict[str, Any]:
        return {"interface_mappings": self.interfaces, "bridge_mappings": self.bridges,
                "tunnel_types": ["vxlan"] if self.vxlan else [],
                "tunneling_ip": self.conf.VXLAN.local_ip if self.vxlan else None,
                "l2_population": bool(self.conf.VXLAN.l2_population),
                "network_types": [t for t in NETWORK_TYPES if t != "vxlan" or self.vxlan],
                "devices": len(self.wired)}

    # -- what casts mark ---------------------------------------------------------------

    def mark_dirty(self, port_id: str | None) -> None:
        if port_id:
            with self._lock:
                self._dirty.add(tap_name(port_id))

    def network_changed(self, network_id: str | None) -> None:
        with self._lock:
            self._dirty |= {tap for tap, w in self.wired.items() if w.network_id == network_id}

    def groups_changed(self, groups: list[str] | None, members: bool) -> None:
        with self._lock:
            for tap, (own, remote) in self.groups.items():
                if groups is None or (remote if members else own) & set(groups):
                    self._sg_dirty.add(tap)

    def fdb_changed(self, fdb: dict[str, Any], add: bool) -> None:
        with self._lock:
            for network_id, entry in fdb.items():
                if not isinstance(entry, dict):
                    continue
                known = self.l2pop.setdefault(network_id, {})
                for ip, ports in (entry.get("ports") or {}).items():
                    if ip == self.conf.VXLAN.local_ip:  # our own ports: bridged here
                        continue
                    mine = known.setdefault(ip, set())
                    for mac, address in ports:
                        (mine.add if add else mine.discard)((mac, address))
                    if not mine:
                        known.pop(ip)
            self._fdb_dirty = True

    # -- the loop ----------------------------------------------------------------------

    def run_once(self) -> dict[str, list[str]]:
        """One reconcile pass; returns the devices (port id prefixes) reported up and down."""
        if self.revival_seen():
            self.resync()
        links = self.linux.links()
        taps = {name: link for name, link in links.items() if name.startswith(TAP_PREFIX)}
        with self._lock:
            dirty, self._dirty = self._dirty, set()
            sg_dirty, self._sg_dirty = self._sg_dirty, set()
        todo = set(taps) if self._first else (
            {t for t in taps if t not in self.wired} | (dirty & set(taps)))
        if self.vxlan and (todo or self._first or self._passes % SYNC_EVERY == 0):
            self._sync_peers()
        up: list[str] = []
        down: list[str] = []
        if todo:
            answer = self.plugin_rpc.get_devices_details_list_and_failed_devices(
                sorted(t[len(TAP_PREFIX):] for t in todo))
            for details in answer.get("devices", []):
                self._wire(TAP_PREFIX + details["device"], taps, details, up, down)
            with self._lock:
                self._dirty |= {TAP_PREFIX + d for d in answer.get("failed_devices", [])}
        for tap in [t for t in self.wired if t not in taps]:
            down.append(tap[len(TAP_PREFIX):])
            self._forget(tap)
        self._prune_nets()
        self._sync_fdb()
        if self.firewall == "nftables":
            self._refresh_security((todo | sg_dirty) & set(self.wired))
            self._apply_ruleset()
        if up or down:
            result = self.plugin_rpc.update_device_list(up, down)
            with self._lock:
                self._dirty |= {TAP_PREFIX + d for d in result.get("failed_devices_up", [])}
        self._first = False
        self._passes += 1
        return {"up": up, "down": down}

    def _wire(self, tap: str, taps: dict[str, Any], details: dict[str, Any],
              up: list[str], down: list[str]) -> None:
        if tap not in taps:
            return
        net = self._net(details) if details.get("port_id") else None
        if net is None:  # unknown, bound elsewhere, or not a network this host carries
            if tap in self.wired or taps[tap].get("master", "").startswith("brq"):
                self.linux.release(tap)
            self._forget(tap)
            return
        network_id = details["network_id"]
        self._ensure_net(network_id, net, details.get("mtu"))
        admin_up = bool(details.get("admin_state_up", True))
        self.linux.enslave(tap, net.bridge, up=admin_up, mtu=details.get("mtu"))
        self.wired[tap] = Wired(details["port_id"], network_id, admin_up)
        (up if admin_up else down).append(details["device"])

    def _net(self, details: dict[str, Any]) -> Net | None:
        kind, network_id = details.get("network_type"), details["network_id"]
        physnet, vni = details.get("physical_network"), details.get("segmentation_id")
        own = bridge_name(network_id)
        if kind == "vxlan" and self.vxlan and vni:
            return Net(kind, int(vni), own, vxlan_name(int(vni)), True)
        if kind == "flat" and physnet in self.bridges:
            return Net(kind, None, self.bridges[physnet], None, False)
        if kind == "flat" and physnet in self.interfaces:
            return Net(kind, None, own, self.interfaces[physnet], True)
        if kind == "local":
            return Net(kind, None, own, None, True)
        LOG.error("network %s: %s segment (physical network %s) is not carried by this "
                  "agent", network_id, kind, physnet)
        return None

    def _ensure_net(self, network_id: str, net: Net, mtu: int | None) -> None:
        if self.nets.get(network_id) == net:
            return
        if net.ours:
            self.linux.ensure_bridge(net.bridge)
        if net.network_type == "vxlan" and net.uplink:
            vx = self.conf.VXLAN
            group = None if vx.l2_population else vx.vxlan_group
            self.linux.ensure_vxlan(net.uplink, net.segmentation_id or 0, vx.local_ip,
                                    vx.udp_dstport, group, learning=not vx.l2_population,
                                    ttl=vx.ttl, tos=vx.tos)
            self.linux.enslave(net.uplink, net.bridge, mtu=mtu)
            self._fdb_dirty = True
        elif net.uplink:
            self.linux.enslave(net.uplink, net.bridge)
        self.nets[network_id] = net

    def _forget(self, tap: str) -> None:
        self.wired.pop(tap, None)
        self.facts.pop(tap, None)
        self.groups.pop(tap, None)

    def _prune_nets(self) -> None:
        """A network without taps here loses what the agent made for it; a
        bridge that still holds another device (a DHCP or router port of a
        co-located agent) stays."""
        used = {w.network_id for w in self.wired.values()}
        gone = [n for n in self.nets if n not in used]
        if not gone:
            return
        links = self.linux.links()
        for network_id in gone:
            net = self.nets.pop(network_id)
            self.l2pop.pop(network_id, None)
            if not net.ours:
                continue
            if net.network_type == "vxlan" and net.uplink:
                self.linux.delete(net.uplink)
            elif net.uplink:
                self.linux.release(net.uplink)
            members = [name for name, link in links.items()
                       if link.get("master") == net.bridge and name != net.uplink]
            if not members:
                self.linux.delete(net.bridge)

    def _sync_peers(self) -> None:
        try:
            answer = self.plugin_rpc.tunnel_sync(self.conf.VXLAN.local_ip, "vxlan")
        except Exception:  # noqa: BLE001 - retried next pass
            LOG.exception("tunnel_sync failed")
            return
        peers = {t["ip_address"] for t in answer.get("tunnels", [])}
        if peers != self.peers:
            self.peers, self._fdb_dirty = peers, True

    def _sync_fdb(self) -> None:
        """Each VXLAN device floods to every peer (unless it uses a multicast
        group) and, with l2population, knows each remote port's endpoint."""
        with self._lock:
            if not self._fdb_dirty:
                return
            self._fdb_dirty = False
            l2pop = {n: {ip: set(e) for ip, e in v.items()} for n, v in self.l2pop.items()}
        vx = self.conf.VXLAN
        for network_id, net in self.nets.items():
            if net.network_type != "vxlan" or not net.uplink:
                continue
            known = l2pop.get(network_id, {})
            want: set[tuple[str, str]] = set()
            if vx.l2_population or not vx.vxlan_group:
                want |= {(FLOOD_MAC, ip) for ip in self.peers | set(known)}
            for ip, entries in known.items():
                want |= {(mac, ip) for mac, _ in entries if mac != FLOOD_MAC}
            have = self.linux.fdb(net.uplink)
            for mac, ip in sorted(have - want):
                if mac == FLOOD_MAC or vx.l2_population:
                    self.linux.fdb_del(net.uplink, mac, ip)
            for mac, ip in sorted(want - have):
                self.linux.fdb_add(net.uplink, mac, ip)
            for entries in known.values():
                for mac, address in entries:
                    if mac != FLOOD_MAC:
                        self.linux.neigh_replace(net.uplink, address, mac)

    def _refresh_security(self, taps: set[str]) -> None:
        if not taps:
            return
        ids = {self.wired[t].port_id: t for t in taps}
        try:
            info = self.plugin_rpc.security_group_info_for_devices(sorted(ids))
        except Exception:  # noqa: BLE001 - retried next pass
            LOG.exception("security_group_info_for_devices failed")
            with self._lock:
                self._sg_dirty |= taps
            return
        for port_id, tap in ids.items():
            self.groups[tap] = secgroup_facts.port_groups(info, port_id)
            self.facts[tap] = secgroup_facts.port_facts(info, port_id)

    def _apply_ruleset(self) -> None:
        ports = [nftables.FilteredPort(tap, facts) for tap, facts in sorted(self.facts.items())
                 if facts is not None and tap in self.wired and self.wired[tap].admin_up]
        text = nftables.ruleset(ports)
        if text != self.ruleset:
            self.linux.nft_load(text)
            self.ruleset = text

    # -- process -------------------------------------------------------------------------

    def start_notifications(self) -> None:
        wanted = {topics.PORT_UPDATE: "1.9", topics.PORT_DELETE: "1.9",
                  topics.NETWORK_DELETE: "1.9", topics.NETWORK_UPDATE: "1.9"}
        if self.firewall == "nftables":
            wanted[topics.SECURITY_GROUP_UPDATE] = topics.SG_AGENT_VERSION
        if self.conf.VXLAN.l2_population:
            wanted[topics.L2POPULATION_UPDATE] = "1.9"
        for topic, version in wanted.items():
            self.listen(topic, [Endpoint(self, version)])

    def resync(self) -> None:
        self._first, self.ruleset, self._fdb_dirty = True, None, True
        self.nets.clear()

    def run(self, stop: threading.Event) -> None:
        self.plugin_rpc = self.plugin_rpc or PluginApi(
            self.conf, f"lb-agent-{self.host}", self.host)
        self.start_reporting()
        self.start_notifications()
        interval = self.conf.AGENT.polling_interval
        LOG.info("Linux bridge agent on %s: polling every %ss", self.host, interval)
        poll(stop, interval, self.run_once, self.resync)
        self.stop()

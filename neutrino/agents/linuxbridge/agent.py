"""The Linux bridge agent's reconcile loop: read, plan (``plan``), apply, report.

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

import copy
import logging
import threading
from dataclasses import replace
from typing import Any

import oslo_messaging
from oslo_config import cfg

from neutrino.agents import l2_devices
from neutrino.agents.base import Agent, poll
from neutrino.agents.linuxbridge import plan
from neutrino.agents.linuxbridge.host import BridgeHost
from neutrino.agents.linuxbridge.linux import Host
from neutrino.agents.linuxbridge.plan import TAP_PREFIX, tap_name
from neutrino.agents.rpc import PluginApi
from neutrino.conf.agents import linuxbridge as config
from neutrino.rpc import topics

LOG = logging.getLogger(__name__)
NETWORK_TYPES = ("local", "flat", "vxlan")


class Endpoint(l2_devices.SecurityGroupCasts):
    """The casts to L2 agents; each only marks work for the loop."""

    agent: "LinuxBridgeAgent"

    def __init__(self, agent: "LinuxBridgeAgent", version: str) -> None:
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
                 plugin_rpc: Any = None, linux: BridgeHost | None = None) -> None:
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
        self.linux: BridgeHost = linux or Host(lb.namespace)
        self.plugin_rpc = plugin_rpc
        self.settings = plan.Settings(self.interfaces, self.bridges, self.vxlan, vx.local_ip,
                                      vx.udp_dstport, vx.vxlan_group, bool(vx.l2_population),
                                      vx.ttl, vx.tos, self.firewall == "nftables")
        self.known = plan.Known()
        self.l2pop: plan.L2pop = {}  # net -> ip -> entries, as the casts leave them
        self.marks = l2_devices.Marks()
        self._lock = self.marks.lock
        self._fdb_changed = False
        self._first = True
        self._passes = 0

    def configurations(self) -> dict[str, Any]:
        return {"interface_mappings": self.interfaces, "bridge_mappings": self.bridges,
                "tunnel_types": ["vxlan"] if self.vxlan else [],
                "tunneling_ip": self.conf.VXLAN.local_ip if self.vxlan else None,
                "l2_population": bool(self.conf.VXLAN.l2_population),
                "network_types": [t for t in NETWORK_TYPES if t != "vxlan" or self.vxlan],
                "devices": len(self.known.wired)}

    # -- what casts mark ---------------------------------------------------------------

    def mark_dirty(self, port_id: str | None) -> None:
        if port_id:
            self.marks.mark([tap_name(port_id)])

    def network_changed(self, network_id: str | None) -> None:
        self.marks.mark([tap for tap, w in self.known.wired.items()
                         if w.network_id == network_id])

    def groups_changed(self, groups: list[str] | None, members: bool) -> None:
        self.marks.mark(l2_devices.affected_by_groups(self.known.groups, groups, members),
                        security=True)

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
            self._fdb_changed = True

    # -- the loop: read, plan, apply, report -------------------------------------------

    def run_once(self) -> dict[str, list[str]]:
        """One reconcile pass; returns the devices (port id prefixes) reported up and down."""
        if self.revival_seen():
            self.resync()
        observed = self.observe()
        known = self.known
        asking = plan.to_ask(known, observed)
        peers = self.read_peers() if plan.polls_tunnel_sync(
            self.settings, observed, asking) else None
        devices, failed = l2_devices.read_details(
            self.plugin_rpc, [t[len(TAP_PREFIX):] for t in asking])
        answers = plan.Answers(devices, failed, peers)
        wiring = plan.wire(self.settings, known, observed, answers, asking)
        security = self.read_security(
            wiring, plan.security_to_read(self.settings, observed, wiring))
        fdbs = {device: self.linux.fdb(device) for device in plan.fdb_devices(wiring, observed)}
        decided = plan.plan_wired(self.settings, observed, wiring, answers, fdbs, security)
        self.marks.mark(decided.dirty)
        for call in decided.ops:
            getattr(self.linux, call.name)(*call.args, **call.kwargs)
        with self._lock:
            for network_id in decided.forget_l2pop:
                self.l2pop.pop(network_id, None)
        self.known = decided.known
        self.marks.mark(decided.sg_dirty, security=True)
        failed_up = l2_devices.report(self.plugin_rpc, decided.up, decided.down)
        self.marks.mark({TAP_PREFIX + d for d in failed_up})
        self._first = False
        self._passes += 1
        return {"up": decided.up, "down": decided.down}

    def observe(self) -> plan.Observed:
        """The host's links and what the casts marked since the last pass."""
        links = self.linux.links()
        dirty, sg_dirty = self.marks.take()
        with self._lock:
            fdb_changed, self._fdb_changed = self._fdb_changed, False
            l2pop = copy.deepcopy(self.l2pop)
        return plan.Observed(links, self._first, self._passes, dirty, sg_dirty, fdb_changed,
                             l2pop)

    def read_peers(self) -> set[str] | None:
        try:
            answer = self.plugin_rpc.tunnel_sync(self.conf.VXLAN.local_ip, "vxlan")
        except Exception:  # noqa: BLE001 - retried next pass
            LOG.exception("tunnel_sync failed")
            return None
        return {t["ip_address"] for t in answer.get("tunnels", [])}

    def read_security(self, wiring: plan.Wiring, taps: set[str]) -> dict[str, Any] | None:
        """The security facts of the ports of ``taps`` (one call); None if the
        server failed (the plan marks them for the next pass)."""
        if not taps:
            return {}
        ids = sorted(wiring.known.wired[t].port_id for t in taps)
        try:
            info: dict[str, Any] = self.plugin_rpc.security_group_info_for_devices(ids)
            return info
        except Exception:  # noqa: BLE001 - retried next pass
            LOG.exception("security_group_info_for_devices failed")
            return None

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
        self._first = True
        self.known = replace(self.known, nets={}, ruleset=None, fdb_due=True)

    def run(self, stop: threading.Event) -> None:
        self.plugin_rpc = self.plugin_rpc or PluginApi(
            self.conf, f"lb-agent-{self.host}", self.host)
        self.start_reporting()
        self.start_notifications()
        interval = self.conf.AGENT.polling_interval
        LOG.info("Linux bridge agent on %s: polling every %ss", self.host, interval)
        poll(stop, interval, self.run_once, self.resync, agent="linuxbridge")
        self.stop()

"""The OVS agent's reconcile loop.

Each pass: scan br-int for VIF ports (``external_ids:iface-id``), ask the
server what the new and changed ones are (their network segment), give
each network a host-local VLAN and each port its tag, compute every flow
from that state (``flows``), program only the difference, and report the
devices up or down. Restarting is a full resync: the local VLANs are read
back from the ports' ``other_config`` so wired ports keep their tags, all
flows are re-added under this run's cookie and then the flows of other
cookies (an earlier run's, now stale) are deleted — no flow is missing in
between and none is left twice.

With ``[agent] l2_population`` the tunnel peers, flood lists and remote
MACs come from the server's l2population casts (``l2pop``) instead of
polling ``tunnel_sync``; the first pass reports its devices with
``refresh_tunnels`` so the server sends this host the full entries of its
networks again (a restart loses them).

With ``[agent] extensions = qos`` the ports' QoS policies (their own or
their network's, named in the device details) are pulled from the server
and enforced (``qos``: meters, shaping, DSCP); the server's fanout ``push``
of a changed policy updates them live.

Port-update notifications (upstream's fanout ``port_update``) only mark a
port dirty; the next pass re-reads it from the server. That pass starts at
once, as it does when the switch reports a VIF plugged, unplugged or
changed (``OvsCtl.watch_vifs``): a new instance's port is wired in about a
tenth of a second instead of up to a polling interval later, which stays
the longest a pass waits (upstream's agent waits it out every time).

With ``[securitygroup] firewall_driver = openvswitch`` each pass also asks
the server's ``security_group_info_for_devices`` about the ports it
(re)wired and turns the answer into br-int flows (``firewall``), programmed
with the rest under the same cookie. The security-group fanouts (rule or
member updated) mark the ports of the named groups, and the ports whose
rules name them as remote, for a re-read.
"""
from __future__ import annotations

import logging
import random
import threading
from dataclasses import dataclass
from typing import Any

from oslo_config import cfg

from neutrino.agents import secgroup_facts
from neutrino.agents.base import Agent, poll
from neutrino.agents.ovs import config, firewall, flows, l2pop, qos
from neutrino.agents.ovs.ovsctl import OvsCtl, VifPort
from neutrino.agents.rpc import PluginApi
from neutrino.rpc import topics

LOG = logging.getLogger(__name__)

# server -> agents fanouts, upstream's topic names
PORT_UPDATE_TOPIC = topics.PORT_UPDATE
PORT_DELETE_TOPIC = topics.PORT_DELETE
SG_UPDATE_TOPIC = topics.SECURITY_GROUP_UPDATE
L2POP_TOPIC = topics.L2POPULATION_UPDATE
QOS_TOPIC = topics.QOS_POLICY_PUSH
TUNNEL_SYNC_EVERY = 5  # passes between tunnel_sync calls when nothing changed
DETAILS_CHUNK = 100  # devices per get_devices_details_list call: no call outlives its timeout


@dataclass
class Wired:
    port: VifPort
    network_id: str
    admin_up: bool


class NotifierEndpoint:
    """What the server casts to L2 agents; each only marks work for the loop."""

    def __init__(self, agent: "OvsAgent") -> None:
        import oslo_messaging
        self.target = oslo_messaging.Target(version="1.9")
        self.agent = agent

    def port_update(self, context: Any, **kwargs: Any) -> None:
        port = kwargs.get("port") or {}
        if port.get("id"):
            self.agent.mark_dirty(port["id"])

    def port_delete(self, context: Any, **kwargs: Any) -> None:
        if kwargs.get("port_id"):
            self.agent.mark_dirty(kwargs["port_id"])


class SecurityGroupEndpoint:
    """The security-group fanouts; each only marks the affected ports."""

    def __init__(self, agent: "OvsAgent") -> None:
        import oslo_messaging
        self.target = oslo_messaging.Target(version="1.1")
        self.agent = agent

    def security_groups_rule_updated(self, context: Any, **kwargs: Any) -> None:
        self.agent.groups_changed(kwargs.get("security_groups") or [], members=False)

    def security_groups_member_updated(self, context: Any, **kwargs: Any) -> None:
        self.agent.groups_changed(kwargs.get("security_groups") or [], members=True)

    def security_groups_provider_updated(self, context: Any, **kwargs: Any) -> None:
        self.agent.groups_changed(None, members=True)


class L2populationEndpoint:
    """The l2population casts (fanout, or to this host alone): each changes
    the agent's forwarding entries; the loop turns them into ports and flows."""

    def __init__(self, agent: "OvsAgent") -> None:
        import oslo_messaging
        self.target = oslo_messaging.Target(version="1.0")
        self.agent = agent

    def add_fdb_entries(self, context: Any, fdb_entries: dict[str, Any],
                        host: str | None = None, **kwargs: Any) -> None:
        if host is None or host == self.agent.host:
            self.agent.fdb_changed("add", fdb_entries)

    def remove_fdb_entries(self, context: Any, fdb_entries: dict[str, Any],
                           host: str | None = None, **kwargs: Any) -> None:
        if host is None or host == self.agent.host:
            self.agent.fdb_changed("remove", fdb_entries)

    def update_fdb_entries(self, context: Any, fdb_entries: dict[str, Any],
                           host: str | None = None, **kwargs: Any) -> None:
        if host is None or host == self.agent.host:
            self.agent.fdb_changed("update", fdb_entries)


class QosPushEndpoint:
    """The server's fanout of changed QoS policies."""

    def __init__(self, agent: "OvsAgent") -> None:
        import oslo_messaging
        self.target = oslo_messaging.Target(version="1.0")
        self.agent = agent

    def push(self, context: Any, resource_list: list[dict[str, Any]] | None = None,
             event_type: str = "updated", **kwargs: Any) -> None:
        self.agent.policies_pushed(resource_list or [], event_type == "deleted")


class OvsAgent(Agent):
    agent_type = "Open vSwitch agent"
    binary = "neutron-openvswitch-agent"
    topic = "N/A"

    def __init__(self, conf: cfg.ConfigOpts, host: str | None = None,
                 ovs: OvsCtl | None = None, plugin_rpc: Any = None) -> None:
        config.register(conf)
        super().__init__(conf, host)
        self.bridges = flows.Bridges(conf.OVS.integration_bridge, conf.OVS.tunnel_bridge,
                                     conf.OVS.tun_peer_patch_port, conf.OVS.int_peer_patch_port)
        self.mappings = config.bridge_mappings(conf)
        self.tunnel_types = list(conf.AGENT.tunnel_types)
        if self.tunnel_types and not conf.OVS.local_ip:
            raise ValueError("[ovs] local_ip is required when [agent] tunnel_types is set")
        self.l2pop = bool(conf.AGENT.l2_population and self.tunnel_types)
        self.arp_responder = bool(conf.AGENT.arp_responder and self.l2pop)
        self.fdb = l2pop.Fdb(conf.OVS.local_ip)
        self.qos = "qos" in [e.strip() for e in conf.AGENT.extensions]
        self.policies: dict[str, dict[str, Any]] = {}  # QoS policy id -> policy
        self.port_policy: dict[str, str | None] = {}  # port id -> its QoS policy id
        self.meters: dict[int, qos.Limit] = {}  # applied: meter id (ofport) -> limit
        self.shaped: dict[str, qos.Limit] = {}  # applied: port name -> limit
        self._stale_meters: set[int] = set()
        self.ovs = ovs or OvsCtl(conf.OVS.ovsdb_connection, conf.OVS.ovsdb_timeout)
        self.plugin_rpc = plugin_rpc
        self.cookie = random.getrandbits(63) | 1
        self.vlans: dict[str, int] = {}
        self.nets: dict[str, flows.LocalNet] = {}
        self.wired: dict[str, Wired] = {}
        self.tunnels: dict[str, str] = {}  # port name -> type
        self._retiring: set[str] = set()  # tunnel ports to delete once off the flows
        self._tags: list[tuple[str, int, dict[str, str]]] = []  # this pass's, in one go
        self.programmed: dict[str, set[flows.Flow]] = {}
        self._dirty: set[str] = set()
        self._sg_dirty: set[str] = set()
        self._lock = threading.Lock()
        # set by the switch (a VIF came, went or changed) and by the server's
        # port notifications: the loop's next pass starts at once
        self._wake = threading.Event()
        self._first = True
        self._passes = 0
        self.firewall = firewall.driver_name(conf.SECURITYGROUP.firewall_driver)
        # port id -> its filtering (None: not filtered), and the groups it uses
        # (its own, and those its rules name as remote) for the fanouts
        self.port_security: dict[str, firewall.PortSecurity | None] = {}
        self.port_groups: dict[str, tuple[set[str], set[str]]] = {}

    def configurations(self) -> dict[str, Any]:
        return {"bridge_mappings": self.mappings, "tunnel_types": self.tunnel_types,
                "tunneling_ip": self.conf.OVS.local_ip,
                "integration_bridge": self.bridges.integration,
                "datapath_type": self.conf.OVS.datapath_type, "ovs_hybrid_plug": False,
                "l2_population": self.l2pop, "arp_responder_enabled": self.arp_responder,
                "enable_distributed_routing": False, "devices": len(self.wired)}

    def mark_dirty(self, port_id: str) -> None:
        with self._lock:
            self._dirty.add(port_id)
        self._wake.set()

    def fdb_changed(self, how: str, fdb_entries: dict[str, Any]) -> None:
        with self._lock:
            getattr(self.fdb, how)(fdb_entries)

    def policies_pushed(self, policies: list[dict[str, Any]], deleted: bool) -> None:
        with self._lock:
            for policy in policies:
                if deleted:
                    self.policies.pop(policy["id"], None)
                elif policy["id"] in self.policies or policy["id"] in self.port_policy.values():
                    self.policies[policy["id"]] = policy

    def groups_changed(self, groups: list[str] | None, members: bool) -> None:
        """Mark the ports a group change affects (all of them if ``groups`` is None):
        a rule change affects the group's ports, a member change the ports
        whose rules name the group as remote."""
        with self._lock:
            for port_id, (own, remote) in self.port_groups.items():
                if groups is None or (remote if members else own) & set(groups):
                    self._sg_dirty.add(port_id)

    # -- set-up ----------------------------------------------------------------------

    def setup_bridges(self) -> None:
        dp = self.conf.OVS.datapath_type
        b = self.bridges
        self.ovs.ensure_bridge(b.integration, dp)
        if self.tunnel_types:
            self.ovs.ensure_bridge(b.tunnel, dp)
            self.ovs.ensure_patch(b.integration, b.patch_tun, b.patch_int)
            self.ovs.ensure_patch(b.tunnel, b.patch_int, b.patch_tun)
        for bridge in self.mappings.values():
            if not self.ovs.bridge_exists(bridge):
                LOG.error("bridge %s of bridge_mappings does not exist", bridge)
                continue
            self.ovs.ensure_patch(b.integration, flows.int_patch_name(bridge),
                                  flows.phys_patch_name(bridge))
            self.ovs.ensure_patch(bridge, flows.phys_patch_name(bridge),
                                  flows.int_patch_name(bridge))
        if self.tunnel_types:
            self.tunnels = {name: self._tunnel_kind(name)
                            for name in self.ovs.tunnel_ports(b.tunnel)}

    @staticmethod
    def _tunnel_kind(port_name: str) -> str:
        return port_name.split("-", 1)[0]

    def recover_vlans(self, ports: list[VifPort]) -> None:
        """Read back the local VLANs an earlier run gave networks (restart keeps tags)."""
        for port in ports:
            net = port.other_config.get("net_uuid")
            if net and port.tag and port.tag != flows.DEAD_VLAN:
                self.vlans.setdefault(net, port.tag)

    # -- the loop ----------------------------------------------------------------------

    def sync_tunnels(self) -> None:
        if not self.tunnel_types:
            return
        if self.l2pop:
            self.sync_l2pop_tunnels()
            return
        local_ip = self.conf.OVS.local_ip
        for kind in self.tunnel_types:
            peers = self.plugin_rpc.tunnel_sync(local_ip, kind).get("tunnels", [])
            for peer in peers:
                name = flows.tunnel_port_name(kind, peer["ip_address"])
                if name not in self.tunnels:
                    self.ovs.ensure_tunnel(self.bridges.tunnel, name, kind, local_ip,
                                           peer["ip_address"])
                    self.tunnels[name] = kind
                    LOG.info("tunnel %s to %s (%s)", name, peer["ip_address"], peer["host"])

    def sync_l2pop_tunnels(self) -> None:
        """Tunnel ports to exactly the peers the forwarding entries name for the
        networks wired here. Ports an earlier run left get a few passes'
        grace, the time for the server's full entries to arrive."""
        with self._lock:
            wanted = l2pop.wanted_tunnels(self.fdb, list(self.nets.values()))
        for name, (kind, ip) in sorted(wanted.items()):
            if name not in self.tunnels:
                self.ovs.ensure_tunnel(self.bridges.tunnel, name, kind, self.conf.OVS.local_ip,
                                       ip)
                self.tunnels[name] = kind
                LOG.info("tunnel %s to %s (l2population)", name, ip)
        if self._passes < TUNNEL_SYNC_EVERY:
            return
        # off the flows first: a flow naming a deleted port cannot be deleted by name
        for name in sorted(set(self.tunnels) - set(wanted)):
            del self.tunnels[name]
            self._retiring.add(name)

    def retire_tunnels(self) -> None:
        """Delete the tunnel ports no flow names any more (after programming)."""
        for name in sorted(self._retiring):
            self.ovs.delete_port(self.bridges.tunnel, name)
            self._retiring.discard(name)
            LOG.info("tunnel %s removed: no network here needs it", name)

    def scan(self) -> dict[str, VifPort]:
        return {p.iface_id: p for p in self.ovs.vif_ports(self.bridges.integration)}

    def run_once(self) -> dict[str, list[str]]:
        """One reconcile pass; returns the devices reported up and down."""
        if self.revival_seen():
            self.resync()
        scanned = self.scan()
        if self._first:
            self.recover_vlans(list(scanned.values()))
        with self._lock:
            dirty, self._dirty = self._dirty, set()
            sg_dirty, self._sg_dirty = self._sg_dirty, set()
        if self._first:
            todo = set(scanned)
        else:
            todo = {pid for pid, p in scanned.items()
                    if pid not in self.wired or self.wired[pid].port.ofport != p.ofport}
            todo |= dirty & set(scanned)
        removed = [pid for pid in self.wired if pid not in scanned]
        up: list[str] = []
        down: list[str] = []
        polled = todo or self._first or self._passes % TUNNEL_SYNC_EVERY == 0
        if polled and not self.l2pop:
            try:
                self.sync_tunnels()
            except Exception:  # noqa: BLE001 - retried next pass
                LOG.exception("tunnel_sync failed")
        ordered = sorted(todo)
        self._tags = []
        for start in range(0, len(ordered), DETAILS_CHUNK):
            answer = self.plugin_rpc.get_devices_details_list_and_failed_devices(
                ordered[start:start + DETAILS_CHUNK])
            for details in answer.get("devices", []):
                self._wire(scanned, details, up, down)
            with self._lock:
                self._dirty |= set(answer.get("failed_devices", []))
        self.ovs.set_port_tags(self._tags)
        for pid in removed:
            del self.wired[pid]
            self.port_policy.pop(pid, None)
            self.port_security.pop(pid, None)
            self.port_groups.pop(pid, None)
            down.append(pid)
        self._refresh_nets()
        if self.l2pop:
            self.sync_tunnels()
        if self.firewall == "openvswitch":
            self.refresh_security((todo | sg_dirty) & set(self.wired))
        if self.qos:
            self.apply_qos()
        self.program_flows()
        self.retire_tunnels()
        if self.qos:
            self.retire_meters()
        if up or down:
            # a full resync asks for this host's l2population entries again
            refresh = {"refresh_tunnels": True} if self.l2pop and self._first else {}
            result = self.plugin_rpc.update_device_list(up, down, **refresh)
            with self._lock:
                self._dirty |= set(result.get("failed_devices_up", []))
        self._first = False
        self._passes += 1
        return {"up": up, "down": down}

    def _wire(self, scanned: dict[str, VifPort], details: dict[str, Any],
              up: list[str], down: list[str]) -> None:
        device = details["device"]
        port = scanned.get(device)
        if port is None:
            return
        if "port_id" not in details or not details.get("network_type"):
            # unknown here, or bound elsewhere: keep it off every network
            self._tags.append((port.name, flows.DEAD_VLAN, {}))
            self.wired.pop(device, None)
            return
        net_id = details["network_id"]
        # keep every VLAN known so far (incl. those recovered at start whose ports
        # are not re-read yet); networks left without ports are pruned after the pass
        self.vlans = flows.allocate_vlans(self.vlans, set(self.vlans) | {net_id})
        vlan = self.vlans[net_id]
        self.nets[net_id] = flows.LocalNet(net_id, details["network_type"],
                                           details.get("segmentation_id"),
                                           details.get("physical_network"), vlan)
        admin_up = bool(details.get("admin_state_up", True))
        tag = vlan if admin_up else flows.DEAD_VLAN
        if port.tag != tag or port.other_config.get("net_uuid") != net_id:
            self._tags.append((port.name, tag, {
                "net_uuid": net_id, "network_type": details["network_type"],
                "segmentation_id": str(details.get("segmentation_id") or "")}))
        self.wired[device] = Wired(port, net_id, admin_up)
        self.port_policy[device] = (details.get("qos_policy_id")
                                    or details.get("network_qos_policy_id"))
        (up if admin_up else down).append(device)

    def _refresh_nets(self) -> None:
        """Forget networks with no port left here; their VLAN becomes free."""
        used = {w.network_id for w in self.wired.values()}
        self.nets = {n: v for n, v in self.nets.items() if n in used}
        self.vlans = {n: v for n, v in self.vlans.items() if n in used}

    def refresh_security(self, port_ids: set[str]) -> None:
        """Re-read the security facts of ``port_ids`` (one call for all)."""
        if not port_ids:
            return
        try:
            info = self.plugin_rpc.security_group_info_for_devices(sorted(port_ids))
        except Exception:  # noqa: BLE001 - retried next pass
            LOG.exception("security_group_info_for_devices failed")
            with self._lock:
                self._sg_dirty |= port_ids
            return
        for pid in port_ids:
            wired = self.wired[pid]
            self.port_groups[pid] = secgroup_facts.port_groups(info, pid)
            self.port_security[pid] = firewall.from_info(
                info, pid, wired.port.name, wired.port.ofport, self.vlans[wired.network_id])

    # -- QoS ------------------------------------------------------------------------

    def _port_qos(self) -> dict[str, qos.PortQos]:
        with self._lock:
            return {pid: qos.port_qos(self.policies.get(self.port_policy.get(pid) or ""))
                    for pid, w in self.wired.items() if w.admin_up}

    def apply_qos(self) -> None:
        """Pull the policies not known yet, then make meters and shaping match
        the ports' policies; meters no port wants go after the flows."""
        with self._lock:
            if self._first:
                self.policies.clear()
            missing = sorted({p for p in self.port_policy.values() if p} - set(self.policies))
        if missing:
            pulled = self.plugin_rpc.qos_policies(missing)
            with self._lock:
                self.policies.update({p["id"]: p for p in pulled})
        br = self.bridges.integration
        if self._first:
            self.meters = {mid: qos.Limit(*v) for mid, v in self.ovs.meters(br).items()}
            self.shaped = {name: qos.Limit(*v) for name, v in self.ovs.port_shapings().items()}
        wanted = self._port_qos()
        meters = {self.wired[pid].port.ofport: q.egress for pid, q in wanted.items() if q.egress}
        shaping = {self.wired[pid].port.name: q.ingress for pid, q in wanted.items()
                   if q.ingress}
        for mid, limit in sorted(meters.items()):
            if self.meters.get(mid) != limit:
                self.ovs.set_meter(br, qos.meter_spec(mid, limit), exists=mid in self.meters)
                self.meters[mid] = limit
        names = {w.port.name for w in self.wired.values()}
        for name in sorted(set(shaping) | set(self.shaped)):
            limit = shaping.get(name)
            if self.shaped.get(name) == limit:
                continue
            if name in names:
                self.ovs.set_port_shaping(name, limit and limit.kbps,
                                          limit.burst_kb if limit else 0)
            if limit:
                self.shaped[name] = limit
            else:
                self.shaped.pop(name, None)
        self._stale_meters = set(self.meters) - set(meters)

    def retire_meters(self) -> None:
        for mid in sorted(self._stale_meters):
            self.ovs.delete_meter(self.bridges.integration, mid)
            self.meters.pop(mid, None)
        self._stale_meters = set()

    def qos_flows(self) -> list[flows.Flow]:
        out: list[flows.Flow] = []
        for pid, port_qos in sorted(self._port_qos().items()):
            port = self.wired[pid].port
            if port.ofport in self.meters or port_qos.egress is None:
                out += qos.entry_flows(port.name, port.ofport, port_qos)
        return out

    def firewall_flows(self) -> list[flows.Flow]:
        filtered, unfiltered = [], []
        for pid, wired in sorted(self.wired.items()):
            if not wired.admin_up or wired.network_id not in self.vlans:
                continue
            security = self.port_security.get(pid)
            if security is not None and (security.ofport, security.vlan) != (
                    wired.port.ofport, self.vlans[wired.network_id]):
                security = None  # re-plugged since read: re-read next pass
                self.mark_sg_dirty(pid)
            if security is None:
                unfiltered.append((wired.port.name, self.vlans[wired.network_id]))
            else:
                filtered.append(security)
        return firewall.firewall_flows(filtered, unfiltered)

    def mark_sg_dirty(self, port_id: str) -> None:
        with self._lock:
            self._sg_dirty.add(port_id)

    def desired_flows(self) -> dict[str, set[flows.Flow]]:
        nets = sorted(self.nets.values(), key=lambda n: n.vlan)
        out = {self.bridges.integration: set(flows.integration_flows(nets, self.mappings))}
        if self.firewall == "openvswitch":
            out[self.bridges.integration] |= set(self.firewall_flows())
        if self.qos:
            out[self.bridges.integration] |= set(self.qos_flows())
        if self.tunnel_types:
            out[self.bridges.tunnel] = set(flows.tunnel_flows(nets, self.tunnels, self.bridges,
                                                              flood=not self.l2pop))
            if self.l2pop:
                with self._lock:
                    out[self.bridges.tunnel] |= set(l2pop.fdb_flows(
                        self.fdb, nets, self.arp_responder, set(self.tunnels)))
        for physnet, bridge in self.mappings.items():
            out[bridge] = set(flows.physical_flows(nets, physnet, bridge))
        return out

    def program_flows(self) -> None:
        for bridge, wanted in self.desired_flows().items():
            if self._first or bridge not in self.programmed:
                self.ovs.add_flows(bridge, (f.spec(self.cookie) for f in sorted(wanted)))
                # a resync after a failed pass: what this run installed and no
                # longer wants carries our own cookie, so goes by key
                _, gone = flows.diff(self.programmed.get(bridge, set()), wanted)
                self.ovs.delete_flows_strict(bridge, (f.key() for f in gone))
                for stale in self.ovs.cookies(bridge) - {self.cookie, 0}:
                    self.ovs.delete_flows_by_cookie(bridge, stale)
            else:
                add, delete = flows.diff(self.programmed[bridge], wanted)
                self.ovs.add_flows(bridge, (f.spec(self.cookie) for f in add))
                self.ovs.delete_flows_strict(bridge, (f.key() for f in delete))
            self.programmed[bridge] = wanted

    # -- process -------------------------------------------------------------------------

    def start_notifications(self) -> None:
        endpoints: dict[str, Any] = {PORT_UPDATE_TOPIC: NotifierEndpoint(self),
                                     PORT_DELETE_TOPIC: NotifierEndpoint(self)}
        if self.firewall == "openvswitch":
            endpoints[SG_UPDATE_TOPIC] = SecurityGroupEndpoint(self)
        if self.l2pop:
            endpoints[L2POP_TOPIC] = L2populationEndpoint(self)
        if self.qos:
            endpoints[QOS_TOPIC] = QosPushEndpoint(self)
        for topic, endpoint in endpoints.items():
            self.listen(topic, [endpoint])

    def resync(self) -> None:
        self._first = True

    def run(self, stop: threading.Event) -> None:
        self.plugin_rpc = self.plugin_rpc or PluginApi(self.conf, f"ovs-agent-{self.host}",
                                                       self.host)
        self.setup_bridges()
        self.start_reporting()
        self.start_notifications()
        interval = self.conf.AGENT.polling_interval
        LOG.info("OVS agent on %s: cookie %#x, polling every %ss", self.host, self.cookie,
                 interval)
        unwatch = self.ovs.watch_vifs(self._wake.set)
        try:
            poll(stop, interval, self.run_once, self.resync, self._wake)
        finally:
            unwatch()
        self.stop()


def main(agent: OvsAgent) -> None:
    """Run ``agent`` until SIGTERM or SIGINT."""
    import signal
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    agent.run(stop)

"""The OVS agent's reconcile loop: read, plan, apply, report.

Each pass reads br-int's VIF ports (``external_ids:iface-id``) and the
marks the server's casts left, asks the server about the new and changed
ports (their network segment), lets ``plan`` decide (a host-local VLAN
per network, each port's tag, every flow, only the difference to
program), applies that through the switch (``switch.Switch``) and reports
the devices up or down. Restarting is a full resync (see ``plan``); its
pass also asks which ports the server has bound to this host, and reports
down those whose device is gone (``plan.absent``).

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
changed (``Switch.watch_vifs``): a new instance's port is wired at once
instead of up to a polling interval later, which stays the longest a pass
waits (upstream's agent waits it out every time).

With ``[securitygroup] firewall_driver = openvswitch`` each pass also asks
the server's ``security_group_info_for_devices`` about the ports it
(re)wired and turns the answer into br-int flows (``firewall``), programmed
with the rest under the same cookie. The security-group fanouts (rule or
member updated) mark the ports of the named groups, and the ports whose
rules name them as remote, for a re-read.

With ``[agent] extensions = fwaas_v2`` and ``[fwaas] firewall_l2_driver =
ovs`` (upstream's names; the openvswitch firewall driver is needed) the
firewall groups of the wired ports are pulled (``q-firewall-plugin``) on
the first pass, when ports are (re)wired and after the server's fanout on
``firewall_agent``; they are applied after the security groups (``fwaas``)
and each group's status is reported once its flows are in.
"""
from __future__ import annotations

import copy
import logging
import random
import signal
import threading
from dataclasses import replace
from typing import Any

import oslo_messaging
from oslo_config import cfg

from neutrino.agents import l2_devices
from neutrino.agents.base import Agent, poll
from neutrino.agents.ovs import (
    appctl,
    audit,
    firewall,
    flows,
    fwaas,
    l2pop,
    live_trace,
    local_ip,
    log_extension,
    packet_log,
    plan,
    qos,
)
from neutrino.agents.ovs.ovsctl import OvsCtl
from neutrino.agents.ovs.switch import OvsError, Switch
from neutrino.agents.rpc import LoggingApi, PluginApi
from neutrino.conf import fwaas as fwaas_config
from neutrino.conf import placement
from neutrino.conf.agents import common as agent_conf
from neutrino.conf.agents import network_log as log_config
from neutrino.conf.agents import ovs as config
from neutrino.rpc import topics

LOG = logging.getLogger(__name__)

# server -> agents fanouts, upstream's topic names
PORT_UPDATE_TOPIC = topics.PORT_UPDATE
PORT_DELETE_TOPIC = topics.PORT_DELETE
SG_UPDATE_TOPIC = topics.SECURITY_GROUP_UPDATE
L2POP_TOPIC = topics.L2POPULATION_UPDATE
QOS_TOPIC = topics.QOS_POLICY_PUSH
LOG_TOPIC = topics.LOG_PUSH
LOCAL_IP_TOPIC = topics.LOCAL_IP_PUSH
TUNNEL_SYNC_EVERY = l2_devices.SYNC_EVERY
DETAILS_CHUNK = l2_devices.DETAILS_CHUNK


class NotifierEndpoint:
    """What the server casts to L2 agents; each only marks work for the loop."""

    def __init__(self, agent: "OvsAgent") -> None:
        self.target = oslo_messaging.Target(version="1.9")
        self.agent = agent

    def port_update(self, context: Any, **kwargs: Any) -> None:
        port = kwargs.get("port") or {}
        if port.get("id"):
            self.agent.mark_dirty(port["id"])

    def port_delete(self, context: Any, **kwargs: Any) -> None:
        if kwargs.get("port_id"):
            self.agent.port_deleted(kwargs["port_id"])


class DvrUpdateEndpoint:
    """``dvr``: the server's fanout of every host's DVR MAC, when one is made."""

    def __init__(self, agent: "OvsAgent") -> None:
        self.target = oslo_messaging.Target(version="1.0")
        self.agent = agent

    def dvr_mac_address_update(self, context: Any, dvr_macs: list[dict[str, Any]] | None = None,
                               **kwargs: Any) -> None:
        self.agent.dvr_macs_pushed(dvr_macs or [])


class SecurityGroupEndpoint(l2_devices.SecurityGroupCasts):
    """The security-group fanouts, on their own topic."""

    def __init__(self, agent: "OvsAgent") -> None:
        self.target = oslo_messaging.Target(version="1.1")
        self.agent = agent


class L2populationEndpoint:
    """The l2population casts (fanout, or to this host alone): each changes
    the agent's forwarding entries; the loop turns them into ports and flows."""

    def __init__(self, agent: "OvsAgent") -> None:
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
        self.target = oslo_messaging.Target(version="1.0")
        self.agent = agent

    def push(self, context: Any, resource_list: list[dict[str, Any]] | None = None,
             event_type: str = "updated", **kwargs: Any) -> None:
        self.agent.policies_pushed(resource_list or [], event_type == "deleted")


class LogPushEndpoint:
    """The server's fanout of logs to start or stop (``log`` extension)."""

    def __init__(self, agent: "OvsAgent") -> None:
        self.target = oslo_messaging.Target(version="1.0")
        self.agent = agent

    def push(self, context: Any, resource_list: list[dict[str, Any]] | None = None,
             event_type: str = "updated", **kwargs: Any) -> None:
        if self.agent.logs is not None:
            self.agent.logs.pushed(resource_list or [], event_type)
            self.agent._wake.set()


class FirewallAgentEndpoint:
    """Upstream's casts to FWaaS agent extensions (``firewall_agent``,
    fanout): a group changed; the next pass pulls the groups again."""

    def __init__(self, agent: "OvsAgent") -> None:
        self.target = oslo_messaging.Target(version="1.0")
        self.agent = agent

    def create_firewall_group(self, context: Any, **kwargs: Any) -> None:
        self.agent.firewall_groups_changed()

    def update_firewall_group(self, context: Any, **kwargs: Any) -> None:
        self.agent.firewall_groups_changed()

    def delete_firewall_group(self, context: Any, **kwargs: Any) -> None:
        self.agent.firewall_groups_changed()


class LocalIpPushEndpoint:
    """The server's fanout of local IP port associations made or deleted."""

    def __init__(self, agent: "OvsAgent") -> None:
        self.target = oslo_messaging.Target(version="1.0")
        self.agent = agent

    def push(self, context: Any, resource_list: list[dict[str, Any]] | None = None,
             event_type: str = "created", **kwargs: Any) -> None:
        self.agent.local_ips_pushed(resource_list or [], event_type == "deleted")


class AuditEndpoint:
    """``neutrino audit``'s and ``neutrino trace --live``'s questions to this
    host's agent (``topics.AUDIT_OVS``)."""

    def __init__(self, agent: "OvsAgent") -> None:
        self.agent = agent
        self.target = oslo_messaging.Target(version=topics.AUDIT_VERSION)

    def realised_state(self, context: Any) -> dict[str, Any]:
        return self.agent.realised_state()

    def trace_packet(self, context: Any, packet: dict[str, Any]) -> dict[str, Any]:
        return self.agent.trace_packet(packet)

    def resync(self, context: Any) -> None:
        self.agent.resync()
        self.agent._wake.set()


class OvsAgent(Agent):
    agent_type = "Open vSwitch agent"
    binary = "neutron-openvswitch-agent"
    topic = "N/A"

    def __init__(self, conf: cfg.ConfigOpts, host: str | None = None,
                 ovs: Switch | None = None, plugin_rpc: Any = None) -> None:
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
        self.extensions = agent_conf.extensions(conf, "ovs")
        self.qos = "qos" in self.extensions
        self.policies: dict[str, dict[str, Any]] = {}  # QoS policy id -> policy
        self.ovs: Switch = ovs or OvsCtl(conf.OVS.ovsdb_connection, conf.OVS.ovsdb_timeout)
        self.plugin_rpc = plugin_rpc
        self.cookie = random.getrandbits(63) | 1
        self.firewall = firewall.driver_name(conf.SECURITYGROUP.firewall_driver)
        # upstream's ``log`` extension; it logs what the openvswitch firewall decides
        self.netlog = "log" in self.extensions and self.firewall == "openvswitch"
        self.logs: log_extension.LogExtension | None = None
        # upstream's ``local_ip`` extension: port id -> local IP id -> association
        self.local_ip = "local_ip" in self.extensions
        self.local_ips: dict[str, dict[str, local_ip.Association]] = {}
        self._local_ips_pulled = False
        # ``fwaas_v2`` with ``[fwaas] firewall_l2_driver = ovs``; with upstream's
        # default ``noop`` L2 driver it applies nothing, and is not reported
        self.fwaas = fwaas.EXTENSION in self.extensions
        if self.fwaas:
            fwaas_config.register_agent(conf)
            self.fwaas = conf.fwaas.firewall_l2_driver.strip() in fwaas.L2_DRIVERS
            if self.fwaas and self.firewall != "openvswitch":
                raise ValueError("[agent] extensions fwaas_v2 needs [securitygroup] "
                                 "firewall_driver = openvswitch")
            if not self.fwaas:
                self.extensions -= {fwaas.EXTENSION}
        self.firewall_groups: dict[str, Any] = {}  # port id -> its group, as pulled
        self._groups_stale = True
        self._reported: dict[str, str] = {}  # group id -> the status last reported
        self.settings = plan.Settings(self.bridges, self.mappings, tuple(self.tunnel_types),
                                      conf.OVS.local_ip, self.l2pop, self.arp_responder,
                                      self.firewall == "openvswitch", self.qos, self.netlog,
                                      self.local_ip, self.cookie, fwaas=self.fwaas)
        # ``dvr``: with tunnels only (distributed routers on provider VLANs are not done)
        self.dvr = bool(conf.AGENT.enable_distributed_routing and self.tunnel_types)
        self.dvr_macs: frozenset[str] = frozenset()  # every host's, as pulled or pushed
        self.placement = placement.agent_report(conf, self.host, self.mappings)
        self.known = plan.Known()
        self.marks = l2_devices.Marks()
        self._lock = self.marks.lock
        # set by the switch (a VIF came, went or changed) and by the server's
        # port notifications: the loop's next pass starts at once
        self._wake = threading.Event()
        self._first = True
        self._passes = 0

    @property
    def programmed(self) -> dict[str, frozenset[flows.Flow]]:
        return self.known.programmed

    def configurations(self) -> dict[str, Any]:
        return {"bridge_mappings": self.mappings, "tunnel_types": self.tunnel_types,
                "tunneling_ip": self.conf.OVS.local_ip,
                "integration_bridge": self.bridges.integration,
                "datapath_type": self.conf.OVS.datapath_type, "ovs_hybrid_plug": False,
                "l2_population": self.l2pop, "arp_responder_enabled": self.arp_responder,
                "enable_distributed_routing": self.dvr, "devices": len(self.known.wired),
                "extensions": sorted(self.extensions),
                **self.placement}

    # -- what the casts mark (their threads) -----------------------------------------

    def mark_dirty(self, port_id: str) -> None:
        self.marks.mark([port_id])
        self._wake.set()

    def fdb_changed(self, how: str, fdb_entries: dict[str, Any]) -> None:
        with self._lock:
            getattr(self.fdb, how)(fdb_entries)

    def policies_pushed(self, policies: list[dict[str, Any]], deleted: bool) -> None:
        named = set(self.known.port_policy.values())
        with self._lock:
            for policy in policies:
                if deleted:
                    self.policies.pop(policy["id"], None)
                elif policy["id"] in self.policies or policy["id"] in named:
                    self.policies[policy["id"]] = policy

    def port_deleted(self, port_id: str) -> None:
        """A port gone from the server: its local IP associations went with it
        (the server pushes nothing for those)."""
        with self._lock:
            self.local_ips.pop(port_id, None)
        self.mark_dirty(port_id)

    def firewall_groups_changed(self) -> None:
        self._groups_stale = True
        self._wake.set()

    def local_ips_pushed(self, associations: list[dict[str, Any]], deleted: bool) -> None:
        with self._lock:
            for data in associations:
                assoc = local_ip.from_pushed(data)
                held = self.local_ips.setdefault(assoc.fixed_port_id, {})
                if deleted:
                    held.pop(assoc.local_ip_id, None)
                else:
                    held[assoc.local_ip_id] = assoc
        self._wake.set()

    def pull_local_ips(self) -> None:
        """Every association, once at start and again after a failed pull."""
        try:
            pulled = self.plugin_rpc.local_ip_associations()
        except Exception:  # noqa: BLE001 - pulled again next pass
            LOG.exception("pulling local IP associations failed")
            return
        with self._lock:
            self.local_ips = {}
            for data in pulled:
                assoc = local_ip.from_pushed(data)
                self.local_ips.setdefault(assoc.fixed_port_id, {})[assoc.local_ip_id] = assoc
            self._local_ips_pulled = True

    def groups_changed(self, groups: list[str] | None, members: bool) -> None:
        """Mark the ports a group change affects (``l2_devices.affected_by_groups``)."""
        self.marks.mark(l2_devices.affected_by_groups(self.known.port_groups, groups, members),
                        security=True)

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
            tunnels = {name: self._tunnel_kind(name)
                       for name in self.ovs.tunnel_ports(b.tunnel)}
            self.known = replace(self.known, tunnels=tunnels)

    @staticmethod
    def _tunnel_kind(port_name: str) -> str:
        return port_name.split("-", 1)[0]

    # -- the loop: read, plan, apply, report -------------------------------------------

    def run_once(self) -> dict[str, list[str]]:
        """One reconcile pass; returns the devices reported up and down."""
        if self.revival_seen():
            self.resync()
        if self.dvr and self.settings.dvr_mac is None:
            self.read_dvr_mac()
        if self.dvr and self._first:
            self.read_dvr_macs()
        observed = self.observe()
        known = self.known
        asking = plan.to_ask(known, observed)
        peers = self.read_peers() if plan.polls_tunnel_sync(
            self.settings, observed, asking) else None
        devices, failed = l2_devices.read_details(self.plugin_rpc, asking)
        wiring = plan.wire(known, observed, devices, asking)
        reading = plan.security_to_read(self.settings, observed, wiring)
        security = self.read_security(reading)
        observed = self.pull_policies(observed, wiring)
        observed = self.pull_firewall_groups(observed, wiring)
        logs = (self.logs.read(known.logs, (wiring.asked | reading) & set(wiring.known.wired))
                if self.logs is not None else None)
        bound = self.read_bound() if plan.bound_to_read(observed) else None
        decided = plan.plan_wired(self.settings, observed, wiring,
                                  plan.Answers(devices, failed, peers, security, logs, bound))
        self.marks.mark(decided.dirty)
        self.apply(decided)
        self.known = decided.known
        if self.logs is not None:
            self.logs.applied(self.known.logs)
        self.marks.mark(decided.sg_dirty, security=True)
        self.report_firewall_groups(decided.firewall_statuses)
        self.marks.mark(l2_devices.report(self.plugin_rpc, decided.up, decided.down,
                                          decided.refresh_tunnels))
        self._first = False
        self._passes += 1
        return {"up": decided.up, "down": decided.down}

    def observe(self) -> plan.Observed:
        """What the switch holds and what the casts marked since the last pass."""
        full = self._first
        vifs = {p.iface_id: p for p in self.ovs.vif_ports(self.bridges.integration)}
        dirty, sg_dirty = self.marks.take()
        if self.local_ip and (full or not self._local_ips_pulled):
            self.pull_local_ips()
        with self._lock:
            local_ips = {pid: tuple(sorted(held.values()))
                         for pid, held in self.local_ips.items() if held}
            if full and self.qos:
                self.policies.clear()
            policies = dict(self.policies)
            fdb = copy.deepcopy(self.fdb) if self.l2pop else None
        meters = shaped = None
        if full and self.qos:
            br = self.bridges.integration
            meters = {mid: qos.Limit(*v) for mid, v in self.ovs.meters(br).items()}
            shaped = {name: qos.Limit(*v) for name, v in self.ovs.port_shapings().items()}
        cookies = ({b: self.ovs.cookies(b) for b in self.settings.flow_bridges()}
                   if full else {})
        with self._lock:
            dvr_macs = self.dvr_macs
        return plan.Observed(vifs, full, self._passes, dirty, sg_dirty, fdb, policies,
                             meters, shaped, cookies, local_ips, dvr_macs)

    def read_dvr_mac(self) -> None:
        """This host's DVR MAC, asked until the server answers."""
        try:
            mac = self.plugin_rpc.get_dvr_mac_address_by_host()["mac_address"]
        except Exception:  # noqa: BLE001 - asked again next pass
            LOG.exception("get_dvr_mac_address_by_host failed")
            return
        self.settings = replace(self.settings, dvr_mac=str(mac))

    def read_dvr_macs(self) -> None:
        """Every host's DVR MAC (on full passes; pushes keep it current between)."""
        try:
            macs = self.plugin_rpc.get_dvr_mac_address_list()
        except Exception:  # noqa: BLE001 - asked again on the next full pass
            LOG.exception("get_dvr_mac_address_list failed")
            return
        self.dvr_macs_pushed(macs)

    def dvr_macs_pushed(self, macs: list[dict[str, Any]]) -> None:
        with self._lock:
            self.dvr_macs = frozenset(str(m["mac_address"]) for m in macs if m.get("mac_address"))
        self._wake.set()

    def read_peers(self) -> list[plan.Peer] | None:
        """The tunnel endpoints of the other agents; None if the server failed."""
        try:
            return [plan.Peer(kind, peer["ip_address"], peer.get("host", ""))
                    for kind in self.tunnel_types
                    for peer in self.plugin_rpc.tunnel_sync(
                        self.conf.OVS.local_ip, kind).get("tunnels", [])]
        except Exception:  # noqa: BLE001 - retried next pass
            LOG.exception("tunnel_sync failed")
            return None

    def read_bound(self) -> list[dict[str, Any]] | None:
        """The ports the server has bound to this host; None if it failed
        (the devices gone meanwhile are then not reported this time)."""
        try:
            bound: list[dict[str, Any]] = self.plugin_rpc.get_ports_by_vnic_type_and_host(
                "normal")
            return bound
        except Exception:  # noqa: BLE001 - the pass goes on without it
            LOG.exception("get_ports_by_vnic_type_and_host failed")
            return None

    def read_security(self, port_ids: set[str]) -> dict[str, Any] | None:
        """The security facts of ``port_ids`` (one call for all); None if the
        server failed (the plan marks them for the next pass)."""
        if not port_ids:
            return {}
        try:
            info: dict[str, Any] = self.plugin_rpc.security_group_info_for_devices(
                sorted(port_ids))
            return info
        except Exception:  # noqa: BLE001 - retried next pass
            LOG.exception("security_group_info_for_devices failed")
            return None

    def pull_policies(self, observed: plan.Observed, wiring: plan.Wiring) -> plan.Observed:
        """Pull the QoS policies the wired ports name that are not known yet."""
        missing = plan.policies_to_pull(self.settings, wiring, observed.policies)
        if not missing:
            return observed
        pulled = {p["id"]: p for p in self.plugin_rpc.qos_policies(missing)}
        with self._lock:
            self.policies.update(pulled)
        return replace(observed, policies={**observed.policies, **pulled})

    def pull_firewall_groups(self, observed: plan.Observed,
                             wiring: plan.Wiring) -> plan.Observed:
        """``fwaas_v2``: the groups of the wired ports, pulled again when a
        cast said one changed or ports were (re)wired; on failure the last
        ones stay and the next pass pulls again."""
        if not self.fwaas:
            return observed
        if self._groups_stale or observed.full or wiring.asked:
            self._groups_stale = False
            wired = sorted(wiring.known.wired)
            try:
                pulled = self.plugin_rpc.firewall_groups_for_ports(wired) if wired else []
            except Exception:  # noqa: BLE001 - pulled again next pass
                LOG.exception("pulling firewall groups failed")
                self._groups_stale = True
            else:
                self.firewall_groups = dict(fwaas.by_port(pulled))
                self._reported = {}
        return replace(observed, firewall_groups=dict(self.firewall_groups))

    def report_firewall_groups(self, statuses: dict[str, str]) -> None:
        """Each applied group's status, once after it was pulled or changed."""
        for group_id, status in sorted(statuses.items()):
            if self._reported.get(group_id) == status:
                continue
            try:
                self.plugin_rpc.set_firewall_group_status(group_id, status)
                self._reported[group_id] = status
            except Exception:  # noqa: BLE001 - reported again next pass
                LOG.exception("firewall group %s: reporting status %s failed", group_id,
                              status)

    def apply(self, decided: plan.Plan) -> None:
        """Make the switch as the plan says: tags and tunnels, meters and
        shaping, then the flows, and only then retire what no flow names."""
        b = self.bridges
        self.ovs.set_port_tags(decided.tags)
        for name, kind, remote_ip in decided.tunnels:
            self.ovs.ensure_tunnel(b.tunnel, name, kind, self.conf.OVS.local_ip, remote_ip)
            LOG.info("tunnel %s to %s%s", name, remote_ip, " (l2population)" * self.l2pop)
        for meter_id, limit, exists in decided.meters:
            self.ovs.set_meter(b.integration, qos.meter_spec(meter_id, limit), exists)
        for port, shaping in decided.shaping:
            self.ovs.set_port_shaping(port, shaping.kbps if shaping else None,
                                      shaping.burst_kb if shaping else 0)
        for change in decided.flows:
            self.ovs.add_flows(change.bridge, (f.spec(self.cookie) for f in change.add))
            self.ovs.delete_flows_strict(change.bridge, (f.key() for f in change.delete))
            for cookie in change.purge_cookies:
                self.ovs.delete_flows_by_cookie(change.bridge, cookie)
        for name in decided.retire_tunnels:
            self.ovs.delete_port(b.tunnel, name)
            LOG.info("tunnel %s removed: no network here needs it", name)
        for meter_id in decided.retire_meters:
            self.ovs.delete_meter(b.integration, meter_id)

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
        if self.logs is not None:
            endpoints[LOG_TOPIC] = LogPushEndpoint(self)
        if self.local_ip:
            endpoints[LOCAL_IP_TOPIC] = LocalIpPushEndpoint(self)
        if self.fwaas:
            endpoints[topics.FIREWALL_AGENT] = FirewallAgentEndpoint(self)
        if self.dvr:
            endpoints[topics.DVR_UPDATE] = DvrUpdateEndpoint(self)
        endpoints[topics.AUDIT_OVS] = AuditEndpoint(self)
        for topic, endpoint in endpoints.items():
            self.listen(topic, [endpoint])

    def resync(self) -> None:
        self._first = True

    def realised_state(self) -> dict[str, Any]:
        """What this agent wired and what the switch holds now (``audit``)."""
        known = self.known
        vifs = {p.iface_id: p for p in self.ovs.vif_ports(self.bridges.integration)}
        counts = {b: self.ovs.flow_counts(b) for b in known.programmed}
        return {"host": self.host, "agent_type": self.agent_type,
                **audit.realised(known, vifs, counts, self.cookie)}

    def trace_packet(self, packet: dict[str, Any]) -> dict[str, Any]:
        """``packet`` run through this host's br-int as its flows are now
        (``trace --live``); an ``error`` when this host cannot trace it."""
        integration = self.bridges.integration
        vifs = self.ovs.vif_ports(integration)
        found: dict[str, Any] = {"host": self.host, "agent_type": self.agent_type}
        try:
            where = live_trace.entry(packet, {v.iface_id: v.name for v in vifs}, self.known.nets,
                                     self.mappings, self.bridges.patch_tun, self.known.tunnels,
                                     self.bridges.tunnel)
            text = appctl.ofproto_trace(where.bridge or integration,
                                        live_trace.flow_spec(packet, where),
                                        [live_trace.CT_NEW] * live_trace.CT_PASSES)
        except (live_trace.TraceError, OvsError) as exc:
            return {**found, "error": str(exc)}
        return {**found, "entered_at": f"{where.bridge or integration} {where.port}",
                **live_trace.hops(text, integration)}

    def run(self, stop: threading.Event) -> None:
        self.plugin_rpc = self.plugin_rpc or PluginApi(self.conf, f"ovs-agent-{self.host}",
                                                       self.host)
        self.setup_bridges()
        if self.netlog and self.logs is None:
            self.logs = self.log_extension()
        if self.logs is not None:
            self.logs.start()
        self.start_reporting()
        self.start_notifications()
        interval = self.conf.AGENT.polling_interval
        LOG.info("OVS agent on %s: cookie %#x, polling every %ss", self.host, self.cookie,
                 interval)
        unwatch = self.ovs.watch_vifs(self._wake.set)
        try:
            poll(stop, interval, self.run_once, self.resync, self._wake, agent="ovs")
        finally:
            unwatch()
            if self.logs is not None:
                self.logs.stop()
        self.stop()

    def log_extension(self) -> log_extension.LogExtension:
        """The ``log`` extension on this host's br-int: its RPC and packet-in reader."""
        log_config.register(self.conf)
        opts = self.conf.network_log
        monitor = packet_log.OfctlMonitor(self.bridges.integration)
        log = packet_log.PacketLog(opts.rate_limit, opts.burst_limit,
                                   packet_log.packet_logger(opts.local_output_log_base))
        return log_extension.LogExtension(LoggingApi(self.conf),
                                          packet_log.PacketLogReader(log, monitor, monitor.stop))


def main(agent: OvsAgent) -> None:
    """Run ``agent`` until SIGTERM or SIGINT."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    agent.run(stop)

"""The OVS agent's decisions, as pure functions: what it knows and what it
read in, what to do out.

A pass reads (the switch's VIF ports, the marks the casts left, the
server's answers), plans, applies the plan through a ``switch.Switch`` and
reports. ``plan`` takes what the agent knows after its last pass
(``Known``), what this pass observed (``Observed``) and what the server
answered (``Answers``), and returns a ``Plan``: the port tags, the tunnel
ports to make and retire, meters and shaping, the flows to add and delete
per bridge, the devices to report up or down, and what the agent knows
once the plan is applied. It composes the models of ``flows``,
``firewall``, ``l2pop`` and ``qos`` and touches nothing: a test states a
host and reads the plan.

Restarting is a full pass (``Observed.full``): the local VLANs are read
back from the ports' ``other_config`` so wired ports keep their tags, all
flows are re-added under this run's cookie and the flows of other cookies
(an earlier run's, now stale) are deleted — no flow is missing in between
and none is left twice.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import Any, Iterable

from neutrino.agents import l2_devices, secgroup_facts
from neutrino.agents.ovs import dvr, firewall, flows, fwaas, l2pop, local_ip, netlog, qos
from neutrino.agents.ovs.flows import Flow, LocalNet
from neutrino.agents.ovs.switch import PortTag, VifPort

LOG = logging.getLogger(__name__)

TUNNEL_GRACE = l2_devices.SYNC_EVERY  # passes before l2population retires a tunnel port


@dataclass(frozen=True)
class Settings:
    """What the configuration fixes for every pass."""
    bridges: flows.Bridges = flows.Bridges()
    mappings: dict[str, str] = field(default_factory=dict)  # physnet -> bridge
    tunnel_types: tuple[str, ...] = ()
    local_ip: str | None = None
    l2pop: bool = False
    arp_responder: bool = False
    firewall: bool = False  # the openvswitch firewall driver
    qos: bool = False
    netlog: bool = False  # the ``log`` extension (with the openvswitch firewall)
    local_ips: bool = False  # the ``local_ip`` extension
    cookie: int = 1
    fwaas: bool = False  # the ``fwaas_v2`` extension (with the openvswitch firewall)
    dvr_mac: str | None = None  # ``enable_distributed_routing``: this host's DVR MAC

    def flow_bridges(self) -> list[str]:
        """The bridges whose flows the agent owns."""
        out = [self.bridges.integration]
        if self.tunnel_types:
            out.append(self.bridges.tunnel)
        return out + list(self.mappings.values())


@dataclass(frozen=True)
class Wired:
    port: VifPort
    network_id: str
    admin_up: bool
    device_owner: str = ""
    mac: str = ""
    ips: tuple[str, ...] = ()


@dataclass(frozen=True)
class Known:
    """What the agent knows after a pass; a plan returns the next one."""
    vlans: dict[str, int] = field(default_factory=dict)  # network id -> local VLAN
    nets: dict[str, LocalNet] = field(default_factory=dict)
    wired: dict[str, Wired] = field(default_factory=dict)  # port id -> its wiring
    tunnels: dict[str, str] = field(default_factory=dict)  # tunnel port name -> type
    programmed: dict[str, frozenset[Flow]] = field(default_factory=dict)  # bridge -> flows
    port_policy: dict[str, str | None] = field(default_factory=dict)  # port -> QoS policy
    meters: dict[int, qos.Limit] = field(default_factory=dict)  # meter id (ofport) -> limit
    shaped: dict[str, qos.Limit] = field(default_factory=dict)  # port name -> limit
    # port id -> its filtering (None: not filtered), and the groups it uses
    port_security: dict[str, firewall.PortSecurity | None] = field(default_factory=dict)
    port_groups: dict[str, l2_devices.PortGroups] = field(default_factory=dict)
    logs: dict[str, netlog.LogInfo] = field(default_factory=dict)  # log id -> its ports here


@dataclass(frozen=True)
class Observed:
    """What a pass reads from the switch and the casts before it plans."""
    vifs: dict[str, VifPort]  # port id (iface-id) -> its port on br-int
    full: bool = False  # a first pass, or one after a failure or a revival
    passes: int = 0  # passes done so far: the agent's clock
    dirty: set[str] = field(default_factory=set)  # ports a cast marked
    sg_dirty: set[str] = field(default_factory=set)  # ports whose groups changed
    fdb: l2pop.Fdb | None = None  # l2population's entries, as the casts left them
    policies: dict[str, dict[str, Any]] = field(default_factory=dict)  # QoS policies
    meters: dict[int, qos.Limit] | None = None  # on a full pass: the switch's
    shaped: dict[str, qos.Limit] | None = None  # on a full pass: the switch's
    cookies: dict[str, set[int]] = field(default_factory=dict)  # on a full pass
    # port id -> the local IP associations it answers for, as pushed or pulled
    local_ips: dict[str, tuple[local_ip.Association, ...]] = field(default_factory=dict)
    dvr_macs: frozenset[str] = frozenset()  # ``dvr``: the other hosts' DVR MACs
    # ``fwaas_v2``: port id -> its firewall group (with its rule lists), as pulled
    firewall_groups: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Peer:
    """A tunnel endpoint ``tunnel_sync`` named."""
    tunnel_type: str
    ip_address: str
    host: str = ""


@dataclass(frozen=True)
class Answers:
    """What the server answered this pass."""
    devices: list[dict[str, Any]] = field(default_factory=list)  # device details
    failed: set[str] = field(default_factory=set)  # devices it failed to answer about
    peers: list[Peer] | None = None  # tunnel_sync's, when asked and answered
    security: dict[str, Any] | None = None  # security_group_info_for_devices, if answered
    logs: dict[str, netlog.LogInfo] | None = None  # the logs once answers are in, if changed
    # on a full pass: the ports the server has bound to this host, if answered
    bound: list[dict[str, Any]] | None = None


@dataclass(frozen=True)
class Wiring:
    """The ports wired after the server's details: the first half of a plan,
    which also says what to ask the server next (security, QoS policies)."""
    known: Known
    tags: list[PortTag]
    up: list[str]
    down: list[str]
    asked: set[str]  # the devices whose details were asked


@dataclass(frozen=True)
class FlowChange:
    bridge: str
    add: list[Flow]
    delete: list[Flow]  # by key
    purge_cookies: list[int] = field(default_factory=list)  # other runs' flows


@dataclass(frozen=True)
class Plan:
    known: Known  # what the agent knows once the plan is applied
    tags: list[PortTag] = field(default_factory=list)
    tunnels: list[tuple[str, str, str]] = field(default_factory=list)  # name, type, remote
    meters: list[tuple[int, qos.Limit, bool]] = field(default_factory=list)  # id, limit, exists
    shaping: list[tuple[str, qos.Limit | None]] = field(default_factory=list)
    flows: list[FlowChange] = field(default_factory=list)
    retire_tunnels: list[str] = field(default_factory=list)  # after the flows
    retire_meters: list[int] = field(default_factory=list)  # after the flows
    up: list[str] = field(default_factory=list)
    down: list[str] = field(default_factory=list)
    refresh_tunnels: bool = False  # ask for this host's l2population entries again
    dirty: set[str] = field(default_factory=set)  # to re-read next pass
    sg_dirty: set[str] = field(default_factory=set)  # security to re-read next pass
    # ``fwaas_v2``: group id -> the status to report for the groups applied here
    firewall_statuses: dict[str, str] = field(default_factory=dict)


# -- what to ask -----------------------------------------------------------------------

def recover_vlans(vlans: dict[str, int], vifs: Iterable[VifPort]) -> dict[str, int]:
    """The local VLANs an earlier run gave networks, read back from the ports
    (a restart keeps tags), added to ``vlans``."""
    out = dict(vlans)
    for port in vifs:
        net = port.other_config.get("net_uuid")
        if net and port.tag and port.tag != flows.DEAD_VLAN:
            out.setdefault(net, port.tag)
    return out


def to_ask(known: Known, observed: Observed) -> set[str]:
    """The ports whose details this pass asks the server for."""
    def moved(pid: str) -> bool:
        return known.wired[pid].port.ofport != observed.vifs[pid].ofport
    return l2_devices.to_ask(observed.full, observed.vifs, known.wired, observed.dirty, moved)


def polls_tunnel_sync(settings: Settings, observed: Observed, asking: set[str]) -> bool:
    return bool(settings.tunnel_types and not settings.l2pop
                and l2_devices.polls_peers(observed.full, asking, observed.passes))


def security_to_read(settings: Settings, observed: Observed, wiring: Wiring) -> set[str]:
    """The wired ports whose security facts this pass reads."""
    if not settings.firewall:
        return set()
    return l2_devices.security_to_read(wiring.asked, observed.sg_dirty, wiring.known.wired)


def policies_to_pull(settings: Settings, wiring: Wiring,
                     policies: dict[str, dict[str, Any]]) -> list[str]:
    """The QoS policies the wired ports name that the agent does not hold."""
    if not settings.qos:
        return []
    return sorted({p for p in wiring.known.port_policy.values() if p} - set(policies))


# -- wiring ports ----------------------------------------------------------------------

def wire(known: Known, observed: Observed, devices: list[dict[str, Any]],
         asked: set[str]) -> Wiring:
    """Tags and wiring from the server's details; ports gone are reported down
    and networks left without ports lose their VLAN."""
    vlans = recover_vlans(known.vlans, observed.vifs.values()) if observed.full else known.vlans
    state = _Wiring(dict(vlans), dict(known.nets), dict(known.wired), dict(known.port_policy))
    for details in devices:
        port = observed.vifs.get(details["device"])
        if port is not None:
            state.wire(port, details)
    port_security, port_groups = dict(known.port_security), dict(known.port_groups)
    for pid in [pid for pid in state.wired if pid not in observed.vifs]:
        del state.wired[pid]
        for facts in (state.port_policy, port_security, port_groups):
            facts.pop(pid, None)
        state.down.append(pid)
    used = {w.network_id for w in state.wired.values()}
    nets = {n: v for n, v in state.nets.items() if n in used}
    vlans = {n: v for n, v in state.vlans.items() if n in used}
    return Wiring(replace(known, vlans=vlans, nets=nets, wired=state.wired,
                          port_policy=state.port_policy, port_security=port_security,
                          port_groups=port_groups),
                  state.tags, state.up, state.down, asked)


@dataclass
class _Wiring:
    vlans: dict[str, int]
    nets: dict[str, LocalNet]
    wired: dict[str, Wired]
    port_policy: dict[str, str | None]
    tags: list[PortTag] = field(default_factory=list)
    up: list[str] = field(default_factory=list)
    down: list[str] = field(default_factory=list)

    def wire(self, port: VifPort, details: dict[str, Any]) -> None:
        device = details["device"]
        if "port_id" not in details or not details.get("network_type"):
            # unknown here, or bound elsewhere: keep it off every network
            self.tags.append((port.name, flows.DEAD_VLAN, {}))
            self.wired.pop(device, None)
            return
        net_id = details["network_id"]
        # keep every VLAN known so far (incl. those recovered at start whose ports
        # are not re-read yet); networks left without ports are pruned after the pass
        self.vlans = flows.allocate_vlans(self.vlans, set(self.vlans) | {net_id})
        vlan = self.vlans[net_id]
        self.nets[net_id] = LocalNet(net_id, details["network_type"],
                                     details.get("segmentation_id"),
                                     details.get("physical_network"), vlan)
        admin_up = bool(details.get("admin_state_up", True))
        tag = vlan if admin_up else flows.DEAD_VLAN
        if port.tag != tag or port.other_config.get("net_uuid") != net_id:
            self.tags.append((port.name, tag, {
                "net_uuid": net_id, "network_type": details["network_type"],
                "segmentation_id": str(details.get("segmentation_id") or "")}))
        self.wired[device] = Wired(port, net_id, admin_up, details.get("device_owner") or "",
                                   details.get("mac_address") or port.mac or "",
                                   tuple(i["ip_address"] for i in details.get("fixed_ips") or ()))
        self.port_policy[device] = (details.get("qos_policy_id")
                                    or details.get("network_qos_policy_id"))
        (self.up if admin_up else self.down).append(device)


# -- the plan ----------------------------------------------------------------------------

def plan(settings: Settings, known: Known, observed: Observed, answers: Answers) -> Plan:
    """The whole pass's plan (``wire`` then ``plan_wired``)."""
    asked = {d["device"] for d in answers.devices} | answers.failed
    return plan_wired(settings, observed, wire(known, observed, answers.devices, asked),
                      answers)


def plan_wired(settings: Settings, observed: Observed, wiring: Wiring,
               answers: Answers) -> Plan:
    """The plan of a pass whose ports are wired: tunnels, security, QoS, flows."""
    known = wiring.known
    tunnels, new_tunnels, retire = _tunnels(settings, observed, known, answers.peers)
    known = replace(known, tunnels=tunnels)
    if settings.netlog and answers.logs is not None:
        known = replace(known, logs=answers.logs)
    sg_dirty: set[str] = set()
    if settings.firewall:
        known, sg_dirty = _security(known, security_to_read(settings, observed, wiring),
                                    answers.security)
    meters: list[tuple[int, qos.Limit, bool]] = []
    shaping: list[tuple[str, qos.Limit | None]] = []
    stale_meters: list[int] = []
    if settings.qos:
        known, meters, shaping, stale_meters = _qos(known, observed)
    desired, replugged = desired_flows(settings, known, observed)
    applied = group_firewalls(settings, known, observed.firewall_groups)
    changes = [_flow_change(settings, observed, known, bridge, wanted)
               for bridge, wanted in desired.items()]
    known = replace(known, programmed={**known.programmed, **desired},
                    meters={m: v for m, v in known.meters.items() if m not in stale_meters})
    down = wiring.down + absent(observed, answers.bound, wiring.down)
    return Plan(known, wiring.tags, new_tunnels, meters, shaping, changes, retire,
                stale_meters, wiring.up, down,
                refresh_tunnels=settings.l2pop and observed.full, dirty=set(answers.failed),
                sg_dirty=sg_dirty | replugged, firewall_statuses=fwaas.statuses(applied))


OVS_VIF_TYPES = ("ovs", "vhostuser")  # the bindings an OVS agent's ports have


def bound_to_read(observed: Observed) -> bool:
    """Whether this pass asks which ports the server has bound here: on a
    full pass (a start, a revival), when the agent cannot know what went
    while it was not looking."""
    return observed.full


def absent(observed: Observed, bound: list[dict[str, Any]] | None,
           reported: list[str]) -> list[str]:
    """The ports bound to this host (OVS bindings) whose device the switch no
    longer has, and whose status still says otherwise: an instance's device
    deleted while the agent was down (its namespace gone with a restart).
    Upstream reports only the devices it sees go; a full pass cannot see
    those, so it compares with the server's list and reports them down."""
    if not observed.full or not bound:
        return []
    return sorted(p["id"] for p in bound
                  if p.get("binding:vif_type") in OVS_VIF_TYPES
                  and p.get("status") != "DOWN"
                  and p["id"] not in observed.vifs and p["id"] not in reported)


def _tunnels(settings: Settings, observed: Observed, known: Known, peers: list[Peer] | None
             ) -> tuple[dict[str, str], list[tuple[str, str, str]], list[str]]:
    """The tunnel ports once the plan is applied, those to make and those to
    retire: every ``tunnel_sync`` peer, or with l2population exactly the
    peers the forwarding entries name for the networks wired here. Ports an
    earlier run left get a few passes' grace, the time for the server's
    full entries to arrive."""
    tunnels = dict(known.tunnels)
    new: list[tuple[str, str, str]] = []
    if not settings.tunnel_types:
        return tunnels, new, []
    if not settings.l2pop:
        for peer in peers or []:
            name = flows.tunnel_port_name(peer.tunnel_type, peer.ip_address)
            if name not in tunnels:
                new.append((name, peer.tunnel_type, peer.ip_address))
                tunnels[name] = peer.tunnel_type
        return tunnels, new, []
    wanted = l2pop.wanted_tunnels(observed.fdb or l2pop.Fdb(settings.local_ip),
                                  list(known.nets.values()))
    for name, (kind, ip) in sorted(wanted.items()):
        if name not in tunnels:
            new.append((name, kind, ip))
            tunnels[name] = kind
    if observed.passes < TUNNEL_GRACE:
        return tunnels, new, []
    # off the flows first: a flow naming a deleted port cannot be deleted by name
    retire = sorted(set(tunnels) - set(wanted))
    return {n: k for n, k in tunnels.items() if n not in retire}, new, retire


def _security(known: Known, ports: set[str], info: dict[str, Any] | None
              ) -> tuple[Known, set[str]]:
    """The security facts of ``ports`` from the server's answer; without one
    (the call failed) they are read again next pass."""
    if not ports:
        return known, set()
    if info is None:
        return known, set(ports)
    security, groups = dict(known.port_security), dict(known.port_groups)
    for pid in ports:
        wired = known.wired[pid]
        groups[pid] = secgroup_facts.port_groups(info, pid)
        security[pid] = firewall.from_info(info, pid, wired.port.name, wired.port.ofport,
                                           known.vlans[wired.network_id])
    return replace(known, port_security=security, port_groups=groups), set()


def port_qos(known: Known, policies: dict[str, dict[str, Any]]) -> dict[str, qos.PortQos]:
    """The QoS of every wired port that is up, from its policy."""
    return {pid: qos.port_qos(policies.get(known.port_policy.get(pid) or ""))
            for pid, w in known.wired.items() if w.admin_up}


def _qos(known: Known, observed: Observed) -> tuple[
        Known, list[tuple[int, qos.Limit, bool]], list[tuple[str, qos.Limit | None]], list[int]]:
    """Meters and shaping to match the ports' policies; meters no port wants
    go after the flows."""
    have_meters = dict(observed.meters if observed.meters is not None else known.meters)
    shaped = dict(observed.shaped if observed.shaped is not None else known.shaped)
    wanted = port_qos(known, observed.policies)
    meters = {known.wired[pid].port.ofport: q.egress for pid, q in wanted.items() if q.egress}
    meter_changes = [(mid, limit, mid in have_meters) for mid, limit in sorted(meters.items())
                     if have_meters.get(mid) != limit]
    have_meters.update(meters)
    shaping = {known.wired[pid].port.name: q.ingress for pid, q in wanted.items() if q.ingress}
    names = {w.port.name for w in known.wired.values()}
    shaping_changes: list[tuple[str, qos.Limit | None]] = []
    for name in sorted(set(shaping) | set(shaped)):
        limit = shaping.get(name)
        if shaped.get(name) == limit:
            continue
        if name in names:
            shaping_changes.append((name, limit))
        if limit:
            shaped[name] = limit
        else:
            shaped.pop(name, None)
    stale = sorted(set(have_meters) - set(meters))
    return (replace(known, meters=have_meters, shaped=shaped), meter_changes,
            shaping_changes, stale)


def desired_flows(settings: Settings, known: Known, observed: Observed
                  ) -> tuple[dict[str, frozenset[Flow]], set[str]]:
    """Every flow each bridge must hold, and the ports whose security facts
    are stale (re-plugged since read: their flows wait for a re-read)."""
    nets = sorted(known.nets.values(), key=lambda n: n.vlan)
    integration = set(flows.integration_flows(nets, settings.mappings))
    replugged: set[str] = set()
    if settings.firewall:
        groups = group_firewalls(settings, known, observed.firewall_groups)
        filtering, replugged = firewall_flows(known, settings.netlog,
                                              {g.name for g in groups})
        integration |= set(filtering)
        if settings.fwaas:
            integration |= set(fwaas.firewall_flows(groups))
    if settings.qos:
        integration |= set(qos_flows(known, observed.policies))
    if settings.local_ips:
        integration |= set(local_ip_flows(known, observed.local_ips, settings.firewall))
    out = {settings.bridges.integration: integration}
    if settings.tunnel_types:
        tunnel = set(flows.tunnel_flows(nets, known.tunnels, settings.bridges,
                                        flood=not settings.l2pop,
                                        dvr=settings.dvr_mac is not None))
        if settings.dvr_mac is not None:
            ports = dvr_ports(known)
            tunnel |= set(dvr.process_flows(ports, settings.dvr_mac))
            if not settings.firewall:
                instances = [(known.vlans[w.network_id], w.mac, w.port.name)
                             for w in known.wired.values()
                             if w.admin_up and w.mac and w.device_owner.startswith("compute:")
                             and w.network_id in known.vlans]
                out[settings.bridges.integration] |= set(dvr.integration_flows(
                    ports, instances, observed.dvr_macs - {settings.dvr_mac},
                    settings.bridges.patch_tun))
        if settings.l2pop and observed.fdb is not None:
            tunnel |= set(l2pop.fdb_flows(observed.fdb, nets, settings.arp_responder,
                                          set(known.tunnels)))
        out[settings.bridges.tunnel] = tunnel
    for physnet, bridge in settings.mappings.items():
        out[bridge] = set(flows.physical_flows(nets, physnet, bridge))
    return {bridge: frozenset(wanted) for bridge, wanted in out.items()}, replugged


def dvr_ports(known: Known) -> list[dvr.DvrPort]:
    """The distributed router ports wired here on tunnelled networks."""
    return [dvr.DvrPort(known.vlans[w.network_id], w.mac, w.ips)
            for w in known.wired.values()
            if w.device_owner == dvr.INTERFACE_DISTRIBUTED and w.admin_up and w.mac
            and w.network_id in known.nets
            and known.nets[w.network_id].network_type in flows.TUNNEL_TYPES]


def group_firewalls(settings: Settings, known: Known, groups: dict[str, Any]
                    ) -> list[fwaas.PortFirewall]:
    """``fwaas_v2``: the firewall groups of the ports filtered here (up, and
    with their security facts current), one entry per port."""
    if not (settings.fwaas and settings.firewall):
        return []
    out = []
    for pid, group in sorted(groups.items()):
        wired, security = known.wired.get(pid), known.port_security.get(pid)
        if (wired is None or security is None or not wired.admin_up
                or wired.network_id not in known.vlans
                or (security.ofport, security.vlan) != (wired.port.ofport,
                                                        known.vlans[wired.network_id])):
            continue
        out.append(fwaas.port_firewall(group, wired.port.name, wired.port.ofport))
    return out


def firewall_flows(known: Known, logging: bool = False, grouped: frozenset[str] | set[str]
                   = frozenset()) -> tuple[list[Flow], set[str]]:
    """The security groups' flows; ``grouped``: the ports (by name) whose
    accepted packets go on to their firewall group's tables."""
    filtered, unfiltered, stale = [], [], set()
    logged: dict[str, firewall.Logged] = {}
    port_logs = netlog.port_logs(known.logs) if logging else {}
    for pid, wired in sorted(known.wired.items()):
        if not wired.admin_up or wired.network_id not in known.vlans:
            continue
        vlan = known.vlans[wired.network_id]
        security = known.port_security.get(pid)
        if security is not None and (security.ofport, security.vlan) != (
                wired.port.ofport, vlan):
            security = None  # re-plugged since read: re-read next pass
            stale.add(pid)
        if security is None:
            unfiltered.append((wired.port.name, vlan))
        else:
            if security.name in grouped:
                security = replace(security, fwaas=True)
            filtered.append(security)
            if pid in port_logs:
                logged[security.name] = netlog.log_flows(port_logs[pid])
    return firewall.firewall_flows(filtered, unfiltered, logged), stale


def local_ip_flows(known: Known, associations: dict[str, tuple[local_ip.Association, ...]],
                   firewall: bool = False) -> list[Flow]:
    """The local-IP flows of the associated ports wired here (and up), reached
    from every wired port that is up (after the firewall's egress if any)."""
    up = {pid: w for pid, w in known.wired.items()
          if w.admin_up and w.network_id in known.vlans}
    answering = [local_ip.Answering(a, w.port.name, w.port.mac, known.vlans[w.network_id])
                 for pid, w in up.items() if w.port.mac
                 for a in associations.get(pid, ())]
    return local_ip.local_ip_flows(
        answering, [(w.port.name, known.vlans[w.network_id]) for w in up.values()], firewall)


def qos_flows(known: Known, policies: dict[str, dict[str, Any]]) -> list[Flow]:
    out: list[Flow] = []
    for pid, port_qos_ in sorted(port_qos(known, policies).items()):
        port = known.wired[pid].port
        if port.ofport in known.meters or port_qos_.egress is None:
            out += qos.entry_flows(port.name, port.ofport, port_qos_)
    return out


def _flow_change(settings: Settings, observed: Observed, known: Known, bridge: str,
                 wanted: frozenset[Flow]) -> FlowChange:
    """What to add and delete for ``bridge`` to hold ``wanted``: the
    difference with what was programmed, or on a full pass everything again
    under this run's cookie, and the other cookies' flows deleted."""
    programmed = known.programmed.get(bridge)
    if observed.full or programmed is None:
        # a resync after a failed pass: what this run installed and no longer
        # wants carries our own cookie, so goes by key
        _, gone = flows.diff(set(programmed or ()), set(wanted))
        # log flows carry cookies of their own, the same in every run
        own = {f.cookie for f in wanted if f.cookie}
        stale = sorted(observed.cookies.get(bridge, set()) - {settings.cookie, 0} - own)
        return FlowChange(bridge, sorted(wanted), gone, stale)
    add, delete = flows.diff(set(programmed), set(wanted))
    return FlowChange(bridge, add, delete)

"""The Linux bridge agent's decisions, as pure functions: what it knows and
read in, the host operations to do out.

A pass reads (the host's links, the marks the casts left, the server's
answers), plans, applies the plan's operations through a
``host.BridgeHost`` in order, and reports. ``wire`` decides the bridges,
uplinks and taps from the server's details; ``plan_wired`` adds the VXLAN
forwarding entries and the nftables ruleset. Both only return: a test
states a host and reads the operations.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from neutrino.agents import l2_devices, secgroup_facts
from neutrino.agents.bridge_interface import bridge_name
from neutrino.agents.linuxbridge import nftables
from neutrino.agents.linuxbridge.host import FLOOD_MAC
from neutrino.agents.secgroup_facts import PortFacts

LOG = logging.getLogger(__name__)
TAP_PREFIX = "tap"

L2pop = dict[str, dict[str, set[tuple[str, str]]]]  # network -> peer ip -> (mac, ip)


def tap_name(port_id: str) -> str:
    return (TAP_PREFIX + port_id)[:14]


def vxlan_name(vni: int) -> str:
    return f"vxlan-{vni}"


class Op(NamedTuple):
    """One call on the host: ``BridgeHost.<name>(*args, **kwargs)``."""
    name: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = {}


def op(name: str, *args: Any, **kwargs: Any) -> Op:
    return Op(name, args, kwargs)


@dataclass(frozen=True)
class Settings:
    """What the configuration fixes for every pass."""
    interfaces: dict[str, str] = field(default_factory=dict)  # physnet -> interface
    bridges: dict[str, str] = field(default_factory=dict)  # physnet -> existing bridge
    vxlan: bool = False
    local_ip: str | None = None
    udp_dstport: int = 4789
    vxlan_group: str | None = None
    l2pop: bool = False
    ttl: int | None = None
    tos: int | None = None
    firewall: bool = False  # the nftables driver


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class Known:
    """What the agent knows after a pass; a plan returns the next one."""
    wired: dict[str, Wired] = field(default_factory=dict)  # tap -> its port
    nets: dict[str, Net] = field(default_factory=dict)
    peers: frozenset[str] = frozenset()
    facts: dict[str, PortFacts | None] = field(default_factory=dict)  # tap -> filtering
    groups: dict[str, l2_devices.PortGroups] = field(default_factory=dict)
    ruleset: str | None = None
    fdb_due: bool = True  # forwarding entries to check in the next pass


@dataclass(frozen=True)
class Observed:
    """What a pass reads from the host and the casts before it plans."""
    links: dict[str, dict[str, Any]]
    full: bool = False
    passes: int = 0
    dirty: set[str] = field(default_factory=set)  # taps a cast marked
    sg_dirty: set[str] = field(default_factory=set)
    fdb_changed: bool = False  # the l2population casts changed entries
    l2pop: L2pop = field(default_factory=dict)

    @property
    def taps(self) -> dict[str, dict[str, Any]]:
        return {n: link for n, link in self.links.items() if n.startswith(TAP_PREFIX)}


@dataclass(frozen=True)
class Answers:
    """What the server answered this pass."""
    devices: list[dict[str, Any]] = field(default_factory=list)
    failed: set[str] = field(default_factory=set)  # devices (port id prefixes)
    peers: set[str] | None = None  # tunnel_sync's endpoints, when asked and answered


@dataclass(frozen=True)
class Wiring:
    """The host after the server's details: the first half of a plan."""
    known: Known
    ops: list[Op]
    up: list[str]
    down: list[str]
    asked: set[str]  # taps
    masters: dict[str, str]  # link -> its bridge, once the ops are done
    gone_nets: list[str]  # networks left without taps here


@dataclass(frozen=True)
class Plan:
    known: Known
    ops: list[Op]
    up: list[str]
    down: list[str]
    dirty: set[str] = field(default_factory=set)  # taps to re-read next pass
    sg_dirty: set[str] = field(default_factory=set)
    forget_l2pop: list[str] = field(default_factory=list)  # networks gone from here


# -- what to ask -----------------------------------------------------------------------

def to_ask(known: Known, observed: Observed) -> set[str]:
    """The taps whose ports this pass asks the server about."""
    return l2_devices.to_ask(observed.full, observed.taps, known.wired, observed.dirty)


def polls_tunnel_sync(settings: Settings, observed: Observed, asking: set[str]) -> bool:
    return settings.vxlan and l2_devices.polls_peers(observed.full, asking, observed.passes)


def security_to_read(settings: Settings, observed: Observed, wiring: Wiring) -> set[str]:
    if not settings.firewall:
        return set()
    return l2_devices.security_to_read(wiring.asked, observed.sg_dirty, wiring.known.wired)


def fdb_devices(wiring: Wiring, observed: Observed) -> list[str]:
    """The VXLAN devices whose forwarding entries this pass reads (those that
    exist already; one made this pass has none)."""
    if not (wiring.known.fdb_due or observed.fdb_changed):
        return []
    return sorted(n.uplink for n in wiring.known.nets.values()
                  if n.network_type == "vxlan" and n.uplink and n.uplink in observed.links)


# -- wiring taps -------------------------------------------------------------------------

def net_of(settings: Settings, details: dict[str, Any]) -> Net | None:
    """How this host carries the port's network, or None if it does not."""
    kind, network_id = details.get("network_type"), details["network_id"]
    physnet, vni = details.get("physical_network"), details.get("segmentation_id")
    own = bridge_name(network_id)
    if kind == "vxlan" and settings.vxlan and vni:
        return Net(kind, int(vni), own, vxlan_name(int(vni)), True)
    if kind == "flat" and physnet in settings.bridges:
        return Net(kind, None, settings.bridges[physnet], None, False)
    if kind == "flat" and physnet in settings.interfaces:
        return Net(kind, None, own, settings.interfaces[physnet], True)
    if kind == "local":
        return Net(kind, None, own, None, True)
    LOG.error("network %s: %s segment (physical network %s) is not carried by this "
              "agent", network_id, kind, physnet)
    return None


@dataclass
class _Host:
    """A pass's view of the host while it is planned."""
    settings: Settings
    known: Known
    masters: dict[str, str]
    ops: list[Op] = field(default_factory=list)
    up: list[str] = field(default_factory=list)
    down: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.wired = dict(self.known.wired)
        self.nets = dict(self.known.nets)
        self.facts = dict(self.known.facts)
        self.groups = dict(self.known.groups)
        self.fdb_due = self.known.fdb_due

    def do(self, name: str, *args: Any, **kwargs: Any) -> None:
        self.ops.append(op(name, *args, **kwargs))

    def enslave(self, device: str, bridge: str, up: bool = True,
                mtu: int | None = None) -> None:
        self.do("enslave", device, bridge, up=up, mtu=mtu)
        self.masters[device] = bridge

    def release(self, device: str) -> None:
        self.do("release", device)
        self.masters.pop(device, None)

    def forget(self, tap: str) -> None:
        self.wired.pop(tap, None)
        self.facts.pop(tap, None)
        self.groups.pop(tap, None)

    def wire(self, tap: str, link: dict[str, Any], details: dict[str, Any]) -> None:
        net = net_of(self.settings, details) if details.get("port_id") else None
        if net is None:  # unknown, bound elsewhere, or not a network this host carries
            if tap in self.wired or link.get("master", "").startswith("brq"):
                self.release(tap)
            self.forget(tap)
            return
        network_id = details["network_id"]
        self.ensure_net(network_id, net, details.get("mtu"))
        admin_up = bool(details.get("admin_state_up", True))
        self.enslave(tap, net.bridge, up=admin_up, mtu=details.get("mtu"))
        self.wired[tap] = Wired(details["port_id"], network_id, admin_up)
        (self.up if admin_up else self.down).append(details["device"])

    def ensure_net(self, network_id: str, net: Net, mtu: int | None) -> None:
        if self.nets.get(network_id) == net:
            return
        s = self.settings
        if net.ours:
            self.do("ensure_bridge", net.bridge)
        if net.network_type == "vxlan" and net.uplink:
            group = None if s.l2pop else s.vxlan_group
            self.do("ensure_vxlan", net.uplink, net.segmentation_id or 0, s.local_ip,
                    s.udp_dstport, group, learning=not s.l2pop, ttl=s.ttl, tos=s.tos)
            self.enslave(net.uplink, net.bridge, mtu=mtu)
            self.fdb_due = True
        elif net.uplink:
            self.enslave(net.uplink, net.bridge)
        self.nets[network_id] = net

    def prune(self) -> list[str]:
        """A network without taps here loses what the agent made for it; a
        bridge that still holds another device (a DHCP or router port of a
        co-located agent) stays. Returns the networks gone."""
        used = {w.network_id for w in self.wired.values()}
        gone = [n for n in self.nets if n not in used]
        for network_id in gone:
            net = self.nets.pop(network_id)
            if not net.ours:
                continue
            members = [name for name, master in self.masters.items()
                       if master == net.bridge and name != net.uplink]
            if net.network_type == "vxlan" and net.uplink:
                self.do("delete", net.uplink)
                self.masters.pop(net.uplink, None)
            elif net.uplink:
                self.release(net.uplink)
            if not members:
                self.do("delete", net.bridge)
        return gone


def wire(settings: Settings, known: Known, observed: Observed, answers: Answers,
         asked: set[str]) -> Wiring:
    """Bridges, uplinks and taps from the server's details; taps gone are
    reported down and networks left without taps lose what the agent made."""
    masters = {n: link["master"] for n, link in observed.links.items() if link.get("master")}
    host = _Host(settings, known, masters)
    if answers.peers is not None and answers.peers != known.peers:
        host.fdb_due = True
    taps = observed.taps
    for details in answers.devices:
        tap = TAP_PREFIX + details["device"]
        if tap in taps:
            host.wire(tap, taps[tap], details)
    for tap in [t for t in host.wired if t not in taps]:
        host.down.append(tap[len(TAP_PREFIX):])
        host.forget(tap)
    gone = host.prune()
    peers = known.peers if answers.peers is None else frozenset(answers.peers)
    return Wiring(replace(known, wired=host.wired, nets=host.nets, facts=host.facts,
                          groups=host.groups, peers=peers, fdb_due=host.fdb_due),
                  host.ops, host.up, host.down, asked, host.masters, gone)


# -- the plan ----------------------------------------------------------------------------

def plan(settings: Settings, known: Known, observed: Observed, answers: Answers,
         fdbs: dict[str, set[tuple[str, str]]] | None = None,
         security: dict[str, Any] | None = None) -> Plan:
    """The whole pass's plan (``wire`` then ``plan_wired``)."""
    asked = {TAP_PREFIX + d["device"] for d in answers.devices}
    asked |= {TAP_PREFIX + d for d in answers.failed}
    wiring = wire(settings, known, observed, answers, asked)
    return plan_wired(settings, observed, wiring, answers, fdbs or {}, security)


def plan_wired(settings: Settings, observed: Observed, wiring: Wiring, answers: Answers,
               fdbs: dict[str, set[tuple[str, str]]],
               security: dict[str, Any] | None) -> Plan:
    """The rest of the pass: forwarding entries and the ruleset. ``fdbs``:
    the entries ``fdb_devices`` read; ``security``: the server's answer about
    ``security_to_read``, None if it failed."""
    known, ops = wiring.known, list(wiring.ops)
    l2pop = {n: v for n, v in observed.l2pop.items() if n not in wiring.gone_nets}
    if known.fdb_due or observed.fdb_changed:
        ops += fdb_ops(settings, known, l2pop, fdbs)
        known = replace(known, fdb_due=False)
    sg_dirty: set[str] = set()
    if settings.firewall:
        known, sg_dirty = _security(known, security_to_read(settings, observed, wiring),
                                    security)
        text = ruleset(known)
        if text != known.ruleset:
            ops.append(op("nft_load", text))
            known = replace(known, ruleset=text)
    return Plan(known, ops, wiring.up, wiring.down,
                dirty={TAP_PREFIX + d for d in answers.failed}, sg_dirty=sg_dirty,
                forget_l2pop=wiring.gone_nets)


def fdb_ops(settings: Settings, known: Known, l2pop: L2pop,
            fdbs: dict[str, set[tuple[str, str]]]) -> list[Op]:
    """Each VXLAN device floods to every peer (unless it uses a multicast
    group) and, with l2population, knows each remote port's endpoint."""
    ops: list[Op] = []
    for network_id, net in known.nets.items():
        if net.network_type != "vxlan" or not net.uplink:
            continue
        entries = l2pop.get(network_id, {})
        want: set[tuple[str, str]] = set()
        if settings.l2pop or not settings.vxlan_group:
            want |= {(FLOOD_MAC, ip) for ip in known.peers | set(entries)}
        for ip, pairs in entries.items():
            want |= {(mac, ip) for mac, _ in pairs if mac != FLOOD_MAC}
        have = fdbs.get(net.uplink, set())
        ops += [op("fdb_del", net.uplink, mac, ip) for mac, ip in sorted(have - want)
                if mac == FLOOD_MAC or settings.l2pop]
        ops += [op("fdb_add", net.uplink, mac, ip) for mac, ip in sorted(want - have)]
        ops += [op("neigh_replace", net.uplink, address, mac)
                for pairs in entries.values() for mac, address in pairs if mac != FLOOD_MAC]
    return ops


def _security(known: Known, taps: set[str], info: dict[str, Any] | None
              ) -> tuple[Known, set[str]]:
    if not taps:
        return known, set()
    if info is None:
        return known, set(taps)
    facts, groups = dict(known.facts), dict(known.groups)
    for tap in taps:
        port_id = known.wired[tap].port_id
        groups[tap] = secgroup_facts.port_groups(info, port_id)
        facts[tap] = secgroup_facts.port_facts(info, port_id)
    return replace(known, facts=facts, groups=groups), set()


def ruleset(known: Known) -> str:
    ports = [nftables.FilteredPort(tap, facts) for tap, facts in sorted(known.facts.items())
             if facts is not None and tap in known.wired and known.wired[tap].admin_up]
    return nftables.ruleset(ports)

"""l2population on the agent: the forwarding entries the server pushes, and
the br-tun flows and tunnel ports they ask for.

A pure core like ``flows``. ``Fdb`` keeps, per network, which MAC/IP pairs
live behind which peer endpoint (the all-zero pair meaning "flood this
network to that endpoint"), changed only by the three casts of upstream's
l2population driver (``add_fdb_entries``, ``remove_fdb_entries``,
``update_fdb_entries``). From it and the networks wired here follow the
tunnel ports wanted (a peer that holds anything of a local network), the
flood lists (only peers that asked for flooding), one unicast flow per known
remote MAC, and with ``arp_responder`` the ARP answers br-tun gives itself
instead of flooding the request.

Entries of networks not wired here are kept as well: a host's first port of
a network may be wired just after the server sent it the full list.
"""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Any

from neutrino.agents.ovs.flows import (
    FLOOD_TO_TUN,
    PATCH_LV_TO_TUN,
    TUNNEL_TYPES,
    UNICAST_TO_TUN,
    Flow,
    LocalNet,
    tunnel_port_name,
)

FLOODING_ENTRY = ("00:00:00:00:00:00", "0.0.0.0")
ARP_RESPONDER = 21  # br-tun table, upstream's number


@dataclass
class NetFdb:
    network_type: str
    segment_id: int | None
    peers: dict[str, set[tuple[str, str]]] = field(default_factory=dict)  # ip -> entries


class Fdb:
    """Network id -> its entries, as the casts leave them."""

    def __init__(self, local_ip: str | None) -> None:
        self.local_ip = local_ip
        self.nets: dict[str, NetFdb] = {}

    def add(self, fdb_entries: dict[str, Any]) -> None:
        for net_id, value in (fdb_entries or {}).items():
            if not isinstance(value, dict) or "ports" not in value:
                continue
            net = self.nets.setdefault(net_id, NetFdb(value.get("network_type") or "",
                                                      value.get("segment_id")))
            net.network_type = value.get("network_type") or net.network_type
            net.segment_id = value.get("segment_id", net.segment_id)
            for ip, entries in (value.get("ports") or {}).items():
                if ip == self.local_ip:
                    continue
                net.peers.setdefault(ip, set()).update(_pairs(entries))

    def remove(self, fdb_entries: dict[str, Any]) -> None:
        for net_id, value in (fdb_entries or {}).items():
            net = self.nets.get(net_id)
            if net is None or not isinstance(value, dict):
                continue
            for ip, entries in (value.get("ports") or {}).items():
                left = net.peers.get(ip, set()) - set(_pairs(entries))
                if left:
                    net.peers[ip] = left
                else:
                    net.peers.pop(ip, None)
            if not net.peers:
                del self.nets[net_id]

    def update(self, fdb_entries: dict[str, Any]) -> None:
        """``chg_ip``: {network: {endpoint: {"before": [...], "after": [...]}}}."""
        for net_id, by_ip in ((fdb_entries or {}).get("chg_ip") or {}).items():
            net = self.nets.get(net_id)
            if net is None:
                continue
            for ip, change in by_ip.items():
                if ip == self.local_ip or ip not in net.peers:
                    continue
                net.peers[ip] -= set(_pairs(change.get("before") or []))
                net.peers[ip] |= set(_pairs(change.get("after") or []))

    def clear(self) -> None:
        self.nets.clear()


def _pairs(entries: Any) -> list[tuple[str, str]]:
    return [(str(e[0]), str(e[1])) for e in entries or [] if len(e) >= 2]


def wanted_tunnels(fdb: Fdb, nets: list[LocalNet]) -> dict[str, tuple[str, str]]:
    """Tunnel port name -> (type, peer ip): the peers of the tunnelled
    networks wired here."""
    out = {}
    for net in nets:
        if net.network_type not in TUNNEL_TYPES or net.network_id not in fdb.nets:
            continue
        for ip in fdb.nets[net.network_id].peers:
            out[tunnel_port_name(net.network_type, ip)] = (net.network_type, ip)
    return out


def fdb_flows(fdb: Fdb, nets: list[LocalNet], arp_responder: bool,
              ports: set[str]) -> list[Flow]:
    """br-tun's flood, unicast and ARP responder flows of the local networks,
    through the tunnel ``ports`` that exist (entries may arrive meanwhile)."""
    flows: list[Flow] = []
    if arp_responder:
        flows += [Flow(PATCH_LV_TO_TUN, 1, "arp,dl_dst=ff:ff:ff:ff:ff:ff",
                       f"resubmit(,{ARP_RESPONDER})"),
                  Flow(ARP_RESPONDER, 0, "", f"resubmit(,{FLOOD_TO_TUN})")]
    for net in nets:
        known = fdb.nets.get(net.network_id)
        if net.network_type not in TUNNEL_TYPES or known is None:
            continue
        vni = f"{net.segmentation_id:#x}"
        flood = sorted(tunnel_port_name(net.network_type, ip)
                       for ip, entries in known.peers.items() if FLOODING_ENTRY in entries
                       and tunnel_port_name(net.network_type, ip) in ports)
        if flood:
            flows.append(Flow(FLOOD_TO_TUN, 1, f"dl_vlan={net.vlan}",
                              f"strip_vlan,set_tunnel:{vni},"
                              + ",".join(f"output:{p}" for p in flood)))
        for ip, entries in sorted(known.peers.items()):
            port = tunnel_port_name(net.network_type, ip)
            if port not in ports:
                continue
            for mac in sorted({m for m, _ in entries if (m, _) != FLOODING_ENTRY}):
                flows.append(Flow(UNICAST_TO_TUN, 2, f"dl_vlan={net.vlan},dl_dst={mac}",
                                  f"strip_vlan,set_tunnel:{vni},output:{port}"))
            if arp_responder:
                flows += [arp_answer(net.vlan, mac, addr) for mac, addr in sorted(entries)
                          if (mac, addr) != FLOODING_ENTRY and _ipv4(addr)]
    return flows


def _ipv4(addr: str) -> bool:
    try:
        return ipaddress.ip_address(addr).version == 4
    except ValueError:
        return False


def arp_answer_actions(mac: str, ip: str) -> str:
    """Turn an ARP request for ``ip`` into its answer (``ip`` is at ``mac``)
    and send it back out the port the request came in on."""
    mac_hex = "0x" + mac.replace(":", "")
    ip_hex = f"{int(ipaddress.ip_address(ip)):#x}"
    return ("move:NXM_OF_ETH_SRC[]->NXM_OF_ETH_DST[]," f"mod_dl_src:{mac},"
            "load:0x2->NXM_OF_ARP_OP[],move:NXM_NX_ARP_SHA[]->NXM_NX_ARP_THA[],"
            "move:NXM_OF_ARP_SPA[]->NXM_OF_ARP_TPA[],"
            f"load:{mac_hex}->NXM_NX_ARP_SHA[],load:{ip_hex}->NXM_OF_ARP_SPA[],in_port")


def arp_answer(vlan: int, mac: str, ip: str) -> Flow:
    """Answer "who has ``ip``" on local VLAN ``vlan`` with ``mac``."""
    return Flow(ARP_RESPONDER, 1, f"arp,dl_vlan={vlan},arp_op=1,arp_tpa={ip}",
                arp_answer_actions(mac, ip))

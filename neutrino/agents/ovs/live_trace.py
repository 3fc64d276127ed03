"""A packet run through this host's switch, for ``neutrino trace --live`` (pure).

The server's tracer decides from the API's facts what a packet should do;
only the switch knows what its flows do with it now. ``flow_spec`` turns
the packet the server asks about into the flow ``ovs-appctl
ofproto/trace`` takes (entering the switch where that packet enters on
this host: the sender's own port on br-int, the tunnel from the sender's
host into br-tun, or the network's provider bridge patch),
and ``hops`` turns the tool's answer into the tables it went through, the
flow each one matched and where it was dropped or sent. A flow deleted
behind the agent's back so shows as a packet dropped at the table whose
flow is missing.

Conntrack is simulated as the first packet of a connection sees it
(``ct_state=trk,new`` at each recirculation), as the model traces only
the first packet's direction.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from neutrino.agents.ovs import firewall
from neutrino.agents.ovs.flows import TUNNEL_TYPES, LocalNet, int_patch_name, tunnel_port_name

# Which step of the model a table of br-int belongs to, to name a drop.
STAGES = {firewall.BASE_EGRESS: "port_security", firewall.RULES_EGRESS: "security_group_egress",
          firewall.FWAAS_EGRESS: "firewall_group_egress",
          firewall.BASE_INGRESS: "security_group_ingress",
          firewall.RULES_INGRESS: "security_group_ingress",
          firewall.FWAAS_INGRESS: "firewall_group_ingress"}
PROTOCOL_FIELDS = {"icmp": "icmp,icmp_type=8,icmp_code=0", "tcp": "tcp", "udp": "udp",
                   "sctp": "sctp", "ipv6-icmp": "icmp6,icmp_type=128,icmp_code=0"}
CT_NEW = "trk,new"
# one simulated conntrack answer per ``ct`` recirculation: the sender's zone
# and the receiver's, with room for a firewall group's
CT_PASSES = 4

_TABLE = re.compile(r"^\s{0,2}(\d+)\.\s+(?:(.*?),\s)?priority (\d+)(?:, cookie (0x[0-9a-f]+))?$")
_NO_MATCH = re.compile(r"^\s{0,2}(\d+)\.\s+No match")
_BRIDGE = re.compile(r'^bridge\("([^"]+)"\)')
_RESUME = re.compile(r"^recirc\(0x[0-9a-f]+\) - resume")
_NOT_ACTIONS = ("->", ">>", "thaw", "Resuming from table")


class TraceError(ValueError):
    """The packet cannot be traced here (a port the switch does not have)."""


@dataclass(frozen=True)
class Entry:
    """Where the packet enters this host's switch: a bridge's port, and the
    VLAN or tunnel key it carries."""
    port: str
    vlan: int | None = None
    bridge: str | None = None  # None: the integration bridge
    tun_id: int | None = None


def entry(packet: dict[str, Any], ports: dict[str, str], nets: dict[str, LocalNet],
          mappings: dict[str, str], patch_tun: str, tunnels: dict[str, str] | None = None,
          tunnel_bridge: str = "br-tun") -> Entry:
    """The sender's br-int port when it is on this host (``ports``: port id
    -> br-int port name), else the uplink of the packet's network: the
    tunnel from the sender's host (``from_tunnel_ip``) into the tunnel
    bridge when this host has one to it (``tunnels``: port name -> type),
    else br-int's patch from the tunnel bridge or the provider bridge."""
    sender = packet.get("from_port_id") or (
        packet["port_id"] if packet.get("direction") == "egress" else None)
    if sender in ports:
        return Entry(ports[sender])
    if packet.get("direction") == "egress":
        raise TraceError(f"port {sender} is not wired on this host's integration bridge")
    net = nets.get(packet.get("network_id") or "")
    if net is None:
        raise TraceError(f"network {packet.get('network_id')} is not wired on this host")
    if net.network_type in TUNNEL_TYPES:
        remote = packet.get("from_tunnel_ip")
        name = tunnel_port_name(net.network_type, remote) if remote else None
        if name is not None and name in (tunnels or {}) and net.segmentation_id is not None:
            return Entry(name, bridge=tunnel_bridge, tun_id=net.segmentation_id)
        return Entry(patch_tun, net.vlan)
    bridge = mappings.get(net.physical_network or "")
    if bridge is None:
        raise TraceError(f"no bridge maps physical network {net.physical_network}")
    return Entry(int_patch_name(bridge), net.segmentation_id
                 if net.network_type == "vlan" else None)


def flow_spec(packet: dict[str, Any], where: Entry) -> str:
    """``ofproto/trace``'s flow for the packet entering at ``where``."""
    version6 = ":" in packet["nw_dst"]
    proto = packet["protocol"]
    fields = [f"in_port={where.port}"]
    if where.tun_id is not None:
        fields.append(f"tun_id={where.tun_id:#x}")
    if where.vlan is not None:
        fields.append(f"dl_vlan={where.vlan}")
    fields += [f"dl_src={packet['dl_src']}", f"dl_dst={packet['dl_dst']}",
               PROTOCOL_FIELDS.get(proto, "ipv6" if version6 else "ip")]
    src, dst = ("ipv6_src", "ipv6_dst") if version6 else ("nw_src", "nw_dst")
    fields += [f"{src}={packet['nw_src']}", f"{dst}={packet['nw_dst']}"]
    if proto in ("tcp", "udp", "sctp") and packet.get("destination_port") is not None:
        fields += ["tp_src=40000", f"tp_dst={packet['destination_port']}"]
    return ",".join(fields)


def hops(output: str, integration: str = "br-int") -> dict[str, Any]:
    """The tool's answer as the tables the packet went through (bridge,
    table, the matched flow, its actions) and the verdict: ``forwarded``
    with the datapath's actions, or ``dropped`` at the last table."""
    seen: list[dict[str, Any]] = []
    bridge = ""
    datapath = ""
    resumed: str | None = None  # a recirculated packet resumes on the bridge it left
    for line in output.splitlines():
        found = _BRIDGE.match(line)
        if found:
            bridge, resumed = resumed or found.group(1), None
            continue
        if _RESUME.match(line):
            resumed = seen[-1]["bridge"] if seen else None
            continue
        if line.startswith("Datapath actions:"):
            datapath = line.split(":", 1)[1].strip()
            continue
        found = _TABLE.match(line) or _NO_MATCH.match(line)
        if found and bridge:
            matched = found.re is _TABLE
            flow = (found.group(2) or "any packet") if matched else "no flow matches"
            if matched:
                flow += f", priority {found.group(3)}"
            seen.append({"bridge": bridge, "table": int(found.group(1)), "flow": flow,
                         "priority": int(found.group(3)) if matched else None,
                         "actions": []})
            continue
        action = line.strip()
        if seen and line.startswith("    ") and not action.startswith(_NOT_ACTIONS):
            seen[-1]["actions"].append(action)
    dropped = not datapath or datapath == "drop"
    last = seen[-1] if seen else None
    answer: dict[str, Any] = {"tables": seen, "datapath_actions": datapath,
                              "verdict": "dropped" if dropped else "forwarded"}
    if dropped and last is not None:
        answer["dropped_at"] = {"bridge": last["bridge"], "table": last["table"],
                                "flow": last["flow"],
                                "stage": STAGES.get(last["table"], "switching")
                                if last["bridge"] == integration else "switching"}
    return answer

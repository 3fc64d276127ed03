"""The pure core of the OVS agent: desired state in, OpenFlow rules out.

Nothing here touches a switch. Given the networks wired on this host (each
with a host-local VLAN), the tunnel ports to peers and the bridges' patch
port names, it returns every flow br-int, br-tun and the provider bridges
must hold. The agent diffs that against what it last programmed; tests
read the flows directly.

Pipelines (tables as upstream numbers them, so traces read the same):

br-int   0: ports not yet wired (dead VLAN 4095) drop; traffic from a
            provider bridge is translated wire VLAN -> local VLAN; the rest
            goes to 60, where security groups will hook in; 60 does NORMAL
            switching on the local VLAN tags.
br-tun   0: from br-int -> 2, from a tunnel -> 4; 2 splits unicast (20) and
            flood (22); 4 maps VNI -> local VLAN and learns the sender's
            MAC behind its tunnel in 20 (10); 22 floods a local VLAN to the
            tunnels of its network with the VNI set.
br-<phys>: local VLAN -> provider VLAN (or untagged for flat) on the way out.
"""
from __future__ import annotations

from dataclasses import dataclass

DEAD_VLAN = 4095
TUNNEL_TYPES = ("vxlan", "gre", "geneve")
# br-tun tables
DVR_PROCESS, PATCH_LV_TO_TUN, UNICAST_TO_TUN, FLOOD_TO_TUN = 1, 2, 20, 22
TUN_TO_LV, LEARN_FROM_TUN = 4, 10
# br-int tables
INT_ENTRY, INT_SWITCH = 0, 60


@dataclass(frozen=True, order=True)
class Flow:
    table: int
    priority: int
    match: str
    actions: str
    cookie: int = 0  # 0: the run's cookie; else a cookie of its own (logging's)

    def key(self) -> str:
        """What identifies the flow in OpenFlow (for a strict delete)."""
        return ",".join(p for p in (f"table={self.table}", f"priority={self.priority}",
                                    self.match) if p)

    def spec(self, cookie: int) -> str:
        return f"cookie={self.cookie or cookie:#x},{self.key()},actions={self.actions}"


@dataclass(frozen=True)
class LocalNet:
    """A network as wired on this host."""
    network_id: str
    network_type: str
    segmentation_id: int | None
    physical_network: str | None
    vlan: int


@dataclass(frozen=True)
class Bridges:
    integration: str = "br-int"
    tunnel: str = "br-tun"
    patch_int: str = "patch-int"  # on br-tun, peer of patch_tun
    patch_tun: str = "patch-tun"  # on br-int


def int_patch_name(bridge: str) -> str:
    """The br-int side of a provider bridge's patch (upstream: ``int-<bridge>``)."""
    return f"int-{bridge}"[:15]


def phys_patch_name(bridge: str) -> str:
    return f"phy-{bridge}"[:15]


def tunnel_port_name(tunnel_type: str, remote_ip: str) -> str:
    """``vxlan-0a630002``: the type and the peer's IPv4 address in hex."""
    hexip = "".join(f"{int(octet):02x}" for octet in remote_ip.split("."))
    return f"{tunnel_type}-{hexip}"[:15]


def allocate_vlans(current: dict[str, int], wanted: set[str]) -> dict[str, int]:
    """Keep the VLAN of every network still wanted; give new ones the lowest free."""
    kept = {net: vlan for net, vlan in current.items() if net in wanted}
    used = set(kept.values())
    free = (v for v in range(1, DEAD_VLAN) if v not in used)
    for net in sorted(wanted - kept.keys()):
        kept[net] = next(free)
    return kept


def integration_flows(nets: list[LocalNet], bridge_mappings: dict[str, str]) -> list[Flow]:
    flows = [Flow(INT_ENTRY, 65535, f"vlan_tci={DEAD_VLAN:#06x}/0x1fff", "drop"),
             Flow(INT_ENTRY, 0, "", f"resubmit(,{INT_SWITCH})"),
             Flow(INT_SWITCH, 0, "", "NORMAL")]
    for physnet, bridge in sorted(bridge_mappings.items()):
        patch = int_patch_name(bridge)
        flows.append(Flow(INT_ENTRY, 2, f"in_port={patch}", "drop"))
        for net in nets:
            if net.physical_network != physnet:
                continue
            if net.network_type == "vlan":
                match = f"in_port={patch},dl_vlan={net.segmentation_id}"
            elif net.network_type == "flat":
                match = f"in_port={patch},vlan_tci=0x0000/0x1fff"
            else:
                continue
            flows.append(Flow(INT_ENTRY, 3, match,
                              f"mod_vlan_vid:{net.vlan},resubmit(,{INT_SWITCH})"))
    return sorted(flows)


def physical_flows(nets: list[LocalNet], physnet: str, bridge: str) -> list[Flow]:
    patch = phys_patch_name(bridge)
    flows = [Flow(0, 2, f"in_port={patch}", "drop"), Flow(0, 0, "", "NORMAL")]
    for net in nets:
        if net.physical_network != physnet:
            continue
        if net.network_type == "vlan":
            flows.append(Flow(0, 4, f"in_port={patch},dl_vlan={net.vlan}",
                              f"mod_vlan_vid:{net.segmentation_id},NORMAL"))
        elif net.network_type == "flat":
            flows.append(Flow(0, 4, f"in_port={patch},dl_vlan={net.vlan}",
                              "strip_vlan,NORMAL"))
    return sorted(flows)


def tunnel_flows(nets: list[LocalNet], tunnels: dict[str, str],
                 bridges: Bridges = Bridges(), flood: bool = True,
                 dvr: bool = False) -> list[Flow]:
    """br-tun's flows; ``tunnels`` maps tunnel port name -> tunnel type.
    Without ``flood`` (l2population) the flood lists come from ``l2pop``;
    with ``dvr``, what comes from br-int passes table 1 first (``dvr``)."""
    first = DVR_PROCESS if dvr else PATCH_LV_TO_TUN
    flows = [Flow(0, 1, f"in_port={bridges.patch_int}", f"resubmit(,{first})"),
             Flow(0, 0, "", "drop"),
             Flow(PATCH_LV_TO_TUN, 0, "dl_dst=00:00:00:00:00:00/01:00:00:00:00:00",
                  f"resubmit(,{UNICAST_TO_TUN})"),
             Flow(PATCH_LV_TO_TUN, 0, "dl_dst=01:00:00:00:00:00/01:00:00:00:00:00",
                  f"resubmit(,{FLOOD_TO_TUN})"),
             Flow(TUN_TO_LV, 0, "", "drop"),
             Flow(LEARN_FROM_TUN, 1, "",
                  f"learn(table={UNICAST_TO_TUN},priority=1,hard_timeout=300,"
                  "NXM_OF_VLAN_TCI[0..11],NXM_OF_ETH_DST[]=NXM_OF_ETH_SRC[],"
                  "load:0->NXM_OF_VLAN_TCI[],load:NXM_NX_TUN_ID[]->NXM_NX_TUN_ID[],"
                  f"output:OXM_OF_IN_PORT[]),output:{bridges.patch_int}"),
             Flow(UNICAST_TO_TUN, 0, "", f"resubmit(,{FLOOD_TO_TUN})"),
             Flow(FLOOD_TO_TUN, 0, "", "drop")]
    for port in sorted(tunnels):
        flows.append(Flow(0, 1, f"in_port={port}", f"resubmit(,{TUN_TO_LV})"))
    for net in nets:
        if net.network_type not in TUNNEL_TYPES:
            continue
        vni = f"{net.segmentation_id:#x}"
        flows.append(Flow(TUN_TO_LV, 1, f"tun_id={vni}",
                          f"mod_vlan_vid:{net.vlan},resubmit(,{LEARN_FROM_TUN})"))
        outs = [p for p, kind in sorted(tunnels.items()) if kind == net.network_type]
        if outs and flood:
            flows.append(Flow(FLOOD_TO_TUN, 1, f"dl_vlan={net.vlan}",
                              f"strip_vlan,set_tunnel:{vni},"
                              + ",".join(f"output:{p}" for p in outs)))
    return sorted(flows)


def diff(old: set[Flow], new: set[Flow]) -> tuple[list[Flow], list[Flow]]:
    """(to add, to delete); a flow whose actions changed is re-added, its key
    replaced in place by OpenFlow's add semantics, and not deleted."""
    new_keys = {f.key() for f in new}
    add = sorted(new - old)
    delete = sorted(f for f in old - new if f.key() not in new_keys)
    return add, delete

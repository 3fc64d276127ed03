"""Distributed routers on br-tun (upstream's OVS DVR agent), as a pure model.

Every host that a distributed router routes on has the router's interface
ports (``qr-``) with the same MAC and address. Those must never be seen
beyond the host, or other hosts' switches would learn one MAC in many
places and instances would reach another host's copy. So br-tun, for each
distributed router port wired here, in table 1 (upstream's DVR_PROCESS,
between the patch from br-int and table 2):

- drops ARP for the port's address (instances ask their own host's copy);
- drops frames to the port's MAC (they are for this host's copy only);
- rewrites the source of frames from the port's MAC to this host's own
  DVR MAC (``get_dvr_mac_address_by_host``), so what the router routed
  here reaches other hosts from a MAC that is this host's alone.

And br-int, for frames from another host's DVR MAC (``dvr_mac_address_update``,
``get_dvr_mac_address_list``) coming in from br-tun: table 1 (upstream's
DVR_TO_SRC_MAC) gives a frame for a local instance of a network with a
distributed port here that port's MAC as source again (the instance sees
its own router) and hands it straight to the instance's port: NORMAL would
learn the router's MAC behind the tunnel and send the host's own traffic
to its router there. With the openvswitch firewall the frames keep the
other host's DVR MAC and go through the firewall's tables instead (the
rewrite would have to bypass them).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import netaddr

from neutrino.agents.ovs.flows import INT_SWITCH, PATCH_LV_TO_TUN, Flow

DVR_PROCESS = 1  # br-tun table
DVR_TO_SRC_MAC = 1  # br-int table
INTERFACE_DISTRIBUTED = "network:router_interface_distributed"


@dataclass(frozen=True, order=True)
class DvrPort:
    """A distributed router port wired here: its local VLAN, MAC and addresses."""
    vlan: int
    mac: str
    ips: tuple[str, ...]


def process_flows(ports: Iterable[DvrPort], dvr_mac: str) -> list[Flow]:
    """br-tun table 1's flows for ``ports`` (the default: on to table 2)."""
    out = [Flow(DVR_PROCESS, 0, "", f"resubmit(,{PATCH_LV_TO_TUN})")]
    for port in sorted(set(ports)):
        for ip in port.ips:
            if netaddr.IPAddress(ip).version == 4:
                out.append(Flow(DVR_PROCESS, 3, f"arp,dl_vlan={port.vlan},arp_tpa={ip}", "drop"))
            else:
                out.append(Flow(DVR_PROCESS, 3, f"icmp6,dl_vlan={port.vlan},icmp_type=135,"
                                                f"nd_target={ip}", "drop"))
        out.append(Flow(DVR_PROCESS, 2, f"dl_vlan={port.vlan},dl_dst={port.mac}", "drop"))
        out.append(Flow(DVR_PROCESS, 1, f"dl_vlan={port.vlan},dl_src={port.mac}",
                        f"mod_dl_src:{dvr_mac},resubmit(,{PATCH_LV_TO_TUN})"))
    return sorted(out)


def integration_flows(ports: Iterable[DvrPort], instances: Iterable[tuple[int, str, str]],
                      remote_macs: Iterable[str], patch_tun: str) -> list[Flow]:
    """br-int's flows for frames from other hosts' DVR MACs; ``instances``:
    (local VLAN, MAC, port name) of the instances wired here."""
    gateway: dict[int, str] = {}
    for port in sorted(set(ports)):
        gateway.setdefault(port.vlan, port.mac)
    macs = sorted(set(remote_macs))
    if not gateway or not macs:
        return []
    out = [Flow(0, 4, f"in_port={patch_tun},dl_src={mac}", f"resubmit(,{DVR_TO_SRC_MAC})")
           for mac in macs]
    out.append(Flow(DVR_TO_SRC_MAC, 0, "", f"resubmit(,{INT_SWITCH})"))
    for vlan, mac, name in sorted(set(instances)):
        if vlan in gateway:
            out.append(Flow(DVR_TO_SRC_MAC, 4, f"dl_vlan={vlan},dl_dst={mac}",
                            f"strip_vlan,mod_dl_src:{gateway[vlan]},output:{name}"))
    return sorted(out)

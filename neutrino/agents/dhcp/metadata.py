"""Metadata served from a network's DHCP namespace (upstream's isolated metadata).

With ``enable_isolated_metadata`` a network whose DHCP subnets include one
no router serves (no router interface holds its gateway IP) gets a proxy in
its DHCP namespace on 169.254.169.254:80; with ``force_metadata`` every
network with DHCP does. Either option puts 169.254.169.254/32 on the DHCP
port, and DHCP then tells instances of those subnets (``force_metadata``:
all IPv4 subnets) to reach 169.254.169.254 through the DHCP port's address
(option 121). Pure decisions here; the driver applies them.
"""
from __future__ import annotations

import dataclasses
import ipaddress
from typing import Any

from neutrino.agents.dhcp import dnsmasq
from neutrino.agents.metadata.proxies import NETWORK, MetadataProxies
from neutrino.agents.metadata.shared_client import SharedMetadataProxy

METADATA_CIDR = dnsmasq.METADATA_CIDR
METADATA_IP = METADATA_CIDR.split("/")[0]
METADATA_PORT = 80


@dataclasses.dataclass(frozen=True)
class Flags:
    enable_isolated_metadata: bool = False
    force_metadata: bool = False

    @property
    def any(self) -> bool:
        return self.enable_isolated_metadata or self.force_metadata


def should_serve(network: dict[str, Any], flags: Flags) -> bool:
    """Whether the network's DHCP namespace runs a metadata proxy."""
    subnets = dnsmasq.dhcp_subnets(network)
    if not subnets:
        return False
    if flags.force_metadata:
        return True
    if not flags.enable_isolated_metadata:
        return False
    isolated = dnsmasq.isolated_subnets(network)
    return any(isolated.get(s["id"], True) for s in subnets)


def route_ips(network: dict[str, Any], port: dict[str, Any], flags: Flags) -> dict[str, str]:
    """Subnet id -> the DHCP port's IPv4 address instances reach metadata through."""
    isolated = dnsmasq.isolated_subnets(network)
    v4 = {s["id"] for s in network.get("subnets") or [] if s.get("ip_version", 4) == 4}
    out = {}
    for fixed in port.get("fixed_ips") or []:
        sid = fixed.get("subnet_id")
        if sid not in v4 or ipaddress.ip_address(fixed["ip_address"]).version != 4:
            continue
        if flags.force_metadata or (flags.enable_isolated_metadata and isolated.get(sid, True)):
            out.setdefault(sid, fixed["ip_address"])
    return out


class NetworkMetadata:
    """The DHCP namespaces' metadata listeners, all in one proxy process
    (``SharedMetadataProxy``); a per-network proxy process left by an
    earlier version is stopped before its network's listener is asked for
    (it holds the same address and port)."""

    def __init__(self, flags: Flags, state_path: str, socket_path: str) -> None:
        self.flags = flags
        self.proxy = SharedMetadataProxy(state_path, socket_path)
        self.legacy = MetadataProxies(state_path, socket_path, NETWORK)

    def converge(self, network: dict[str, Any], namespace: str) -> None:
        if should_serve(network, self.flags):
            self.legacy.stop(network["id"])
            self.proxy.ensure(network["id"], namespace, METADATA_IP, METADATA_PORT)
        else:
            self.stop(network["id"])

    def stop(self, network_id: str) -> None:
        self.proxy.stop(network_id)
        self.legacy.stop(network_id)

    def running(self) -> list[str]:
        """Networks this host serves metadata for, as a previous run left them."""
        return sorted(set(self.proxy.wanted()) | set(self.legacy.running()))

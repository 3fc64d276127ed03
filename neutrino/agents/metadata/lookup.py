"""Which instance asked: the port holding the requester's address (pure over ``get_ports``).

As upstream: a router proxy names the router, whose interface ports give the
networks to search; a DHCP-namespace proxy names the network itself. The
address comes from ``X-Forwarded-For``; an IPv4-mapped IPv6 address counts
as its IPv4 address, and an IPv6 link-local one is matched by the MAC
address encoded in it (the only thing the server knows of it). Exactly one
port must match; none or several is "unknown" (404), never a guess.
"""
from __future__ import annotations

import dataclasses
import logging
from typing import Any, Callable

import netaddr

LOG = logging.getLogger(__name__)

ROUTER_INTERFACE_OWNERS = ["network:router_interface",
                           "network:ha_router_replicated_interface",
                           "network:router_interface_distributed"]

GetPorts = Callable[[dict[str, Any]], list[dict[str, Any]]]


@dataclasses.dataclass(frozen=True)
class Instance:
    instance_id: str  # the port's device_id
    project_id: str


def _mac_of_link_local(address: netaddr.IPAddress) -> str:
    """The MAC a modified EUI-64 interface identifier was made from."""
    ident = int(address) & ((1 << 64) - 1)
    octets = ident.to_bytes(8, "big")
    mac = bytes([octets[0] ^ 0x02]) + octets[1:3] + octets[5:8]
    return ":".join(f"{b:02x}" for b in mac)


def port_filters(remote: str, networks: list[str]) -> dict[str, Any]:
    """The ``get_ports`` filters for the requester on ``networks``."""
    filters: dict[str, Any] = {"network_id": networks}
    address = netaddr.IPAddress(remote)
    if address.version == 6 and address.is_ipv4_mapped():
        address = address.ipv4()
    if address.version == 6 and address.is_link_local():
        filters["mac_address"] = [_mac_of_link_local(address)]
    else:
        filters["fixed_ips"] = {"ip_address": [str(address)]}
    return filters


class InstanceLookup:
    def __init__(self, get_ports: GetPorts) -> None:
        self.get_ports = get_ports

    def router_networks(self, router_id: str) -> list[str]:
        ports = self.get_ports({"device_id": [router_id],
                                "device_owner": ROUTER_INTERFACE_OWNERS})
        return sorted({p["network_id"] for p in ports})

    def find(self, remote: str, network_id: str | None = None,
             router_id: str | None = None) -> Instance | None:
        """The instance behind ``remote``; None when unknown or ambiguous."""
        if bool(network_id) == bool(router_id):
            raise ValueError("exactly one of network_id and router_id is needed")
        networks = [network_id] if network_id else self.router_networks(str(router_id))
        if not networks:
            return None
        try:
            filters = port_filters(remote, networks)
        except (netaddr.AddrFormatError, ValueError):
            LOG.warning("metadata request from an invalid address %r", remote)
            return None
        ports = self.get_ports(filters)
        if len(ports) != 1:
            LOG.warning("%d ports with address %s on networks %s (router %s)",
                        len(ports), remote, networks, router_id)
            return None
        port = ports[0]
        return Instance(port["device_id"], port.get("project_id") or port.get("tenant_id", ""))

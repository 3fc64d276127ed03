"""Plugging agent ports into a Linux bridge (upstream's ``linuxbridge`` design).

A port is a veth pair: ``ns-<port>`` inside the agent's namespace carries
the port's MAC and addresses; its peer ``tap<port>`` stays in the host
namespace, enslaved to the network's bridge ``brq<network_id[:11]>`` (the
name upstream's Linux bridge agent gives it, so either side can create it
first). Kernel bridging needs no checksum fix-ups (see dataplane recipes).
"""
from __future__ import annotations

from neutrino.agents import iproute
from neutrino.agents.interface import InterfaceDriver

BRIDGE_PREFIX = "brq"
TAP_PREFIX = "tap"


def bridge_name(network_id: str) -> str:
    return (BRIDGE_PREFIX + network_id)[:14]


class BridgeInterfaceDriver(InterfaceDriver):
    DEV_NAME_PREFIX = "ns-"

    def __init__(self, bridge_namespace: str | None = None) -> None:
        # Where bridges and host-side veth ends live: the host namespace, or
        # an emulated hypervisor's namespace in tests.
        self.bridge_namespace = bridge_namespace

    def peer_name(self, device_name: str) -> str:
        """The host-side end of ``ns-1234abcd-ef`` is ``tap1234abcd-ef``."""
        suffix = device_name[len(self.DEV_NAME_PREFIX):] \
            if device_name.startswith(self.DEV_NAME_PREFIX) else device_name
        return (TAP_PREFIX + suffix)[:14]

    def ensure_bridge(self, network_id: str) -> str:
        name = bridge_name(network_id)
        if not iproute.link_exists(name, self.bridge_namespace):
            iproute.ip("link", "add", name, "type", "bridge",
                       namespace=self.bridge_namespace)
        iproute.ip("link", "set", name, "up", namespace=self.bridge_namespace)
        return name

    def plug(self, network_id: str, port_id: str, device_name: str, mac_address: str,
             namespace: str | None = None, mtu: int | None = None) -> None:
        bridge = self.ensure_bridge(network_id)
        peer = self.peer_name(device_name)
        if namespace:
            iproute.ensure_namespace(namespace)
        if not iproute.link_exists(device_name, namespace):
            iproute.delete_link(peer, self.bridge_namespace)  # a half-made pair
            self._add_pair(device_name, peer, namespace)
        mtu_args = ["mtu", str(mtu)] if mtu else []
        iproute.ip("link", "set", device_name, "address", mac_address, *mtu_args, "up",
                   namespace=namespace)
        iproute.ip("link", "set", peer, "master", bridge, *mtu_args, "up",
                   namespace=self.bridge_namespace)

    def _add_pair(self, device_name: str, peer: str, namespace: str | None) -> None:
        """Create the pair where the peer lives, then move our end: ``ip``
        cannot name a target namespace for both ends at once."""
        args = ["link", "add", peer, "type", "veth", "peer", "name", device_name]
        if namespace:
            args += ["netns", namespace]
        iproute.ip(*args, namespace=self.bridge_namespace)

    def unplug(self, device_name: str, namespace: str | None = None) -> None:
        iproute.delete_link(device_name, namespace)  # takes its peer with it
        iproute.delete_link(self.peer_name(device_name), self.bridge_namespace)

"""``OVSInterfaceDriver``: a DHCP or router device as an OVS internal port of br-int.

The port carries ``external_ids:iface-id=<port_id>`` and ``attached-mac``,
so the OVS agent finds and wires it like an instance's VIF; the kernel
device OVS creates is given the port's MAC and moved into the namespace.
Internal ports need no checksum workaround (their tx checksumming is off).
An ovs-vswitchd restart orphans a moved device: plugging again re-creates
it (``plug`` is idempotent and repairs a port whose device is missing).
"""
from __future__ import annotations

import subprocess

from neutrino.agents.interface import InterfaceDriver
from neutrino.agents.ovs.ovsctl import OvsCtl


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check)


def _exists(device: str, namespace: str | None) -> bool:
    ns = ["-n", namespace] if namespace else []
    return _ip(*ns, "link", "show", device, check=False).returncode == 0


class OVSInterfaceDriver(InterfaceDriver):
    def __init__(self, ovs: OvsCtl | None = None, bridge: str = "br-int") -> None:
        self.ovs = ovs or OvsCtl()
        self.bridge = bridge

    def plug(self, network_id: str, port_id: str, device_name: str, mac_address: str,
             namespace: str | None = None, mtu: int | None = None) -> None:
        if namespace and _ip("netns", "list", check=True).stdout.split().count(namespace) == 0:
            _ip("netns", "add", namespace)
            _ip("-n", namespace, "link", "set", "lo", "up")
        if _exists(device_name, namespace) and device_name in self.ovs.ports(self.bridge):
            return
        if device_name in self.ovs.ports(self.bridge):  # orphaned by a vswitchd restart
            self.ovs.delete_port(self.bridge, device_name)
        self.ovs.add_internal_port(self.bridge, device_name, port_id, mac_address)
        _ip("link", "set", device_name, "address", mac_address)
        if namespace:
            _ip("link", "set", device_name, "netns", namespace)
        ns = ["-n", namespace] if namespace else []
        if mtu:
            _ip(*ns, "link", "set", device_name, "mtu", str(mtu))
        _ip(*ns, "link", "set", device_name, "up")

    def unplug(self, device_name: str, namespace: str | None = None) -> None:
        self.ovs.delete_port(self.bridge, device_name)
        if namespace and _exists(device_name, namespace):
            _ip("-n", namespace, "link", "del", device_name, check=False)

"""``OVSInterfaceDriver``: a DHCP or router device as an OVS internal port of br-int.

The port carries ``external_ids:iface-id=<port_id>`` and ``attached-mac``,
so the OVS agent finds and wires it like an instance's VIF; the kernel
device OVS creates is given the port's MAC and moved into the namespace.
Internal ports need no checksum workaround (their tx checksumming is off).
An ovs-vswitchd restart orphans a moved device: plugging again re-creates
it (``plug`` is idempotent and repairs a port whose device is missing).

OVS creates an internal port's device in ovs-vswitchd's own network
namespace. That is the agent's namespace on a real hypervisor, but not on
an emulated host (a vswitchd started inside a host namespace while the
agents run outside it): the device is therefore found and moved from the
switch's namespace, read from the pid file in ``OVS_RUNDIR``.
"""
from __future__ import annotations

import os
import subprocess

from neutrino.agents import iproute
from neutrino.agents.interface import InterfaceDriver
from neutrino.agents.ovs.ovsctl import OvsCtl


def _ip(*args: str, check: bool = True, enter: list[str] | None = None
        ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*(enter or []), "ip", *args], capture_output=True, text=True,
                          check=check)


def switch_netns() -> str | None:
    """``/proc/<pid>/ns/net`` of the local ovs-vswitchd when it is another
    network namespace than ours, else None (also when it cannot be told)."""
    rundir = os.environ.get("OVS_RUNDIR", "/var/run/openvswitch")
    try:
        with open(os.path.join(rundir, "ovs-vswitchd.pid"), encoding="ascii") as f:
            path = f"/proc/{int(f.read().strip())}/ns/net"
        if os.stat(path).st_ino == os.stat("/proc/self/ns/net").st_ino:
            return None
    except (OSError, ValueError):
        return None
    return path


class OVSInterfaceDriver(InterfaceDriver):
    def __init__(self, ovs: OvsCtl | None = None, bridge: str = "br-int") -> None:
        self.ovs = ovs or OvsCtl()
        self.bridge = bridge

    def _enter(self) -> list[str]:
        """The command prefix that runs ``ip`` where the switch makes devices."""
        path = switch_netns()
        return ["nsenter", f"--net={path}"] if path else []

    def _exists(self, device: str, namespace: str | None) -> bool:
        if namespace:
            return _ip("-n", namespace, "link", "show", device, check=False).returncode == 0
        return _ip("link", "show", device, check=False, enter=self._enter()).returncode == 0

    def plug(self, network_id: str, port_id: str, device_name: str, mac_address: str,
             namespace: str | None = None, mtu: int | None = None) -> None:
        if namespace and not iproute.namespace_exists(namespace):
            iproute.ensure_namespace(namespace)  # not ``ip netns list``: it opens every one
        if self._exists(device_name, namespace) and device_name in self.ovs.ports(self.bridge):
            return
        if device_name in self.ovs.ports(self.bridge):  # orphaned by a vswitchd restart
            self.ovs.delete_port(self.bridge, device_name)
        self.ovs.add_internal_port(self.bridge, device_name, port_id, mac_address)
        enter = self._enter()
        # one ``ip`` each side of the move (a router plugs a device per port)
        _ip("link", "set", device_name, "address", mac_address,
            *(("netns", namespace) if namespace else ()), enter=enter)
        ns = ["-n", namespace] if namespace else []
        _ip(*ns, "link", "set", device_name, *(("mtu", str(mtu)) if mtu else ()), "up",
            enter=[] if ns else enter)

    def attached(self, device_names: list[str]) -> set[str]:
        """Those with their port on the bridge (one read of the switch's
        replica; a port a vswitchd restart orphaned is plugged again)."""
        return set(device_names) & set(self.ovs.ports(self.bridge)) if device_names else set()

    def unplug(self, device_name: str, namespace: str | None = None) -> None:
        self.ovs.delete_port(self.bridge, device_name)
        if namespace and self._exists(device_name, namespace):
            _ip("-n", namespace, "link", "del", device_name, check=False)

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

A pass over many devices (the L3 agent's sync) first gives them all to
``attach_all``: one read of which ports the switch has, and the missing
ones added together, ``ADD_CHUNK`` to a transaction (ovs-vswitchd
reconfigures once per transaction, at a cost that grows with its ports).
``plug`` and ``attached`` then answer those devices from what the pass
found instead of asking the switch about each; no question lists a
bridge's ports (their number is the switch's, not the pass's).
"""
from __future__ import annotations

import os
import subprocess
import threading

from neutrino.agents import iproute
from neutrino.agents.interface import Attachment, InterfaceDriver
from neutrino.agents.ovs.ovsctl import OvsCtl
from neutrino.agents.pidfile import read_pid


def _ip(*args: str, check: bool = True, enter: list[str] | None = None
        ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*(enter or []), "ip", *args], capture_output=True, text=True,
                          check=check)


def switch_netns() -> str | None:
    """``/proc/<pid>/ns/net`` of the local ovs-vswitchd when it is another
    network namespace than ours, else None (also when it cannot be told)."""
    pid = read_pid(os.path.join(os.environ.get("OVS_RUNDIR", "/var/run/openvswitch"),
                                "ovs-vswitchd.pid"))
    if pid is None:
        return None
    path = f"/proc/{pid}/ns/net"
    try:
        if os.stat(path).st_ino == os.stat("/proc/self/ns/net").st_ino:
            return None
    except OSError:
        return None
    return path


# what ``attach_all`` found of a device: its port was there, or it added it
_WAS_THERE, _ADDED = "was there", "added"


class OVSInterfaceDriver(InterfaceDriver):
    def __init__(self, ovs: OvsCtl | None = None, bridge: str = "br-int") -> None:
        self.ovs = ovs or OvsCtl()
        self.bridge = bridge
        # device -> _WAS_THERE/_ADDED, from the pass's ``attach_all``; a
        # device's entry is used once by ``plug`` (routers plug from threads)
        self._pass: dict[str, str] = {}
        self._pass_lock = threading.Lock()

    def _enter(self) -> list[str]:
        """The command prefix that runs ``ip`` where the switch makes devices."""
        path = switch_netns()
        return ["nsenter", f"--net={path}"] if path else []

    def _exists(self, device: str, namespace: str | None) -> bool:
        if namespace:
            return _ip("-n", namespace, "link", "show", device, check=False).returncode == 0
        return _ip("link", "show", device, check=False, enter=self._enter()).returncode == 0

    def attach_all(self, devices: list[Attachment]) -> None:
        names = [d.device_name for d in devices]
        there = self.ovs.ports_named(names)
        missing = [d for d in devices if d.device_name not in there]
        self.ovs.add_internal_ports(self.bridge, [(d.device_name, d.port_id, d.mac_address)
                                                  for d in missing])
        with self._pass_lock:
            self._pass = {name: _WAS_THERE for name in there}
            self._pass.update((d.device_name, _ADDED) for d in missing)

    def _found(self, device_name: str, once: bool) -> str | None:
        with self._pass_lock:
            return self._pass.pop(device_name, None) if once else self._pass.get(device_name)

    def plug(self, network_id: str, port_id: str, device_name: str, mac_address: str,
             namespace: str | None = None, mtu: int | None = None) -> None:
        if namespace and not iproute.namespace_exists(namespace):
            iproute.ensure_namespace(namespace)  # not ``ip netns list``: it opens every one
        found = self._found(device_name, once=True)
        if found != _ADDED:  # else its device waits, new, where the switch makes them
            on_bridge = (found == _WAS_THERE if found
                         else bool(self.ovs.ports_named([device_name])))
            if on_bridge and self._exists(device_name, namespace):
                return
            if on_bridge:  # orphaned by a vswitchd restart
                self.ovs.delete_port(self.bridge, device_name)
            self.ovs.add_internal_port(self.bridge, device_name, port_id, mac_address)
        # one ``ip``: the kernel moves the device first, then sets the rest
        # on it in its new namespace (a router plugs a device per port)
        _ip("link", "set", device_name, "address", mac_address,
            *(("mtu", str(mtu)) if mtu else ()), *(("netns", namespace) if namespace else ()),
            "up", enter=self._enter())

    def attached(self, device_names: list[str]) -> set[str]:
        """Those with their port on the switch: as the pass's ``attach_all``
        found them, others by one read of the switch's replica (a port a
        vswitchd restart orphaned is plugged again)."""
        known = {n: self._found(n, once=False) for n in device_names}
        unknown = [n for n, found in known.items() if found is None]
        return ({n for n, found in known.items() if found == _WAS_THERE}
                | self.ovs.ports_named(unknown))

    def unplug(self, device_name: str, namespace: str | None = None) -> None:
        self._found(device_name, once=True)
        self.ovs.delete_port(self.bridge, device_name)
        if namespace and self._exists(device_name, namespace):
            _ip("-n", namespace, "link", "del", device_name, check=False)

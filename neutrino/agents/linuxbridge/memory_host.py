"""A host kept in memory, implementing ``host.BridgeHost``.

It lives in the package, next to the interface, so that it changes with
it: the Linux bridge agent's tests drive it instead of a host's links.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from neutrino.agents.iproute import IpError
from neutrino.agents.linuxbridge.host import FLOOD_MAC, BridgeHost


@dataclass(frozen=True)
class Vxlan:
    """A VXLAN device as ``ensure_vxlan`` made it."""
    vni: int
    local_ip: str
    port: int
    group: str | None
    learning: bool
    ttl: int | None
    tos: int | None


class MemoryHost(BridgeHost):
    """Links, forwarding and neighbour entries and rulesets in dicts."""

    def __init__(self, *taps: str) -> None:
        self.state: dict[str, dict[str, Any]] = {}  # link name -> its ``links`` entry
        self.fdbs: dict[str, set[tuple[str, str]]] = {}
        self.neigh: dict[str, dict[str, str]] = {}  # device -> ip -> mac
        self.loaded: list[str] = []  # every ruleset loaded, in order
        self.vxlans: dict[str, Vxlan] = {}
        for tap in taps:
            self.plug(tap)

    def plug(self, name: str) -> None:
        """A tap as the compute service plugs one."""
        self.state[name] = {"ifname": name}

    def unplug(self, name: str) -> None:
        self.delete(name)

    def _link(self, name: str) -> dict[str, Any]:
        if name not in self.state:
            raise IpError(f"Cannot find device \"{name}\"")
        return self.state[name]

    def links(self) -> dict[str, dict[str, Any]]:
        return {k: dict(v) for k, v in self.state.items()}

    def ensure_bridge(self, name: str) -> None:
        self.state.setdefault(name, {"ifname": name})["operstate"] = "UP"

    def ensure_vxlan(self, name: str, vni: int, local_ip: str, port: int,
                     group: str | None, learning: bool, ttl: int | None,
                     tos: int | None) -> None:
        if name in self.state:
            return
        self.state[name] = {"ifname": name}
        self.fdbs[name] = set()
        self.vxlans[name] = Vxlan(vni, local_ip, port, group, learning, ttl, tos)

    def enslave(self, device: str, bridge: str, up: bool = True,
                mtu: int | None = None) -> None:
        self._link(bridge)
        link = self._link(device)
        link.update({"master": bridge, "operstate": "UP" if up else "DOWN"})
        if mtu:
            link["mtu"] = mtu

    def release(self, device: str) -> None:
        self.state.get(device, {}).pop("master", None)

    def delete(self, device: str) -> None:
        if self.state.pop(device, None) is None:
            return
        self.fdbs.pop(device, None)
        self.vxlans.pop(device, None)
        for link in self.state.values():
            if link.get("master") == device:
                link.pop("master")

    def fdb(self, device: str) -> set[tuple[str, str]]:
        self._link(device)
        return set(self.fdbs.get(device, set()))

    def fdb_add(self, device: str, mac: str, dst: str) -> None:
        self._link(device)
        entries = self.fdbs.setdefault(device, set())
        if mac != FLOOD_MAC:
            entries -= {e for e in entries if e[0] == mac}
        entries.add((mac, dst))

    def fdb_del(self, device: str, mac: str, dst: str) -> None:
        self.fdbs.get(device, set()).discard((mac, dst))

    def neigh_replace(self, device: str, ip: str, mac: str) -> None:
        self._link(device)
        self.neigh.setdefault(device, {})[ip] = mac

    def nft_load(self, ruleset: str) -> None:
        self.loaded.append(ruleset)

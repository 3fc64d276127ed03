"""A switch kept in memory, implementing ``switch.Switch``.

It lives in the package, next to the interface, so that it changes with
it: the agent's tests drive it instead of a host, and the contract tests
hold it and the real adapter (``ovsctl.OvsCtl``) to the same behaviour.
Flows are kept by key (``flows.Flow.key``), as a strict OpenFlow delete
finds them; ``journal`` records the writes that matter to a test (a port
tagged, a tunnel made), in order.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Iterable

from neutrino.agents.ovs.switch import OvsError, PortTag, Switch, VifPort


@dataclass
class _Port:
    name: str
    kind: str = ""  # "", "internal", "patch" or a tunnel type
    options: dict[str, str] = field(default_factory=dict)
    vif: VifPort | None = None  # set when an iface-id names a Neutron port


def _key(spec: str) -> str:
    """The key of a flow spec ``cookie=..,<key>,actions=..``."""
    return spec.split(",", 1)[1].split(",actions=")[0]


def _cookie(spec: str) -> int:
    return int(spec.split(",", 1)[0].split("=", 1)[1], 16)


class MemorySwitch(Switch):
    """Bridges, ports, flows, meters and shaping in dicts."""

    def __init__(self, vifs: Iterable[VifPort] = (), bridge: str = "br-int") -> None:
        self.bridges: dict[str, dict[str, _Port]] = {}  # bridge -> port name -> port
        self.flows: dict[str, dict[str, str]] = {}  # bridge -> key -> spec
        self.meter_table: dict[str, dict[int, tuple[int, int]]] = {}
        self.shaping: dict[str, tuple[int, int]] = {}
        self.journal: list[tuple[str | int, ...]] = []
        self._watchers: list[Callable[[], None]] = []
        self._next_ofport = 1
        for vif in vifs:
            self.plug(bridge, vif)

    # -- what a test does to the host ------------------------------------------------

    def plug(self, bridge: str, vif: VifPort) -> None:
        """A VIF as the compute service plugs one (its bridge made if missing)."""
        self.bridges.setdefault(bridge, {})[vif.name] = _Port(vif.name, "internal", vif=vif)
        self._next_ofport = max(self._next_ofport, vif.ofport + 1)
        self._wake()

    def unplug(self, port: str) -> None:
        for ports in self.bridges.values():
            if ports.pop(port, None) is not None:
                self._wake()

    @property
    def vifs(self) -> dict[str, VifPort]:
        """Port name -> VIF, of every bridge."""
        return {p.name: p.vif for ports in self.bridges.values() for p in ports.values()
                if p.vif is not None}

    def _wake(self) -> None:
        for watcher in list(self._watchers):
            watcher()

    def _bridge(self, name: str) -> dict[str, _Port]:
        if name not in self.bridges:
            raise OvsError(f"no bridge named {name}")
        return self.bridges[name]

    def _find(self, port: str) -> _Port:
        for ports in self.bridges.values():
            if port in ports:
                return ports[port]
        raise OvsError(f"no port named {port}")

    # -- bridges and ports -----------------------------------------------------------

    def ensure_bridge(self, name: str, datapath_type: str = "system",
                      fail_mode: str = "secure") -> None:
        self.bridges.setdefault(name, {})
        self.flows.setdefault(name, {})

    def bridge_exists(self, name: str) -> bool:
        return name in self.bridges

    def ports(self, bridge: str) -> list[str]:
        return sorted(self._bridge(bridge))

    def ensure_patch(self, bridge: str, port: str, peer: str) -> None:
        self._bridge(bridge).setdefault(port, _Port(port, "patch")).options["peer"] = peer

    def ensure_tunnel(self, bridge: str, port: str, tunnel_type: str, local_ip: str,
                      remote_ip: str) -> None:
        self.journal.append(("tunnel", port))
        self._bridge(bridge)[port] = _Port(port, tunnel_type, {
            "remote_ip": remote_ip, "local_ip": local_ip, "in_key": "flow",
            "out_key": "flow"})

    def tunnel_ports(self, bridge: str) -> dict[str, str]:
        return {p.name: p.options.get("remote_ip", "") for p in self._bridge(bridge).values()
                if p.kind in ("vxlan", "gre", "geneve")}

    def delete_port(self, bridge: str, port: str) -> None:
        self.journal.append(("del", port))
        self.bridges.get(bridge, {}).pop(port, None)

    def add_internal_port(self, bridge: str, port: str, iface_id: str, mac: str) -> None:
        ofport, self._next_ofport = self._next_ofport, self._next_ofport + 1
        self.plug(bridge, VifPort(port, iface_id, mac, ofport, None, {}))

    def set_port_tags(self, tags: list[PortTag]) -> None:
        ports = [(self._find(name), tag, other) for name, tag, other in tags]
        for port, tag, other in ports:
            self.journal.append(("tag", port.name, tag))
            if port.vif is None:
                continue
            merged = {**port.vif.other_config, **other}
            port.vif = replace(port.vif, tag=tag,
                               other_config={k: v for k, v in merged.items() if v != ""})

    def vif_ports(self, bridge: str) -> list[VifPort]:
        return sorted((p.vif for p in self._bridge(bridge).values() if p.vif is not None),
                      key=lambda v: v.name)

    def watch_vifs(self, watcher: Callable[[], None]) -> Callable[[], None]:
        self._watchers.append(watcher)

        def unwatch() -> None:
            if watcher in self._watchers:
                self._watchers.remove(watcher)
        return unwatch

    def set_port_shaping(self, port: str, kbps: int | None, burst_kb: int = 0) -> None:
        if not any(port in ports for ports in self.bridges.values()):
            return
        if kbps is None:
            self.shaping.pop(port, None)
        else:
            self.shaping[port] = (kbps, burst_kb)

    def port_shapings(self) -> dict[str, tuple[int, int]]:
        return dict(self.shaping)

    # -- flows and meters --------------------------------------------------------------

    def add_flows(self, bridge: str, specs: Iterable[str]) -> None:
        table = self.flows.setdefault(bridge, {})
        for spec in specs:
            table[_key(spec)] = spec

    def delete_flows_strict(self, bridge: str, keys: Iterable[str]) -> None:
        table = self.flows.get(bridge, {})
        for key in keys:
            table.pop(key, None)

    def delete_flows_by_cookie(self, bridge: str, cookie: int) -> None:
        self.flows[bridge] = {k: s for k, s in self.flows.get(bridge, {}).items()
                              if _cookie(s) != cookie}

    def cookies(self, bridge: str) -> set[int]:
        return set(self.flow_counts(bridge))

    def flow_counts(self, bridge: str) -> dict[int, int]:
        self._bridge(bridge)
        counts: dict[int, int] = {}
        for spec in self.flows.get(bridge, {}).values():
            counts[_cookie(spec)] = counts.get(_cookie(spec), 0) + 1
        return counts

    def meters(self, bridge: str) -> dict[int, tuple[int, int]]:
        return dict(self.meter_table.get(bridge, {}))

    def set_meter(self, bridge: str, spec: str, exists: bool) -> None:
        fields = dict(part.split("=", 1) for part in spec.split(",") if "=" in part)
        meter_id = int(fields["meter"])
        meters = self.meter_table.setdefault(bridge, {})
        if exists != (meter_id in meters):
            raise OvsError(f"meter {meter_id} {'missing' if exists else 'exists'}")
        meters[meter_id] = (int(fields["rate"]), int(fields.get("burst_size", 0)))

    def delete_meter(self, bridge: str, meter_id: int) -> None:
        self.meter_table.get(bridge, {}).pop(meter_id, None)

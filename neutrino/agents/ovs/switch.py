"""What the OVS agent asks of a switch, as an interface its adapters implement.

Two halves, because they are two protocols on a real host: the database
side (bridges, ports, tags, egress shaping: OVSDB) and the OpenFlow side
(flows, meters). ``ovsdb.OvsdbPorts`` and ``ofctl.OfctlFlows`` are the real
adapters, ``ovsctl.OvsCtl`` the two together; ``memory_switch.MemorySwitch``
implements the same interface in memory, shipped beside it so the agent's
tests cannot drift from what the real switch does (the contract tests run
against both).
"""
from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Callable, Iterable


class OvsError(RuntimeError):
    """OVSDB refused or timed out, or an OVS tool failed; the message says why."""


@dataclass(frozen=True)
class VifPort:
    """A br-int port that a VIF (instance, DHCP, router device) owns."""
    name: str
    iface_id: str
    mac: str | None
    ofport: int
    tag: int | None
    other_config: dict[str, str] = field(default_factory=dict)


PortTag = tuple[str, int, dict[str, str]]  # port name, VLAN tag, other_config to merge


class SwitchPorts(abc.ABC):
    """Bridges, ports, their tags and egress shaping (the database side)."""

    @abc.abstractmethod
    def ensure_bridge(self, name: str, datapath_type: str = "system",
                      fail_mode: str = "secure") -> None:
        """The bridge exists, with that datapath and fail mode."""

    @abc.abstractmethod
    def bridge_exists(self, name: str) -> bool: ...

    @abc.abstractmethod
    def ports(self, bridge: str) -> list[str]:
        """The names of the bridge's ports, sorted."""

    @abc.abstractmethod
    def ensure_patch(self, bridge: str, port: str, peer: str) -> None: ...

    @abc.abstractmethod
    def ensure_tunnel(self, bridge: str, port: str, tunnel_type: str, local_ip: str,
                      remote_ip: str) -> None: ...

    @abc.abstractmethod
    def tunnel_ports(self, bridge: str) -> dict[str, str]:
        """Tunnel port name -> remote IP, for the tunnel ports of ``bridge``."""

    @abc.abstractmethod
    def delete_port(self, bridge: str, port: str) -> None:
        """Delete the port; one that is not there is fine."""

    @abc.abstractmethod
    def add_internal_port(self, bridge: str, port: str, iface_id: str, mac: str) -> None:
        """An internal port owned by Neutron port ``iface_id`` (as a VIF is plugged)."""

    @abc.abstractmethod
    def set_port_tags(self, tags: list[PortTag]) -> None:
        """Tag ports, all at once; an empty ``other_config`` value removes that key."""

    def set_port_tag(self, port: str, tag: int, other_config: dict[str, str]) -> None:
        self.set_port_tags([(port, tag, other_config)])

    @abc.abstractmethod
    def vif_ports(self, bridge: str) -> list[VifPort]:
        """Ports of ``bridge`` whose interface names a Neutron port (iface-id)
        and that the switch has attached (an OpenFlow port number), by name."""

    @abc.abstractmethod
    def watch_vifs(self, watcher: Callable[[], None]) -> Callable[[], None]:
        """Call ``watcher`` (maybe from another thread) whenever a VIF may have
        come, gone or changed; returns what stops it."""

    @abc.abstractmethod
    def set_port_shaping(self, port: str, kbps: int | None, burst_kb: int = 0) -> None:
        """Limit what the switch sends to ``port``, or with ``kbps`` None stop."""

    @abc.abstractmethod
    def port_shapings(self) -> dict[str, tuple[int, int]]:
        """Port name -> (kbps, burst kb) of the shaping ``set_port_shaping`` made."""


class SwitchFlows(abc.ABC):
    """Flows and meters of the bridges (the OpenFlow side)."""

    @abc.abstractmethod
    def add_flows(self, bridge: str, specs: Iterable[str]) -> None:
        """Add (or replace, by match) flows given as ``cookie=..,table=..,..,actions=..``."""

    @abc.abstractmethod
    def delete_flows_strict(self, bridge: str, keys: Iterable[str]) -> None:
        """Delete the flows of exactly these keys (``flows.Flow.key``)."""

    @abc.abstractmethod
    def delete_flows_by_cookie(self, bridge: str, cookie: int) -> None: ...

    @abc.abstractmethod
    def cookies(self, bridge: str) -> set[int]:
        """The cookies of the bridge's flows."""

    @abc.abstractmethod
    def flow_counts(self, bridge: str) -> dict[int, int]:
        """How many flows the bridge holds under each cookie: what an audit
        compares with the flows the agent programmed."""

    @abc.abstractmethod
    def meters(self, bridge: str) -> dict[int, tuple[int, int]]:
        """Meter id -> (kbps, burst kb) of the bridge's meters."""

    @abc.abstractmethod
    def set_meter(self, bridge: str, spec: str, exists: bool) -> None:
        """Add the meter ``spec`` (``qos.meter_spec``), or change it if it ``exists``."""

    @abc.abstractmethod
    def delete_meter(self, bridge: str, meter_id: int) -> None: ...


class Switch(SwitchPorts, SwitchFlows, abc.ABC):
    """A whole switch, as the agent uses one."""

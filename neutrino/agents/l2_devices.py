"""What the two L2 agents (OVS, Linux bridge) share about their devices:
which ones a pass asks the server about, the work the casts mark for the
next pass, and the report of devices up and down.

The rules, the same for both: a full pass (the first, or one after a
failure or a revival) asks about every device it finds; any other pass
asks about the new devices, the ones the switch re-plugged and the ones a
cast marked; a device the server failed to answer about, or failed to set
up, is asked about again in the next pass; peers are polled on every
full pass, every pass that has devices to ask about, and every
``SYNC_EVERY`` passes otherwise; with a firewall, the security groups of
the devices asked about and of those a cast marked are read again.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Collection, Iterable, Mapping, Protocol

SYNC_EVERY = 5  # passes between tunnel_sync calls when nothing changed
DETAILS_CHUNK = 100  # devices per get_devices_details_list call: no call outlives its timeout

PortGroups = tuple[set[str], set[str]]  # a port's own groups, the groups its rules name


class L2Server(Protocol):
    """The server's L2 calls an agent's loop makes (``rpc.PluginApi``)."""

    def get_devices_details_list_and_failed_devices(
            self, devices: list[str]) -> dict[str, Any]: ...

    def update_device_list(self, devices_up: list[str], devices_down: list[str],
                           refresh_tunnels: bool = False) -> dict[str, Any]: ...

    def tunnel_sync(self, tunnel_ip: str, tunnel_type: str) -> dict[str, Any]: ...

    def security_group_info_for_devices(self, devices: list[str]) -> dict[str, Any]: ...

    def get_ports_by_vnic_type_and_host(self, vnic_type: str) -> list[dict[str, Any]]: ...


class GroupsChanged(Protocol):
    def groups_changed(self, groups: list[str] | None, members: bool) -> None: ...


class SecurityGroupCasts:
    """The security-group fanouts to L2 agents; each only marks the ports
    whose groups (or whose rules' remote groups, ``members``) changed."""

    agent: GroupsChanged

    def security_groups_rule_updated(self, context: Any, **kwargs: Any) -> None:
        self.agent.groups_changed(kwargs.get("security_groups") or [], members=False)

    def security_groups_member_updated(self, context: Any, **kwargs: Any) -> None:
        self.agent.groups_changed(kwargs.get("security_groups") or [], members=True)

    def security_groups_provider_updated(self, context: Any, **kwargs: Any) -> None:
        self.agent.groups_changed(None, members=True)


class Marks:
    """Devices to re-read next pass (``dirty``) and devices whose security
    groups to re-read (``sg_dirty``): set by the casts' threads and by a
    pass's failures, taken as a whole at the start of the next pass."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._dirty: set[str] = set()
        self._sg_dirty: set[str] = set()

    def mark(self, devices: Iterable[str], security: bool = False) -> None:
        with self.lock:
            (self._sg_dirty if security else self._dirty).update(devices)

    def take(self) -> tuple[set[str], set[str]]:
        """The dirty and the security-dirty devices, both emptied."""
        with self.lock:
            dirty, self._dirty = self._dirty, set()
            sg_dirty, self._sg_dirty = self._sg_dirty, set()
        return dirty, sg_dirty


def to_ask(full: bool, found: Collection[str], known: Mapping[str, Any],
           dirty: set[str], moved: Callable[[str], bool] = lambda _: False) -> set[str]:
    """The devices a pass asks the server about: all it ``found`` on a full
    pass, else those not ``known`` yet, those ``moved`` (re-plugged) and the
    ``dirty`` ones still there."""
    if full:
        return set(found)
    return ({d for d in found if d not in known or moved(d)}
            | (dirty & set(found)))


def security_to_read(asked: Collection[str], sg_dirty: Collection[str],
                     wired: Collection[str]) -> set[str]:
    """The devices whose security groups a pass asks the server about: those
    it just ``asked`` about and those a cast marked, if still ``wired``."""
    return (set(asked) | set(sg_dirty)) & set(wired)


def polls_peers(full: bool, asking: Collection[str], passes: int) -> bool:
    """Whether this pass asks the server for the tunnel peers."""
    return bool(full or asking or passes % SYNC_EVERY == 0)


def affected_by_groups(port_groups: Mapping[str, PortGroups], groups: list[str] | None,
                       members: bool) -> set[str]:
    """The ports a group change affects (all of them if ``groups`` is None): a
    rule change affects the group's ports, a member change the ports whose
    rules name the group as remote."""
    wanted = set(groups or ())
    return {port for port, (own, remote) in port_groups.items()
            if groups is None or (remote if members else own) & wanted}


def read_details(server: L2Server, devices: Collection[str],
                 chunk: int = DETAILS_CHUNK) -> tuple[list[dict[str, Any]], set[str]]:
    """The server's details of ``devices`` (asked in sorted chunks) and the
    devices it failed to answer about."""
    ordered = sorted(devices)
    answers: list[dict[str, Any]] = []
    failed: set[str] = set()
    for start in range(0, len(ordered), chunk):
        answer = server.get_devices_details_list_and_failed_devices(
            ordered[start:start + chunk])
        answers += answer.get("devices", [])
        failed |= set(answer.get("failed_devices", []))
    return answers, failed


def report(server: L2Server, up: list[str], down: list[str],
           refresh_tunnels: bool = False) -> set[str]:
    """Report ``up`` and ``down`` (if any); the devices the server failed to set up."""
    if not (up or down):
        return set()
    extra = {"refresh_tunnels": True} if refresh_tunnels else {}
    result = server.update_device_list(up, down, **extra)
    return set(result.get("failed_devices_up", []))

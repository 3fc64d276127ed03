"""What a BGP DR agent does to its speakers: a pure function of what it
runs and what the server says they should be.

A speaker is its AS, its peers and its routes; the plan starts missing
speakers, stops those the host no longer hosts (and restarts one whose AS
changed), opens and closes peering sessions (a peer whose AS or password
changed is closed and opened again), and advertises and withdraws routes
(a route whose next hop changed is advertised again, which replaces it).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import netaddr


@dataclass(frozen=True)
class Peer:
    ip: str
    remote_as: int
    password: str | None = None  # auth_type md5


@dataclass(frozen=True)
class Speaker:
    id: str
    local_as: int
    ip_version: int = 4
    peers: frozenset[Peer] = field(default_factory=frozenset)
    # destination -> next hop
    routes: tuple[tuple[str, str], ...] = ()

    @property
    def route_map(self) -> dict[str, str]:
        return dict(self.routes)


def speaker_of(info: dict[str, Any]) -> Speaker:
    """A speaker as the server describes it (``get_bgp_speaker_info``):
    routes of another IP version or without a next hop are left out."""
    version = int(info.get("ip_version") or 4)
    peers = frozenset(
        Peer(p["peer_ip"], int(p["remote_as"]),
             p.get("password") if p.get("auth_type") == "md5" else None)
        for p in info.get("peers") or [])
    routes = {}
    for route in info.get("advertised_routes") or []:
        dest, hop = route.get("destination"), route.get("next_hop")
        if dest and hop and netaddr.IPNetwork(dest).version == version:
            routes[str(netaddr.IPNetwork(dest))] = hop
    return Speaker(info["id"], int(info["local_as"]), version, peers,
                   tuple(sorted(routes.items())))


# Actions, in the order a plan applies them.
@dataclass(frozen=True)
class StartSpeaker:
    speaker: Speaker  # without peers or routes: those follow as actions


@dataclass(frozen=True)
class StopSpeaker:
    speaker_id: str


@dataclass(frozen=True)
class AddPeer:
    speaker_id: str
    peer: Peer


@dataclass(frozen=True)
class RemovePeer:
    speaker_id: str
    peer: Peer


@dataclass(frozen=True)
class Advertise:
    speaker_id: str
    destination: str
    next_hop: str


@dataclass(frozen=True)
class Withdraw:
    speaker_id: str
    destination: str


Action = StartSpeaker | StopSpeaker | AddPeer | RemovePeer | Advertise | Withdraw


def plan(running: dict[str, Speaker], desired: dict[str, Speaker]) -> list[Action]:
    actions: list[Action] = []
    for sid in sorted(running):
        want = desired.get(sid)
        if want is None or (want.local_as, want.ip_version) != (
                running[sid].local_as, running[sid].ip_version):
            actions.append(StopSpeaker(sid))
    for sid in sorted(desired):
        want = desired[sid]
        have = running.get(sid)
        if have is None or (have.local_as, have.ip_version) != (want.local_as, want.ip_version):
            have = Speaker(sid, want.local_as, want.ip_version)
            actions.append(StartSpeaker(have))
        for peer in sorted(have.peers - want.peers, key=lambda p: p.ip):
            actions.append(RemovePeer(sid, peer))
        for peer in sorted(want.peers - have.peers, key=lambda p: p.ip):
            actions.append(AddPeer(sid, peer))
        had, wanted = have.route_map, want.route_map
        for dest in sorted(set(had) - set(wanted)):
            actions.append(Withdraw(sid, dest))
        for dest, hop in sorted(wanted.items()):
            if had.get(dest) != hop:
                actions.append(Advertise(sid, dest, hop))
    return actions


def after(running: dict[str, Speaker], action: Action) -> dict[str, Speaker]:
    """What runs once ``action`` is done."""
    out = dict(running)
    if isinstance(action, StartSpeaker):
        out[action.speaker.id] = action.speaker
    elif isinstance(action, StopSpeaker):
        out.pop(action.speaker_id, None)
    else:
        speaker = out[action.speaker_id]
        if isinstance(action, AddPeer):
            speaker = replace(speaker, peers=speaker.peers | {action.peer})
        elif isinstance(action, RemovePeer):
            speaker = replace(speaker, peers=speaker.peers - {action.peer})
        elif isinstance(action, Advertise):
            routes = {**speaker.route_map, action.destination: action.next_hop}
            speaker = replace(speaker, routes=tuple(sorted(routes.items())))
        else:
            routes = {d: h for d, h in speaker.route_map.items() if d != action.destination}
            speaker = replace(speaker, routes=tuple(sorted(routes.items())))
        out[action.speaker_id] = speaker
    return out

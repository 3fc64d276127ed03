"""The BGP speakers an agent drives, behind one interface: GoBGP's
(``gobgp``) on hosts, the in-memory one (``MemorySpeakers``) where a test
needs no daemon. Each call is one step of the agent's plan."""
from __future__ import annotations

import abc
from dataclasses import dataclass, field

from neutrino.agents.bgp.plan import Peer


class Speakers(abc.ABC):
    @abc.abstractmethod
    def start(self, speaker_id: str, local_as: int, ip_version: int) -> None:
        """Run a speaker of ``local_as`` with no peers and no routes."""

    @abc.abstractmethod
    def stop(self, speaker_id: str) -> None:
        """End the speaker: its sessions close, its routes go with them."""

    @abc.abstractmethod
    def add_peer(self, speaker_id: str, peer: Peer) -> None:
        """Peer with ``peer`` (TCP MD5 when it has a password)."""

    @abc.abstractmethod
    def remove_peer(self, speaker_id: str, peer: Peer) -> None:
        """Close the session with ``peer``."""

    @abc.abstractmethod
    def advertise(self, speaker_id: str, destination: str, next_hop: str) -> None:
        """Advertise (or replace) the route to ``destination``."""

    @abc.abstractmethod
    def withdraw(self, speaker_id: str, destination: str) -> None:
        """Withdraw the route to ``destination``."""

    @abc.abstractmethod
    def clear(self) -> None:
        """End every speaker, this run's and any a previous run left."""


@dataclass
class _Running:
    local_as: int
    ip_version: int
    peers: dict[str, Peer] = field(default_factory=dict)
    routes: dict[str, str] = field(default_factory=dict)


class MemorySpeakers(Speakers):
    """Speakers as data: what a test reads back (``running``)."""

    def __init__(self) -> None:
        self.running: dict[str, _Running] = {}

    def start(self, speaker_id: str, local_as: int, ip_version: int) -> None:
        assert speaker_id not in self.running, speaker_id
        self.running[speaker_id] = _Running(local_as, ip_version)

    def stop(self, speaker_id: str) -> None:
        self.running.pop(speaker_id, None)

    def add_peer(self, speaker_id: str, peer: Peer) -> None:
        self.running[speaker_id].peers[peer.ip] = peer

    def remove_peer(self, speaker_id: str, peer: Peer) -> None:
        self.running[speaker_id].peers.pop(peer.ip, None)

    def advertise(self, speaker_id: str, destination: str, next_hop: str) -> None:
        self.running[speaker_id].routes[destination] = next_hop

    def withdraw(self, speaker_id: str, destination: str) -> None:
        self.running[speaker_id].routes.pop(destination, None)

    def clear(self) -> None:
        self.running.clear()

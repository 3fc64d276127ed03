"""What the Linux bridge agent asks of its host, as an interface its
adapters implement: links (bridges, taps, VXLAN devices), the VXLAN
devices' forwarding entries and the nftables ruleset.

``linux.Host`` is the real adapter (``ip``, ``bridge``, ``nft`` in one
network namespace); ``memory_host.MemoryHost`` implements the same
interface in memory, shipped beside it so the agent's tests cannot drift
from what the real host does.
"""
from __future__ import annotations

import abc
from typing import Any

FLOOD_MAC = "00:00:00:00:00:00"


class BridgeHost(abc.ABC):
    # -- links -------------------------------------------------------------------------

    @abc.abstractmethod
    def links(self) -> dict[str, dict[str, Any]]:
        """Every link by name, with ``master`` (its bridge) when enslaved."""

    @abc.abstractmethod
    def ensure_bridge(self, name: str) -> None:
        """The bridge exists and is up."""

    @abc.abstractmethod
    def ensure_vxlan(self, name: str, vni: int, local_ip: str, port: int,
                     group: str | None, learning: bool, ttl: int | None,
                     tos: int | None) -> None:
        """The VXLAN device exists (one already there is left as it is)."""

    @abc.abstractmethod
    def enslave(self, device: str, bridge: str, up: bool = True,
                mtu: int | None = None) -> None:
        """Put ``device`` in ``bridge``, up or down, with ``mtu`` if given."""

    @abc.abstractmethod
    def release(self, device: str) -> None:
        """Take ``device`` out of its bridge; one that is gone is fine."""

    @abc.abstractmethod
    def delete(self, device: str) -> None:
        """Delete the link; one that is gone is fine."""

    # -- VXLAN forwarding entries ----------------------------------------------------

    @abc.abstractmethod
    def fdb(self, device: str) -> set[tuple[str, str]]:
        """(mac, remote endpoint) entries of a VXLAN device."""

    @abc.abstractmethod
    def fdb_add(self, device: str, mac: str, dst: str) -> None:
        """Add the entry (``FLOOD_MAC`` entries add up, others replace the MAC's)."""

    @abc.abstractmethod
    def fdb_del(self, device: str, mac: str, dst: str) -> None: ...

    @abc.abstractmethod
    def neigh_replace(self, device: str, ip: str, mac: str) -> None:
        """A permanent neighbour entry: ``ip`` is at ``mac`` behind ``device``."""

    # -- nftables --------------------------------------------------------------------

    @abc.abstractmethod
    def nft_load(self, ruleset: str) -> None:
        """Load ``ruleset`` (``nftables.ruleset``) in one transaction."""

"""The one interface every type driver implements.

A type driver owns one network type: it checks provider segments of its
type, hands out segments for project networks from its pool, takes exactly
the segment an admin asked for, gives segments back, and says what MTU its
segments carry. It works inside the caller's transaction (``conn``) and
never commits or retries: the whole API operation is retried when a
conditional update finds its row already taken.
"""
from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection

NETWORK_TYPE = "network_type"
PHYSICAL_NETWORK = "physical_network"
SEGMENTATION_ID = "segmentation_id"

# The API names of the segment keys (``provider`` extension).
PROVIDER_ATTRS = {NETWORK_TYPE: "provider:network_type",
                  PHYSICAL_NETWORK: "provider:physical_network",
                  SEGMENTATION_ID: "provider:segmentation_id"}


@dataclass(frozen=True)
class Segment:
    """One L2 segment of a network; ``None`` means "not specified"."""

    network_type: str
    physical_network: str | None = None
    segmentation_id: int | None = None

    def items(self) -> list[tuple[str, Any]]:
        """The keys in upstream's order, which its error messages follow."""
        return [(NETWORK_TYPE, self.network_type),
                (PHYSICAL_NETWORK, self.physical_network),
                (SEGMENTATION_ID, self.segmentation_id)]

    def as_provider(self) -> dict[str, Any]:
        return {PROVIDER_ATTRS[k]: v for k, v in self.items()}


class TypeDriver(abc.ABC):
    """One network type (``local``, ``flat``, ``vlan``, ``vxlan``, ...)."""

    network_type: str = ""

    def __init__(self, conf: Any) -> None:
        """Parse this type's options; a bad value raises ``Ml2ConfigError``."""
        self.conf = conf

    def get_type(self) -> str:
        return self.network_type

    def sync_allocations(self, conn: Connection) -> None:
        """Make the pool's rows match the configured ranges (start-up only)."""

    def use_segment_ranges(self, ranges: Any) -> None:
        """From now on take the pool's ranges from the database
        (``segment_ranges.SegmentRanges``), the configured ones being its
        defaults; a type without a pool of ranges ignores it."""

    def sync_to_segment_ranges(self, conn: Connection) -> None:
        """Make the pool match the database's ranges, one of which changed."""

    @abc.abstractmethod
    def is_partial_segment(self, segment: Segment) -> bool:
        """Whether ``segment`` leaves something for the pool to choose."""

    @abc.abstractmethod
    def validate_provider_segment(self, segment: Segment) -> None:
        """Raise ``InvalidInput`` with upstream's message for a bad segment."""

    @abc.abstractmethod
    def reserve_provider_segment(self, conn: Connection, segment: Segment,
                                 project_id: str | None = None) -> Segment:
        """Take the (validated) segment an admin asked for, or one matching it
        (for a network of ``project_id``, whose ranges come first)."""

    def ahead_tenant_segment(self, conn: Connection) -> None:
        """Send ``allocate_tenant_segment``'s first try with the transaction's
        next round trip (``db/pipeline.py``); the allocation follows in the
        same transaction. Nothing to send for a type without a pool."""

    @abc.abstractmethod
    def allocate_tenant_segment(self, conn: Connection,
                                project_id: str | None = None) -> Segment | None:
        """A free segment for a network of ``project_id``, or None when the
        pool has none for it."""

    @abc.abstractmethod
    def release_segment(self, conn: Connection, segment: Segment) -> None:
        """Give a deleted network's segment back (or forget it if off-range)."""

    @abc.abstractmethod
    def get_mtu(self, physical_network: str | None) -> int:
        """Largest MTU of a network on this type; 0 when the type sets none."""

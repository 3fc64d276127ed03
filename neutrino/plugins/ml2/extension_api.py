"""The one interface every ML2 extension driver implements.

An extension driver adds attributes to networks, subnets or ports and keeps
them in its own tables. It works inside the core plugin's transaction
(``conn``), so the attributes are created, changed and removed atomically
with the resource they belong to; it never commits or retries.
"""
from __future__ import annotations

import abc
from typing import Any, Callable, Mapping

from sqlalchemy import Connection

from neutrino.context import Context
from neutrino.plugins.joined import Aggregated, Joined
from neutrino.resources.attributes import Attribute

# In a port's create ``data``: its network's attributes that drivers keep
# in one-to-one tables (``joined("networks")``), as their fills set them,
# read with the network's row. A driver that inherits from the network
# (port security, a QoS policy) finds them here instead of reading again.
PORT_NETWORK = "_network"


def inherited(data: dict[str, Any], attribute: str, read: Callable[[], Any]) -> Any:
    """A new port's network's ``attribute``: from ``data[PORT_NETWORK]``
    when it came with the network's row, else ``read()``."""
    network = data.get(PORT_NETWORK) or {}
    return network[attribute] if attribute in network else read()


class ExtensionDriver(abc.ABC):
    """Base of ``neutrino.ml2.extension_drivers`` entry points."""

    extension_alias: str = ""
    # Further aliases the driver fully serves (a later alias that widens it).
    extension_aliases: tuple[str, ...] = ()

    def __init__(self, conf: Any) -> None:
        self.conf = conf

    @abc.abstractmethod
    def attributes(self) -> dict[str, list[Attribute]]:
        """Attributes the driver adds, by collection (``networks``, ``ports``)."""

    def process_create(self, conn: Connection, ctx: Context, plural: str,
                       data: dict[str, Any], resource_id: str) -> None:
        """Store the driver's attributes of a resource just created."""

    def process_update(self, conn: Connection, ctx: Context, plural: str,
                       data: dict[str, Any], resource_id: str,
                       original: dict[str, Any]) -> None:
        """Apply a change to the driver's attributes (keys of ``data`` present).
        ``original`` is the resource as it was read in this transaction before
        the change, every driver's attributes included: what a driver needs
        to know about the old state is there, not read again."""

    def process_update_many(self, conn: Connection, ctx: Context, plural: str,
                            changes: Mapping[str, dict[str, Any]],
                            originals: Mapping[str, dict[str, Any]]) -> None:
        """``process_update`` of each resource of ``changes`` (id -> its
        change) in one transaction (the core's ``bind_ports``); a driver
        whose statements can serve them all at once does so here."""
        for rid, data in changes.items():
            self.process_update(conn, ctx, plural, data, rid, originals[rid])

    def filter_clauses(self, plural: str, table: Any,
                       filters: dict[str, list[Any]]) -> list[Any]:
        """SQL conditions on ``table.c.id`` for filters on the driver's attributes."""
        return []

    def joined(self, plural: str) -> list[Joined | Aggregated]:
        """The driver's tables to read with each resource's row (see
        ``plugins/joined.py``); their ``fill`` sets the attribute on items
        read that way, and ``extend`` needs to read only the others
        (``joined.missing``)."""
        return []

    def lookups(self, plural: str) -> tuple[Any, ...]:
        """The single-value reads by ``project`` that ``process_create`` may
        make for this collection, each a statement built once; the core
        reads them with its others in one round trip (``db/lookups.py``)."""
        return ()

    @abc.abstractmethod
    def extend(self, conn: Connection, plural: str, items: list[dict[str, Any]]) -> None:
        """Add the driver's attributes to resources being returned (in bulk)."""

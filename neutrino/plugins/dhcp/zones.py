"""``network_availability_zone``: a network's zone hints and the zones of
the DHCP agents serving it, in the core's transactions.

Given to the core plugin by the DHCP plugin (upstream's ML2 offers the
extension with its DHCP agent scheduler); the attributes are declared by
the DHCP plugin's API extension, so the driver declares none itself.
"""
from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import availability_zones as az
from neutrino.plugins import joined, store
from neutrino.plugins.joined import Aggregated, Computed
from neutrino.plugins.ml2.extension_api import ExtensionDriver
from neutrino.resources.attributes import Attribute

N, NB, A = t.networks.c, t.networkdhcpagentbindings.c, t.agents.c


class NetworkZonesDriver(ExtensionDriver):
    def attributes(self) -> dict[str, list[Attribute]]:
        return {}

    def process_create(self, conn: Connection, ctx: Context, plural: str,
                       data: dict[str, Any], resource_id: str) -> None:
        """Validated in the network's transaction: a hint naming no DHCP
        agent's zone undoes the whole create (404)."""
        if plural != "networks":
            return
        # The row's INSERT wrote them (``networks.Networks.create``).
        az.validate(conn, "network", az.requested(data, self.conf.default_availability_zones))

    def joined(self, plural: str) -> list[Any]:
        return [HINTS_READ, ZONES_READ] if plural == "networks" else []

    def extend(self, conn: Connection, plural: str, items: list[dict[str, Any]]) -> None:
        """Both attributes for the items that came without them (a page, a
        locked read), in one read: the hints and the zones of the agents
        bound to each network."""
        if plural != "networks" or not items:
            return
        items = joined.missing(items, az.HINTS)
        hints: dict[str, str | None] = {}
        zones: dict[str, set[str]] = {}
        for part in store.chunks([i["id"] for i in items]):
            for row in conn.execute(
                    sa.select(N.id, N.availability_zone_hints, A.availability_zone)
                    .outerjoin(t.networkdhcpagentbindings, NB.network_id == N.id)
                    .outerjoin(t.agents, A.id == NB.dhcp_agent_id)
                    .where(N.id.in_(part))):
                hints[row.id] = row.availability_zone_hints
                if row.availability_zone:
                    zones.setdefault(row.id, set()).add(row.availability_zone)
        for item in items:
            item[az.HINTS] = az.from_text(hints.get(item["id"]))
            item[az.ZONES] = sorted(zones.get(item["id"], ()))


def _fill_zones(item: dict[str, Any], rows: list[Any]) -> None:
    item[az.ZONES] = sorted({zone for _, zone in rows if zone})


# Read with a network's own row: the hints are its column, the zones those
# of the DHCP agents its bindings name.
HINTS_READ = Computed("network__az_hints", lambda networks: networks.c.availability_zone_hints,
                      fill=lambda item, value: item.__setitem__(az.HINTS, az.from_text(value)),
                      from_row="availability_zone_hints")
ZONES_READ = Aggregated(t.networkdhcpagentbindings, "network_id", (A.availability_zone,),
                        joins=((t.agents, A.id == NB.dhcp_agent_id),), fill=_fill_zones)

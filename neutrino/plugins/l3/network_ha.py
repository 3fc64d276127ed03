"""``network_ha``: a network created with ``ha`` true becomes the creating
project's HA network, in the network's own transaction.

Upstream's L3 plugin records it with the network so that a project has one
HA network at most: a second one is refused whole (409) rather than left
behind. The flag is not stored on the network and never shown.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy import Connection
from sqlalchemy import exc as sa_exc

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import store
from neutrino.plugins.ml2.extension_api import ExtensionDriver
from neutrino.resources.attributes import Attribute

HA = "ha"


class NetworkHaDriver(ExtensionDriver):
    """Given to the core plugin by the L3 plugin; its attribute is declared
    by the L3 plugin's API extension, so it declares none itself."""

    def attributes(self) -> dict[str, list[Attribute]]:
        return {}

    def process_create(self, conn: Connection, ctx: Context, plural: str,
                       data: dict[str, Any], resource_id: str) -> None:
        if plural != "networks" or not data.get(HA):
            return
        project_id = ctx.project_id or ""
        try:
            with conn.begin_nested():  # PostgreSQL: the transaction stays usable
                store.insert(conn, t.ha_router_networks,
                             {"project_id": project_id, "network_id": resource_id})
        except sa_exc.IntegrityError:
            raise errors.DuplicatedHANetwork(project_id=project_id) from None

    def extend(self, conn: Connection, plural: str, items: list[dict[str, Any]]) -> None:
        pass

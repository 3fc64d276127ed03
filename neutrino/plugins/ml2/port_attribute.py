"""Extension drivers for a port attribute kept in a one-to-one table.

The NUMA affinity policy and the device profile are each one optional
value per port: a row exists only while the value is set, so the common
port (without either) costs no statement on create, and the row rides
along with the port's own read (``joined``) and its row memo.
"""
from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection, Table

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import joined, store
from neutrino.plugins.joined import Joined
from neutrino.plugins.ml2.extension_api import ExtensionDriver
from neutrino.plugins.ml2.mech_api import VIF_TYPE_UNBOUND
from neutrino.plugins.ports import UNPLUGGED
from neutrino.resources.attributes import Attribute, AttributeMap
from neutrino.resources.port_binding import HOST, VIF_TYPE
from neutrino.resources.port_device_profile import DEVICE_PROFILE, PORT_DEVICE_PROFILE
from neutrino.resources.port_numa_affinity import POLICY, PORT_NUMA_AFFINITY


class PortAttributeDriver(ExtensionDriver):
    """One nullable port attribute stored as ``table.column`` by port id."""

    table: Table
    column: str
    declared: AttributeMap

    def __init__(self, conf: Any) -> None:
        super().__init__(conf)
        column = self.column

        def fill(item: dict[str, Any], values: tuple[Any, ...] | None) -> None:
            item[column] = None if values is None else values[0]

        self._fill = fill
        # The value changes only with the port's revision (create, update).
        self._joined = Joined(self.table, "port_id", (column,), fill, follows_revision=True)

    def attributes(self) -> dict[str, list[Attribute]]:
        return self.declared

    def process_create(self, conn: Connection, ctx: Context, plural: str,
                       data: dict[str, Any], resource_id: str) -> None:
        if plural == "ports" and data.get(self.column) is not None:
            store.insert(conn, self.table, {"port_id": resource_id,
                                            self.column: data[self.column]})

    def process_update(self, conn: Connection, ctx: Context, plural: str,
                       data: dict[str, Any], resource_id: str,
                       original: dict[str, Any]) -> None:
        if plural != "ports" or self.column not in data:
            return
        value = data[self.column]
        if value == original.get(self.column):
            return
        conn.execute(sa.delete(self.table).where(self.table.c.port_id == resource_id))
        if value is not None:
            store.insert(conn, self.table, {"port_id": resource_id, self.column: value})

    def joined(self, plural: str) -> list[Joined]:
        return [self._joined] if plural == "ports" else []

    def extend(self, conn: Connection, plural: str, items: list[dict[str, Any]]) -> None:
        if plural != "ports":
            return
        items = joined.missing(items, self.column)
        found = store.children(conn, self.table, "port_id", store.item_ids(items), (),
                               ("port_id", self.column))
        for item in items:
            rows = found.get(item["id"])
            self._fill(item, (rows[0][1],) if rows else None)


class PortNumaAffinityPolicyDriver(PortAttributeDriver):
    extension_alias = "port-numa-affinity-policy"
    extension_aliases = ("port-numa-affinity-policy-socket",)
    table = t.portnumaaffinitypolicies
    column = POLICY
    declared = PORT_NUMA_AFFINITY

    def process_update(self, conn: Connection, ctx: Context, plural: str,
                       data: dict[str, Any], resource_id: str,
                       original: dict[str, Any]) -> None:
        # The compute service placed a bound port's device by the policy.
        if (plural == "ports" and self.column in data
                and original.get(VIF_TYPE, VIF_TYPE_UNBOUND) not in UNPLUGGED):
            raise errors.PortBoundNUMAAffinityPolicy(
                port_id=resource_id, host_id=original.get(HOST),
                numa_affinity_policy=data[self.column])
        super().process_update(conn, ctx, plural, data, resource_id, original)


class PortDeviceProfileDriver(PortAttributeDriver):
    extension_alias = "port-device-profile"
    table = t.portdeviceprofiles
    column = DEVICE_PROFILE
    declared = PORT_DEVICE_PROFILE

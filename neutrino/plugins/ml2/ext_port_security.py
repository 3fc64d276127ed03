"""``port_security``: whether a network's and a port's traffic is filtered.

A port inherits its network's setting unless it says otherwise. Port
security is what makes anti-spoofing and security groups apply, so a port
cannot turn it off while it relies on allowed address pairs, and cannot get
address pairs while it is off.

A resource without a row is enabled, as upstream shows the resources made
before the driver was; a create stores a row only to turn it off, so the
common create (enabled) sends no statement for it.
"""
from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection
from sqlalchemy import exc as sa_exc

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.db.engine import RetryRequest
from neutrino.plugins import joined, store
from neutrino.plugins.joined import Joined
from neutrino.plugins.ml2.extension_api import ExtensionDriver, inherited
from neutrino.resources.attributes import Attribute
from neutrino.resources.port_security import ENABLED, PORT_SECURITY

ATTR = ENABLED


def _fill(item: dict[str, Any], values: tuple[Any, ...] | None) -> None:
    # Resources from before the driver have no row: enabled.
    item[ATTR] = True if values is None else bool(values[0])


# A port's flag changes only with the port's revision (its create and
# updates write it): the row memo keeps it with the port's own rows.
PORTS_JOINED = Joined(t.port_port_security, "port_id", (ATTR,), _fill, follows_revision=True)
NETWORKS_JOINED = Joined(t.network_port_security, "network_id", (ATTR,), _fill)

# Built once: every port create without the attribute asks its network.
_NETWORK_DEFAULT = sa.select(t.network_port_security.c.port_security_enabled).where(
    t.network_port_security.c.network_id == sa.bindparam("network"))


class AddressPairAndPortSecurityRequired(errors.Conflict):
    message = ("Port Security must be enabled in order to have allowed address "
               "pairs on a port.")


class PortSecurityDriver(ExtensionDriver):
    extension_alias = "port-security"

    def attributes(self) -> dict[str, list[Attribute]]:
        return PORT_SECURITY

    def process_create(self, conn: Connection, ctx: Context, plural: str,
                       data: dict[str, Any], resource_id: str) -> None:
        if plural == "networks":
            if data.get(ATTR) is False:
                store.insert(conn, t.network_port_security, {
                    "network_id": resource_id, "port_security_enabled": False})
        elif plural == "ports":
            enabled = data.get(ATTR)
            if enabled is None:
                enabled = inherited(data, ATTR,
                                    lambda: self._network_default(conn, data["network_id"]))
            if not enabled and data.get("allowed_address_pairs"):
                raise AddressPairAndPortSecurityRequired()
            if not enabled:
                store.insert(conn, t.port_port_security,
                             {"port_id": resource_id, "port_security_enabled": False})
            data[ATTR] = enabled  # resolved: the drivers after this one need not read it back

    def process_update(self, conn: Connection, ctx: Context, plural: str,
                       data: dict[str, Any], resource_id: str,
                       original: dict[str, Any]) -> None:
        table, key = self._table(plural)
        if table is None:
            return
        if ATTR in data and data[ATTR] is not None:
            changed = conn.execute(sa.update(table).where(table.c[key] == resource_id)
                                   .values(port_security_enabled=data[ATTR])).rowcount
            if not changed and not data[ATTR]:  # no row yet: it was enabled
                try:  # no savepoint: the failure ends the attempt
                    store.insert(conn, table, {key: resource_id, ATTR: False})
                except sa_exc.IntegrityError:  # a concurrent update made the row
                    raise RetryRequest() from None
        # Only turning port security off or setting address pairs can break
        # the rule that one needs the other.
        if (plural == "ports" and (ATTR in data or "allowed_address_pairs" in data)
                and not self._enabled(conn, table, key, resource_id)):
            pairs = conn.execute(sa.select(t.allowed_address_pairs.c.port_id).where(
                t.allowed_address_pairs.c.port_id == resource_id).limit(1)).first()
            if pairs is not None:
                raise AddressPairAndPortSecurityRequired()

    def filter_clauses(self, plural: str, table: Any,
                       filters: dict[str, list[Any]]) -> list[Any]:
        own, key = self._table(plural)
        if own is None or ATTR not in filters:
            return []
        wanted = filters[ATTR]
        rows = sa.select(own.c[key]).where(own.c.port_security_enabled.in_(wanted))
        clause = table.c.id.in_(rows)
        if True in wanted:  # resources from before the driver have no row: enabled
            clause = sa.or_(clause, table.c.id.not_in(sa.select(own.c[key])))
        return [clause]

    def joined(self, plural: str) -> list[Joined]:
        table, _ = self._table(plural)
        if table is None:
            return []
        return [PORTS_JOINED if plural == "ports" else NETWORKS_JOINED]

    def extend(self, conn: Connection, plural: str, items: list[dict[str, Any]]) -> None:
        table, key = self._table(plural)
        if table is None:
            return
        items = joined.missing(items, ATTR)
        found = store.children(conn, table, key, store.item_ids(items), (), (key, ATTR))
        for item in items:
            rows = found.get(item["id"])
            _fill(item, (rows[0][1],) if rows else None)

    @staticmethod
    def _table(plural: str) -> tuple[Any, str]:
        if plural == "networks":
            return t.network_port_security, "network_id"
        if plural == "ports":
            return t.port_port_security, "port_id"
        return None, ""

    @staticmethod
    def _enabled(conn: Connection, table: Any, key: str, rid: str) -> bool:
        value = conn.execute(sa.select(table.c.port_security_enabled)
                             .where(table.c[key] == rid)).scalar()
        return True if value is None else bool(value)

    @staticmethod
    def _network_default(conn: Connection, network_id: str) -> bool:
        value = conn.execute(_NETWORK_DEFAULT, {"network": network_id}).scalar()
        return True if value is None else bool(value)

"""Loads ``[ml2] extension_drivers`` in order and calls them for each resource."""
from __future__ import annotations

import logging
from typing import Any, Mapping

from sqlalchemy import Connection

from neutrino.context import Context
from neutrino.plugins.joined import Aggregated, Joined
from neutrino.plugins.loader import load_driver_class
from neutrino.plugins.ml2.extension_api import ExtensionDriver

LOG = logging.getLogger(__name__)
NAMESPACE = "neutrino.ml2.extension_drivers"


class ExtensionManager:
    def __init__(self, conf: Any) -> None:
        self.drivers: list[ExtensionDriver] = []
        for name in conf.ml2.extension_drivers:
            cls = load_driver_class(NAMESPACE, name, ExtensionDriver, "[ml2] extension_drivers")
            self.drivers.append(cls(conf))
            LOG.info("loaded extension driver %s", name)

    @property
    def aliases(self) -> list[str]:
        return [a for d in self.drivers
                for a in ((d.extension_alias,) if d.extension_alias else ()) + d.extension_aliases]

    def attributes(self) -> dict[str, list[Any]]:
        out: dict[str, list[Any]] = {}
        for driver in self.drivers:
            for plural, attrs in driver.attributes().items():
                out.setdefault(plural, []).extend(attrs)
        return out

    def process_create(self, conn: Connection, ctx: Context, plural: str,
                       data: dict[str, Any], resource_id: str) -> None:
        for driver in self.drivers:
            driver.process_create(conn, ctx, plural, data, resource_id)

    def process_update(self, conn: Connection, ctx: Context, plural: str,
                       data: dict[str, Any], resource_id: str,
                       original: dict[str, Any]) -> None:
        for driver in self.drivers:
            driver.process_update(conn, ctx, plural, data, resource_id, original)

    def process_update_many(self, conn: Connection, ctx: Context, plural: str,
                            changes: Mapping[str, dict[str, Any]],
                            originals: Mapping[str, dict[str, Any]]) -> None:
        for driver in self.drivers:
            driver.process_update_many(conn, ctx, plural, changes, originals)

    def filter_clauses(self, plural: str, table: Any,
                       filters: dict[str, list[Any]]) -> list[Any]:
        out: list[Any] = []
        for driver in self.drivers:
            out.extend(driver.filter_clauses(plural, table, filters))
        return out

    def joined(self, plural: str) -> tuple[Joined | Aggregated, ...]:
        return tuple(j for driver in self.drivers for j in driver.joined(plural))

    def lookups(self, plural: str) -> tuple[Any, ...]:
        return tuple(dict.fromkeys(s for driver in self.drivers for s in driver.lookups(plural)))

    def extend(self, conn: Connection, plural: str, items: list[dict[str, Any]]) -> None:
        if items:
            for driver in self.drivers:
                driver.extend(conn, plural, items)

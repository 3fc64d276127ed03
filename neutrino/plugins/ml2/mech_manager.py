"""MechanismManager: the configured mechanism drivers, called in order.

Order matters twice: every driver sees each precommit/postcommit in the
order of ``[ml2] mechanism_drivers``, and when binding a port the first
driver able to bind a level wins. Start-up refuses an unknown name with one
line naming the option.

Failures follow upstream's contract: a precommit failure stops at the first
driver and propagates (the plugin's transaction rolls back); a postcommit
failure lets the remaining drivers run, then raises ``MechanismDriverError``
so the plugin can undo a create; a delete postcommit failure is only logged
because the resource is already gone.
"""
from __future__ import annotations

import logging
from typing import Any

from neutrino import errors
from neutrino.db.engine import is_retriable
from neutrino.plugins import loader
from neutrino.plugins.ml2.exceptions import MechanismDriverError, Ml2ConfigError
from neutrino.plugins.ml2.mech_api import (
    MAX_BINDING_LEVELS,
    MechanismDriver,
    PortContext,
    SegmentDict,
)

LOG = logging.getLogger(__name__)
NAMESPACE = "neutrino.ml2.mechanism_drivers"


class MechanismManager:
    def __init__(self, conf: Any) -> None:
        self.conf = conf
        self.drivers: list[MechanismDriver] = []
        names = [n.strip() for n in conf.ml2.mechanism_drivers if n.strip()]
        LOG.info("Configured mechanism driver names: %s", names)
        for name in names:
            if any(d.name == name for d in self.drivers):
                LOG.warning("mechanism driver %s listed twice; the second is ignored", name)
                continue
            driver = self._load(name)
            driver.name = name
            self.drivers.append(driver)
        for driver in self.drivers:
            driver.initialize()
        LOG.info("Registered mechanism drivers: %s", [d.name for d in self.drivers])

    def handles(self, method: str) -> bool:
        """Whether any driver implements ``method`` (the base class's are
        no-ops); asked of the instance, since a driver may answer for its
        hooks dynamically (``__getattribute__``)."""
        base = getattr(MechanismDriver, method)
        return any(getattr(getattr(d, method), "__func__", None) is not base
                   for d in self.drivers)

    def _load(self, name: str) -> MechanismDriver:
        cls = loader.load_driver_class(NAMESPACE, name, MechanismDriver,
                                       "[ml2] mechanism_drivers", Ml2ConfigError)
        return cls(self.conf)

    # -- precommit / postcommit ---------------------------------------------------

    def precommit(self, method: str, context: Any) -> None:
        """``<action>_<resource>_precommit`` on every driver; the first failure
        propagates. A driver's own API error (e.g. InvalidInput) reaches the
        caller as it is, anything else as ``MechanismDriverError``."""
        for driver in self.drivers:
            try:
                getattr(driver, method)(context)
            except errors.NeutronException:
                raise
            except Exception as exc:
                if _is_db_race(exc):
                    raise  # let the whole operation retry
                LOG.exception("Mechanism driver '%s' failed in %s", driver.name, method)
                raise MechanismDriverError(method=method) from exc

    def postcommit(self, method: str, context: Any, raise_on_error: bool = True) -> None:
        """``<action>_<resource>_postcommit`` on every driver, all of them even
        after a failure; then ``MechanismDriverError`` if any failed."""
        failed = False
        for driver in self.drivers:
            try:
                getattr(driver, method)(context)
            except Exception:  # noqa: BLE001 - every driver must get its call
                LOG.exception("Mechanism driver '%s' failed in %s", driver.name, method)
                failed = True
        if failed and raise_on_error:
            raise MechanismDriverError(method=method)

    # -- binding ------------------------------------------------------------------

    def bind_port(self, context: PortContext) -> bool:
        """Bind ``context``'s port level by level; True when a driver completed
        the binding (``context._result`` then holds vif_type and details)."""
        context.binding_levels = []
        segments = list(context.network.network_segments)
        if not segments:
            LOG.warning("port %s: network %s has no segments to bind",
                        context.current["id"], context.current["network_id"])
            return False
        return self._bind_level(context, 0, segments)

    def _bind_level(self, context: PortContext, level: int,
                    segments: list[SegmentDict]) -> bool:
        if level >= MAX_BINDING_LEVELS:
            LOG.error("port %s: binding exceeded %d levels", context.current["id"], level)
            return False
        by_id = {s["id"]: s for s in segments}
        for driver in self.drivers:
            if self._already_bound_by(context, driver, segments):
                continue  # a driver may not loop on the segments it handed down
            context._prepare(segments)
            try:
                driver.bind_port(context)
            except Exception:  # noqa: BLE001 - a broken driver is just "not bound"
                LOG.exception("Mechanism driver %s failed in bind_port", driver.name)
                continue
            segment_id = context._new_segment
            if segment_id is None:
                continue
            if segment_id not in by_id:
                LOG.error("Mechanism driver %s bound to segment %s which is not one of "
                          "the segments to bind", driver.name, segment_id)
                continue
            context.binding_levels.append({"level": level, "driver": driver.name,
                                           "bound_segment": by_id[segment_id]})
            next_segments = context._next_segments
            if next_segments is None:
                return True
            result = context._result
            if self._bind_level(context, level + 1, next_segments):
                return True
            context._result = result
            del context.binding_levels[level:]
        return False

    @staticmethod
    def _already_bound_by(context: PortContext, driver: MechanismDriver,
                          segments: list[SegmentDict]) -> bool:
        ids = {s["id"] for s in segments}
        return any(lv["driver"] == driver.name and lv["bound_segment"]["id"] in ids
                   for lv in context.binding_levels)


def _is_db_race(exc: BaseException) -> bool:
    return is_retriable(exc)

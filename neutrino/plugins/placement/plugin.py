"""``placement``: the agents' devices, as they report them, in Placement.

When an agent is new, restarts (``start_flag``) or was never synced (or
its last sync failed), its resource providers are made or updated in
Placement: one under each compute node it serves (found by name), one per
device with bandwidth under that, with the traits (physical network or
tunnels, vNIC types) and inventories (bandwidth per direction on devices,
packet rate on the agent's provider) the compute service schedules
against. The agent's ``resources_synced`` then says whether every call
succeeded. Reports only mark the agent; the RPC process's periodic task
talks to Placement, so a slow Placement never holds a state report.
"""
from __future__ import annotations

import json
import logging
import threading
from typing import Any

import sqlalchemy as sa

from neutrino.db import tables as t
from neutrino.plugins.base import PeriodicTask, ServicePlugin
from neutrino.plugins.placement.client import PlacementClient, PlacementError
from neutrino.plugins.placement.state import Driver, hypervisors_named, sync_calls

LOG = logging.getLogger(__name__)
A = t.agents.c
BANDWIDTHS = "resource_provider_bandwidths"
# Seconds between two looks at the agents waiting for a sync (upstream
# batches its placement calls by [DEFAULT] send_events_interval, 2).
SYNC_INTERVAL = 2.0


class PlacementReportPlugin(ServicePlugin):
    """Syncs agents' resource providers, traits and inventories to Placement."""

    service_type = "placement_report"

    def __init__(self, conf: Any, db: Any) -> None:
        super().__init__(conf, db)
        self.client = PlacementClient(conf)
        self._lock = threading.Lock()
        self._pending: dict[tuple[str, str], bool] = {}  # (type, host) -> sync even if synced

    def _drivers(self) -> dict[str, Driver]:
        out = {}
        for mech in self.core.mechanisms.drivers:
            namespace = getattr(mech, "resource_provider_uuid5_namespace", None)
            agent_type = getattr(mech, "agent_type", "")
            if namespace is not None and agent_type:
                out[agent_type] = Driver(agent_type, namespace, tuple(mech.supported_vnic_types))
        return out

    def agent_reported(self, state: dict[str, Any], status: str) -> None:
        """A state report was recorded: remember the agent if it may need a
        sync (kept quick, it runs in the report's call)."""
        if BANDWIDTHS not in (state.get("configurations") or {}):
            return
        key = (state["agent_type"], state["host"])
        forced = status == "new" or bool(state.get("start_flag"))
        with self._lock:
            self._pending[key] = self._pending.get(key, False) or forced

    def periodic_tasks(self) -> list[PeriodicTask]:
        return [(SYNC_INTERVAL, self.sync_pending)]

    def sync_pending(self) -> None:
        with self._lock:
            pending, self._pending = self._pending, {}
        if not pending:
            return
        drivers = self._drivers()
        for (agent_type, host), forced in pending.items():
            driver = drivers.get(agent_type)
            if driver is None:
                continue
            with self.db.reader() as conn:
                row = conn.execute(sa.select(A.configurations, A.resources_synced).where(
                    A.agent_type == agent_type, A.host == host)).first()
            if row is None or (row.resources_synced and not forced):
                continue
            synced = self.sync(json.loads(row.configurations or "{}"), driver)
            with self.db.writer() as conn:
                conn.execute(sa.update(t.agents).where(
                    A.agent_type == agent_type, A.host == host).values(resources_synced=synced))
            LOG.log(logging.DEBUG if synced else logging.WARNING,
                    "Synchronization of resources of agent type %s at host %s to placement "
                    "%s.", agent_type, host, "succeeded" if synced else "failed")

    def sync(self, configurations: dict[str, Any], driver: Driver) -> bool:
        """Every call made, even after one failed (later ones may not depend
        on it); true when all succeeded."""
        try:
            uuids = {}
            for name in hypervisors_named(configurations):
                found = self.client.provider_uuid(name)
                if found is None:
                    LOG.warning("placement has no resource provider named %s", name)
                    return False
                uuids[name] = found
        except PlacementError as exc:
            LOG.warning("placement: %s", exc)
            return False
        ok = True
        for call in sync_calls(configurations, driver, uuids,
                               self.conf.ml2.tunnelled_network_rp_name):
            try:
                getattr(self.client, call.method)(*call.args)
            except PlacementError as exc:
                LOG.warning("placement client call %s failed: %s", call, exc)
                ok = False
        return ok

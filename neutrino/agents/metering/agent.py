"""The metering agent process: count label traffic in this host's routers.

Desired state is the server's ``get_sync_data_metering`` for this host (the
routers its L3 agent serves, with the labels and rules that apply to them),
fetched at start, every ``periodic_interval`` and after any cast from the
server (topic ``metering_agent``): the casts carry partial data, so they only
ask for a sync. Every ``measure_interval`` the loop makes the routers'
counting tables match and reads them into the accounts; every
``report_interval`` each account is sent as an ``l3.meter`` notification
(``l3.meter.<granularity>`` with ``granular_traffic_data``) from publisher
``metering.<host>``.
"""
from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable

import oslo_messaging
from oslo_config import cfg

from neutrino.agents.base import Agent
from neutrino.agents.metering import accounting, rules
from neutrino.agents.metering import driver as drivers
from neutrino.agents.metering.rpc import MeteringPluginApi
from neutrino.conf.agents import metering as metering_conf
from neutrino.rpc import topics
from neutrino.rpc.notifications import Notifications

LOG = logging.getLogger(__name__)

class MeteringAgentEndpoint:
    """What the server casts (upstream's MeteringAgentNotifyAPI methods)."""

    def __init__(self, agent: "MeteringAgent") -> None:
        self.target = oslo_messaging.Target(version="1.0")
        self.agent = agent

    def _sync(self, context: Any, routers: Any = None, **kwargs: Any) -> None:
        self.agent.request_sync()

    add_metering_label = remove_metering_label = _sync
    add_metering_label_rule = remove_metering_label_rule = _sync
    update_metering_label_rules = routers_updated = _sync

    def router_deleted(self, context: Any, router_id: str | None = None, **kwargs: Any) -> None:
        if router_id:
            self.agent.forget_router(router_id)

    def agent_updated(self, context: Any, payload: Any = None, **kwargs: Any) -> None:
        LOG.info("agent_updated by the server: %s", payload)


class MeteringAgent(Agent):
    agent_type = "Metering agent"
    binary = "neutron-metering-agent"
    topic = topics.METERING_AGENT

    def __init__(self, conf: cfg.ConfigOpts, host: str | None = None,
                 plugin_rpc: Any = None, driver: Any = None, notifier: Any = None,
                 clock: Callable[[], float] = time.time) -> None:
        super().__init__(conf, host)
        metering_conf.register(conf)
        self.driver = driver if driver is not None else drivers.load(conf.driver)
        self.plugin_rpc = plugin_rpc
        self.notifier = notifier
        self.clock = clock
        self.accounts = accounting.Accounts()
        self.routers: dict[str, rules.MeteredRouter] = {}
        self.last_report = 0
        self._lock = threading.Condition()
        self._sync_wanted = True
        self._last_sync = 0.0
        self._loop_thread: threading.Thread | None = None

    def configurations(self) -> dict[str, Any]:
        return {"metering_driver": self.conf.driver,
                "measure_interval": self.conf.measure_interval,
                "report_interval": self.conf.report_interval}

    # -- what casts do ---------------------------------------------------------------

    def request_sync(self) -> None:
        with self._lock:
            self._sync_wanted = True
            self._lock.notify_all()

    def forget_router(self, router_id: str) -> None:
        """The router is gone: its table goes at the next pass (read first)."""
        with self._lock:
            self.routers.pop(router_id, None)
            self._lock.notify_all()

    # -- one pass --------------------------------------------------------------------

    def sync(self) -> bool:
        """Replace the desired routers with the server's; False if it failed."""
        with self._lock:
            self._sync_wanted = False
        try:
            routers = self.plugin_rpc.get_sync_data_metering()
        except Exception:  # noqa: BLE001 - server or bus away: next time
            LOG.exception("metering agent on %s: get_sync_data_metering failed", self.host)
            self.request_sync()
            return False
        self._last_sync = self.clock()
        with self._lock:
            self.routers = {r["id"]: rules.metered_router(r) for r in routers
                            if r.get("admin_state_up", True)}
        return True

    def measure(self) -> None:
        """Make the host match, read the counters, account and maybe report."""
        with self._lock:
            routers = dict(self.routers)
        readings = self.driver.measure(routers.values())
        now = int(self.clock())
        counts = (accounting.granular_counts(readings) if self.conf.granular_traffic_data
                  else accounting.legacy_counts(readings))
        self.accounts.add(counts, now)
        if now - self.last_report >= self.conf.report_interval:
            self.report(now, routers)

    def report(self, now: int, routers: dict[str, rules.MeteredRouter]) -> None:
        catalog = accounting.Catalog(routers)
        for key, info in self.accounts.take():
            event, payload = accounting.message(key, info, self.host,
                                                self.conf.granular_traffic_data, catalog)
            LOG.debug("metering report %s: %s", event, payload)
            if self.notifier is not None:
                self.notifier.info(None, event, payload)
        self.accounts.purge(now, self.conf.report_interval)
        self.last_report = now

    def run_once(self) -> None:
        with self._lock:
            due = self._sync_wanted or (
                self.clock() - self._last_sync >= self.conf.periodic_interval)
        if due:
            self.sync()
        self.measure()

    # -- the process -----------------------------------------------------------------

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.run_once()
            except Exception:  # noqa: BLE001 - the loop must outlive one bad pass
                LOG.exception("metering agent on %s: pass failed", self.host)
            with self._lock:
                if not self._sync_wanted and not self._stop.is_set():
                    self._lock.wait(self.conf.measure_interval)

    def start(self) -> None:
        """Listen for casts, report state, run the loop (in threads)."""
        if self.plugin_rpc is None:
            self.plugin_rpc = MeteringPluginApi(self.conf, self.host)
        if self.notifier is None:
            self.notifier = Notifications(self.conf, publisher="metering")
        self.listen(topics.METERING_AGENT, [MeteringAgentEndpoint(self)])
        self.start_reporting()
        self._loop_thread = threading.Thread(target=self._loop, name="metering-agent",
                                             daemon=True)
        self._loop_thread.start()

    def stop(self) -> None:
        self._stop.set()
        with self._lock:
            self._lock.notify_all()
        if self._loop_thread is not None:
            self._loop_thread.join(30)
        super().stop()
        close = getattr(self.plugin_rpc, "close", None)
        if close is not None:
            close()

    def request_stop(self) -> None:
        """Safe from a signal handler: the main thread's ``wait`` returns, then ``stop``."""
        self._stop.set()

    def wait(self) -> None:
        while not self._stop.wait(1.0):
            pass

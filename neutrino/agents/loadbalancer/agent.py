"""The load-balancer agent's loop: the haproxy provider's load balancers
scheduled on this host, realised and watched.

Desired state comes from the server (``get_ready_devices`` on a full sync,
at start, every ``periodic_interval`` and after a revival;
``get_loadbalancer`` for one load balancer); casts on ``lbaasv2_agent``
only mark a load balancer dirty (or to rebuild, for a failover) and wake
the loop. Each pass plans (``plan.plan``) from what the host shows and
what the server answered, applies through the host adapter and reports the
provisioning statuses the change finished (ACTIVE, DELETED, or ERROR when
the host could not apply it). Every ``[haproxy] stats_interval`` the
agent reads each haproxy's statistics and reports operating statuses
(when they changed) and the listeners' counters. Members of UDP pools are
checked by the agent itself when their monitor's ``delay`` is due
(``udp_health``): one whose checks fail leaves the UDP table (a reload
of it alone) and comes back once they pass.
"""
from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable, Protocol

import oslo_messaging
from oslo_config import cfg

from neutrino.agents.base import Agent
from neutrino.agents.loadbalancer import health, plan, udp_health
from neutrino.agents.loadbalancer.host import LbHost
from neutrino.conf.agents import loadbalancer as lb_conf
from neutrino.resources.lb_graph import LoadBalancer
from neutrino.rpc import topics

LOG = logging.getLogger(__name__)


class PluginApi(Protocol):
    """What the agent asks the server (``rpc.LoadBalancerPluginApi``)."""

    def get_ready_devices(self) -> list[str]: ...
    def get_loadbalancer(self, loadbalancer_id: str) -> dict[str, Any] | None: ...
    def update_status(self, statuses: list[dict[str, Any]]) -> None: ...
    def update_loadbalancer_stats(self, stats: list[dict[str, Any]]) -> None: ...


class Notifications:
    """The RPC endpoint of ``lbaasv2_agent``: what the server casts to this host."""

    target = oslo_messaging.Target(version="1.0")

    def __init__(self, agent: "LoadBalancerAgent") -> None:
        self.agent = agent

    def loadbalancer_changed(self, context: Any, loadbalancer_id: str, **kw: Any) -> None:
        self.agent.mark_dirty(loadbalancer_id)

    def loadbalancer_failover(self, context: Any, loadbalancer_id: str, **kw: Any) -> None:
        self.agent.mark_dirty(loadbalancer_id, rebuild=True)

    def agent_updated(self, context: Any, payload: Any = None, **kw: Any) -> None:
        self.agent.mark_full_resync()


class LoadBalancerAgent(Agent):
    agent_type = "Loadbalancerv2 agent"
    binary = "neutron-lbaasv2-agent"
    topic = topics.LOADBALANCER_AGENT

    def __init__(self, conf: cfg.ConfigOpts, plugin: PluginApi, lb_host: LbHost,
                 host: str | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        lb_conf.register(conf)
        super().__init__(conf, host)
        self.plugin = plugin
        self.lb_host = lb_host
        self.clock = clock
        self.graphs: dict[str, LoadBalancer] = {}  # what is served here, as last applied
        self._payloads: dict[str, dict[str, Any]] = {}  # the server's answer, as last applied
        self._udp: dict[str, dict[str, udp_health.Health]] = {}  # UDP members' checks
        self._sent: dict[str, list[dict[str, str]]] = {}  # operating statuses last reported
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._dirty: dict[str, bool] = {}  # lb id -> rebuild
        self._retry: dict[str, bool] = {}  # what failed, for the next full sync
        self._full = True
        self._last_full = float("-inf")
        self._last_stats = float("-inf")

    def configurations(self) -> dict[str, Any]:
        return {"device_drivers": ["haproxy_ns"], "instances": len(self.graphs)}

    def availability_zone(self) -> str | None:
        """Reported so that the haproxy provider places load balancers of an
        availability zone (its profile's ``compute_zone``) on this zone's agents."""
        return str(self.conf.AGENT.availability_zone)

    # -- what casts do --------------------------------------------------------------

    def mark_dirty(self, lb_id: str | None, rebuild: bool = False) -> None:
        if not lb_id:
            return
        with self._lock:
            self._dirty[lb_id] = self._dirty.get(lb_id, False) or rebuild
        self._wake.set()

    def mark_full_resync(self) -> None:
        with self._lock:
            self._full = True
        self._wake.set()

    def revived(self) -> None:
        super().revived()
        self.mark_full_resync()

    # -- one pass -------------------------------------------------------------------

    def step(self) -> None:
        """A full sync when due, else the dirty load balancers; then the health
        report when due."""
        now = self.clock()
        with self._lock:
            full = self._full or now - self._last_full >= self.conf.periodic_interval
            self._full = False
            dirty, self._dirty = self._dirty, {}
        if full:
            retry, self._retry = self._retry, {}
            dirty = {i: dirty.get(i, False) or retry.get(i, False)
                     for i in set(dirty) | set(retry)}
            self._last_full = now
            if not self.sync_all(dirty):
                with self._lock:
                    self._full = True
        elif dirty:
            self.sync(dirty)
        self.check_udp_members(now)
        if now - self._last_stats >= self.conf.haproxy.stats_interval:
            self._last_stats = now
            self.report_health()

    def sync_all(self, dirty: dict[str, bool]) -> bool:
        try:
            ids = set(self.plugin.get_ready_devices())
        except Exception:  # noqa: BLE001 - server or bus away: next pass
            LOG.exception("load-balancer agent on %s: get_ready_devices failed", self.host)
            return False
        ids |= set(self.lb_host.observe()) | set(dirty)
        self.sync({i: dirty.get(i, False) for i in ids})
        return True

    def sync(self, lbs: dict[str, bool]) -> None:
        """Fetch each named load balancer, plan and apply it, report."""
        payloads: dict[str, dict[str, Any] | None] = {}
        for lb_id in lbs:
            try:
                payloads[lb_id] = self.plugin.get_loadbalancer(lb_id)
            except Exception:  # noqa: BLE001 - retried on the next pass
                LOG.exception("load balancer %s: cannot fetch it; retrying", lb_id)
                self._retry[lb_id] = lbs[lb_id]
        observed = self.lb_host.observe()
        for lb_id, payload in payloads.items():
            self._converge(lb_id, payload, observed, lbs[lb_id])

    def _state_dir(self, lb_id: str) -> str:
        return f"{self.conf.haproxy.loadbalancer_state_path}/{lb_id}"

    def _converge(self, lb_id: str, payload: dict[str, Any] | None,
                  observed: dict[str, plan.Observed], rebuild: bool) -> None:
        graph = LoadBalancer.from_dict(payload["loadbalancer"]) if payload else None
        if payload is not None and payload.get("report_provisioning") is False:
            graph = None  # the other agent of an ACTIVE_STANDBY pair reports
        try:
            down = udp_health.down(self._udp.get(lb_id, {}))
            want = plan.deployment(payload, self._state_dir(lb_id), down) if payload else None
            actions = plan.plan({lb_id: want}, {k: v for k, v in observed.items() if k == lb_id},
                                frozenset({lb_id}) if rebuild else frozenset())
            for action in actions:
                self._apply(action)
        except Exception:  # noqa: BLE001 - one load balancer must not stop the others
            LOG.exception("load balancer %s: not converged", lb_id)
            if graph is not None:
                self._report(plan.provisioned(graph, failed=True))
            self._retry[lb_id] = rebuild
            return
        if want is None:
            self.graphs.pop(lb_id, None)
            self._sent.pop(lb_id, None)
            self._payloads.pop(lb_id, None)
            self._udp.pop(lb_id, None)
        elif payload is not None:
            self.graphs[lb_id] = LoadBalancer.from_dict(payload["loadbalancer"])
            self._payloads[lb_id] = payload
        if graph is not None:
            done = plan.provisioned(graph)
            if rebuild and not any(s["kind"] == "loadbalancers" for s in done):
                done.append({"kind": "loadbalancers", "id": lb_id,
                             "provisioning_status": "ACTIVE"})
            self._report(done)
            if want is not None:
                self._sent.pop(lb_id, None)  # statuses again from this haproxy

    def _apply(self, action: plan.Action) -> None:
        LOG.info("load-balancer agent on %s: %s", self.host, type(action).__name__)
        if isinstance(action, plan.Build):
            self.lb_host.build(action.deployment)
        elif isinstance(action, plan.Reload):
            self.lb_host.reload(action.deployment)
        else:
            self.lb_host.teardown(action.lb_id, action.device)

    def _report(self, statuses: list[dict[str, Any]]) -> None:
        if not statuses:
            return
        try:
            self.plugin.update_status(statuses)
        except Exception:  # noqa: BLE001 - the next sync reports again
            LOG.exception("load-balancer agent on %s: update_status failed", self.host)
            self.mark_full_resync()

    def check_udp_members(self, now: float) -> None:
        """Run the UDP members' checks that are due; a member that goes down or
        comes back changes its load balancer's UDP table."""
        for lb_id, graph in list(self.graphs.items()):
            state = self._udp.get(lb_id, {})
            checks = udp_health.due(graph, state, now)
            if not checks:
                self._udp[lb_id] = udp_health.record(graph, state, {}, now)
                continue
            try:
                results = self.lb_host.probe(lb_id, checks)
            except Exception:  # noqa: BLE001 - checked again at the next delay
                LOG.exception("load balancer %s: its UDP members' checks failed to run", lb_id)
                results = {}
            new = udp_health.record(graph, state, results, now)
            self._udp[lb_id] = new
            if udp_health.down(new) != udp_health.down(state):
                LOG.info("load balancer %s: UDP members out of rotation: %s", lb_id,
                         sorted(udp_health.down(new)) or "none")
                self._redeploy(lb_id)

    def _redeploy(self, lb_id: str) -> None:
        payload = self._payloads.get(lb_id)
        if payload is None:
            return
        try:
            want = plan.deployment(payload, self._state_dir(lb_id),
                                   udp_health.down(self._udp.get(lb_id, {})))
            observed = {k: v for k, v in self.lb_host.observe().items() if k == lb_id}
            for action in plan.plan({lb_id: want}, observed):
                self._apply(action)
        except Exception:  # noqa: BLE001 - the next full sync converges it
            LOG.exception("load balancer %s: UDP rotation not changed", lb_id)
            with self._lock:
                self._full = True

    def next_check(self) -> float | None:
        """When the next UDP member check is due (None: no member is checked)."""
        times = [t for t in (udp_health.next_due(g, self._udp.get(i, {}))
                             for i, g in list(self.graphs.items())) if t is not None]
        return min(times) if times else None

    def report_health(self) -> None:
        """Operating statuses (when they changed) and counters of every load
        balancer served here."""
        counters: list[dict[str, Any]] = []
        changed: list[dict[str, str]] = []
        for lb_id, graph in list(self.graphs.items()):
            text = self.lb_host.stats(lb_id)
            if text is None:
                continue
            rows = health.parse_stat(text)
            checked = udp_health.member_statuses(graph, self._udp.get(lb_id, {}))
            now = health.statuses(graph, rows, checked)
            if now != self._sent.get(lb_id):
                changed += now
                self._sent[lb_id] = now
            counters += health.listener_stats(graph, rows)
            udp = self.lb_host.udp_stats(lb_id)
            if udp is not None:
                counters += health.udp_listener_stats(graph, *udp)
        try:
            if changed:
                self.plugin.update_status(changed)
            if counters:
                self.plugin.update_loadbalancer_stats(counters)
        except Exception:  # noqa: BLE001 - sent again at the next interval
            LOG.exception("load-balancer agent on %s: health report failed", self.host)
            self._sent.clear()

    # -- the process ----------------------------------------------------------------

    def run(self) -> None:
        """Listen, report state, converge until stopped."""
        self.listen(topics.LOADBALANCER_AGENT, [Notifications(self)])
        self.start_reporting()
        interval = min(self.conf.periodic_interval, self.conf.haproxy.stats_interval)
        while not self._stop.is_set():
            try:
                self.step()
            except Exception:  # noqa: BLE001 - the loop must outlive one bad pass
                LOG.exception("load-balancer agent on %s: pass failed", self.host)
                self.mark_full_resync()
            due = self.next_check()
            wait = interval if due is None else max(0.05, min(interval, due - self.clock()))
            self._wake.wait(wait)
            self._wake.clear()

    def halt(self) -> None:
        """Make ``run`` return (safe from a signal handler)."""
        self._stop.set()
        self._wake.set()

    def stop(self) -> None:
        self.halt()
        super().stop()
        close = getattr(self.plugin, "close", None)
        if close is not None:
            close()

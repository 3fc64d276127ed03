"""``/metrics``: the server's Prometheus metrics, for admins, and the
middleware counting the API's requests.

Requests are labelled by Falcon's route template (``/v2.0/ports/{id}``), so
the series stay few whatever the ids. What the database knows rather than
any process (agent liveness, IP availability per network) is read from the
plugins, as the API's own lists read it, at most once per ``[metrics]
database_facts_cache_time`` by each worker (a scrape in between is answered
from the last reading).
"""
from __future__ import annotations

import time
from typing import Any, Iterator

import falcon

from neutrino import errors, metrics
from neutrino.api.controller import Api
from neutrino.context import Context
from neutrino.db.query import ListQuery
from neutrino.fresh import Fresh

START = "neutrino.metrics.start"


class RequestMetrics:
    """Falcon middleware: one count and one latency sample per request."""

    def __init__(self, counted: metrics.Metrics) -> None:
        self.counted = counted

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        req.env[START] = time.perf_counter()

    def process_response(self, req: falcon.Request, resp: falcon.Response,
                         resource: Any, req_succeeded: bool) -> None:
        started = req.env.get(START)
        if started is None:
            return
        route = req.uri_template or "unmatched"
        self.counted.requests.labels(req.method, route, str(resp.status_code)).inc()
        self.counted.request_seconds.labels(req.method, route).observe(
            time.perf_counter() - started)


class DatabaseFacts:
    """A prometheus_client collector of what the database holds: each
    agent's liveness, each network's IP addresses in use and in total."""

    def __init__(self, api: Api, max_age: float = 0.0) -> None:
        self.api = api
        self.fresh = Fresh(lambda: list(self.read()), max_age)

    def collect(self) -> Iterator[Any]:
        yield from self.fresh.get()

    def read(self) -> Iterator[Any]:
        # deferred: prometheus_client is imported only with [metrics] enabled
        from prometheus_client.core import GaugeMetricFamily
        ctx = Context.admin()
        alive = GaugeMetricFamily("neutrino_agent_alive",
                                  "1 while an agent's state reports arrive in time",
                                  labels=["agent_type", "host", "binary"])
        if "agents" in self.api.resources:
            agents, _ = self.api.plugin_for("agents").list(ctx, "agents", ListQuery())
            for agent in agents:
                alive.add_metric([agent["agent_type"], agent["host"], agent["binary"]],
                                 1.0 if agent["alive"] else 0.0)
        yield alive
        used = GaugeMetricFamily("neutrino_network_ips_used", "IP addresses allocated",
                                 labels=["network_id", "network_name", "ip_version"])
        total = GaugeMetricFamily("neutrino_network_ips_total",
                                  "IP addresses the network's subnets hold",
                                  labels=["network_id", "network_name", "ip_version"])
        plural = "network_ip_availabilities"
        if plural in self.api.resources:
            found, _ = self.api.plugin_for(plural).list(ctx, plural, ListQuery())
            for network in found:
                versions: dict[int, list[int]] = {}
                for subnet in network.get("subnet_ip_availability", ()):
                    counts = versions.setdefault(subnet["ip_version"], [0, 0])
                    counts[0] += subnet["used_ips"]
                    counts[1] += subnet["total_ips"]
                for version, (in_use, size) in sorted(versions.items()):
                    labels = [network["network_id"], network["network_name"] or "", str(version)]
                    used.add_metric(labels, float(in_use))
                    total.add_metric(labels, float(size))
        yield used
        yield total


class MetricsEndpoint:
    """``GET /metrics``: Prometheus' text format, admins only (403 with a
    Neutron error otherwise, as a policy refusal)."""

    def __init__(self, api: Api, facts_max_age: float = 0.0) -> None:
        self.facts = DatabaseFacts(api, facts_max_age)

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        ctx = getattr(req.context, "neutron", None)
        if ctx is None or not ctx.is_admin:
            raise errors.PolicyNotAuthorized(action="get_metrics")
        body, content_type = metrics.render([self.facts])
        resp.content_type = content_type
        resp.data = body

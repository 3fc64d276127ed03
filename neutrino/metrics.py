"""Prometheus metrics of a neutrino process, when ``[metrics] enabled``.

One set of metrics per process, counted where things happen (the API's
requests, the database's statements and connections, RPC casts and the
calls the RPC process serves, the agents' passes). ``neutrino serve``
pre-forks its API workers and its RPC process: prometheus_client's
multi-process mode has each of them write its values to files in one
directory (``activate`` before the fork), and a scrape sums them. An
agent process, or the all-in-one's single one, keeps them in memory.

Nothing is imported or counted while metrics are off: ``active()`` is None
and every caller checks it once, where it wires itself, so a server
without metrics pays nothing per request.
"""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

# Seconds: an API request's latency and an agent pass's duration.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
PASS_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"


@dataclass
class Metrics:
    requests: Any
    request_seconds: Any
    statements: Any
    connections_in_use: Any
    casts: Any
    rpc_calls: Any
    agent_pass_seconds: Any
    agent_resyncs: Any
    agent_devices_wired: Any
    multiprocess: bool


_ACTIVE: Metrics | None = None


def active() -> Metrics | None:
    return _ACTIVE


def prepare_multiprocess(directory: Path) -> None:
    """In the server's master, before it forks: every child counts into
    files under ``directory``, emptied first (values of an earlier run's
    processes would be summed with this one's)."""
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    os.environ[MULTIPROC_ENV] = str(directory)


def activate() -> Metrics:
    """The process's metrics, created once (multi-process when the master
    prepared a directory)."""
    global _ACTIVE
    if _ACTIVE is not None:
        return _ACTIVE
    # deferred: prometheus_client chooses its value store from the
    # environment when first imported, which must follow prepare_multiprocess
    from prometheus_client import Counter, Gauge, Histogram
    multiprocess = bool(os.environ.get(MULTIPROC_ENV))
    _ACTIVE = Metrics(
        requests=Counter("neutrino_api_requests", "API requests answered, by route and status",
                         ["method", "route", "status"]),
        request_seconds=Histogram("neutrino_api_request_seconds",
                                  "API request latency, by route", ["method", "route"],
                                  buckets=LATENCY_BUCKETS),
        statements=Counter("neutrino_db_statements", "SQL statements sent, by kind",
                           ["pool", "kind"]),
        connections_in_use=Gauge("neutrino_db_connections_in_use",
                                 "Database connections checked out of the pools",
                                 ["pool"], multiprocess_mode="livesum"),
        casts=Counter("neutrino_rpc_casts", "RPC casts sent to agents, by topic and method",
                      ["topic", "method", "fanout"]),
        rpc_calls=Counter("neutrino_rpc_calls", "RPC calls and casts served, by method",
                          ["topic", "method", "outcome"]),
        agent_pass_seconds=Histogram("neutrino_agent_pass_seconds",
                                     "An agent's reconcile pass duration", ["agent"],
                                     buckets=PASS_BUCKETS),
        agent_resyncs=Counter("neutrino_agent_resyncs",
                              "Full resyncs an agent started after a failed pass", ["agent"]),
        agent_devices_wired=Counter("neutrino_agent_devices_wired",
                                    "Devices an agent wired (ports, namespaces)", ["agent"]),
        multiprocess=multiprocess)
    return _ACTIVE


def render(extra: Iterable[Any] = ()) -> tuple[bytes, str]:
    """The exposition text of this process's metrics (of every process of
    the server, in multi-process mode) and of ``extra`` collectors."""
    # deferred: as in activate
    from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest
    from prometheus_client.multiprocess import MultiProcessCollector
    metrics = activate()
    if metrics.multiprocess:
        registry = CollectorRegistry()
        MultiProcessCollector(registry)
    else:
        registry = REGISTRY
    text = generate_latest(registry)
    for collector in extra:
        scratch = CollectorRegistry()
        scratch.register(collector)
        text += generate_latest(scratch)
    return text, CONTENT_TYPE_LATEST


def process_died(pid: int) -> None:
    """The master's word that a child is gone: its live gauges stop counting."""
    if _ACTIVE is not None and _ACTIVE.multiprocess:
        # deferred: as in activate
        from prometheus_client import multiprocess
        multiprocess.mark_process_dead(pid)


def serve_http(host: str, port: int) -> Any:
    """An agent's own /metrics listener (prometheus_client's threaded server)."""
    activate()
    # deferred: as in activate
    from prometheus_client import start_http_server
    return start_http_server(port, addr=host)

"""The server's RPC endpoints, served in a process of their own.

``neutrino serve`` starts it next to the API workers when a
``transport_url`` is configured; it shares nothing with them but the
database. Endpoints are grouped by topic as upstream groups them, so an
agent finds the methods it calls where it expects them.
"""
from __future__ import annotations

import logging
import multiprocessing
import signal
import threading
from typing import Any

from oslo_config import cfg

from neutrino.rpc import topics
from neutrino.rpc.transport import rpc_transport

LOG = logging.getLogger(__name__)


def endpoints_by_topic(conf: cfg.ConfigOpts, db: Any) -> dict[str, list[Any]]:
    from neutrino.rpc.state import StateReportEndpoint
    return {topics.REPORTS: [StateReportEndpoint(db, conf.agent_down_time)]}


def serve(conf: cfg.ConfigOpts) -> None:
    """Run the RPC servers until SIGTERM."""
    import oslo_messaging
    from neutrino.conf.options import database_url
    from neutrino.db.engine import Database
    db = Database(database_url(conf))
    transport = rpc_transport(conf)
    servers = []
    for topic, endpoints in endpoints_by_topic(conf, db).items():
        target = oslo_messaging.Target(topic=topic, server=conf.host)
        server = oslo_messaging.get_rpc_server(transport, target, endpoints,
                                               executor="threading")
        server.start()
        servers.append(server)
        LOG.info("RPC: serving %s on %s", topic, conf.host)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    done.wait()
    for server in servers:
        server.stop()
    for server in servers:
        server.wait()
    transport.cleanup()
    db.dispose()


def start_process(conf: cfg.ConfigOpts) -> multiprocessing.Process:
    """The RPC process, forked before the API workers (no shared connections)."""
    process = multiprocessing.get_context("fork").Process(
        target=serve, args=(conf,), name="neutrino-rpc", daemon=False)
    process.start()
    return process

"""Fire-and-forget messages from the server to agents: casts and fanouts.

Agent notifiers run after a change is committed, in whichever process made
it (an API worker, the RPC process). The bus connection is made on first
use, after the fork, and kept for the process's life. A message that cannot
be sent is logged: the change it announces is already durable, and agents
resynchronise from the server on their next full sync.
"""
from __future__ import annotations

import logging
import threading
from typing import Any

from oslo_config import cfg

from neutrino import metrics
from neutrino.rpc.transport import configured_url, rpc_transport

LOG = logging.getLogger(__name__)

# Reconnection attempts a cast makes when the bus is unreachable before it
# is given up as not sent. oslo.messaging's default is to wait for the bus
# for ever, which held every API request that changed something agents
# hear about until the broker came back.
CAST_RETRIES = 1


class Casts:
    def __init__(self, conf: cfg.ConfigOpts) -> None:
        self.conf = conf
        self.enabled = configured_url(conf) is not None
        self._client: Any = None
        self._lock = threading.Lock()

    def _rpc(self) -> Any:
        with self._lock:
            if self._client is None:
                # deferred: an API worker loads oslo.messaging (and eventlet) on its first cast only
                import oslo_messaging
                self._client = oslo_messaging.get_rpc_client(
                    rpc_transport(self.conf), oslo_messaging.Target())
            return self._client

    def cast(self, topic: str, method: str, *, server: str | None = None,
             fanout: bool = False, version: str = "1.0", **kwargs: Any) -> bool:
        """Send ``method(**kwargs)`` to ``topic`` (one host's agent with
        ``server``, every listener with ``fanout``); False when not sent."""
        if not self.enabled:
            return False
        counted = metrics.active()
        if counted is not None:
            counted.casts.labels(topic, method, "true" if fanout else "false").inc()
        try:
            self._rpc().prepare(topic=topic, server=server, fanout=fanout, version=version,
                                retry=CAST_RETRIES).cast({}, method, **kwargs)
            return True
        except Exception:  # noqa: BLE001 - the change is committed; agents resync
            LOG.exception("could not cast %s to %s%s", method, topic,
                          f".{server}" if server else "")
            return False

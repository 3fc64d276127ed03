"""The trace plugin's calls to one host's agent (``trace_packet``, ``trace --live``).

A call, unlike the notifiers' casts, waits for the answer; an agent that
is down or not listening makes a timeout, which the answer names instead
of failing the request. The bus connection is made on first use, after
the API worker's fork, and kept.
"""
from __future__ import annotations

import threading
from typing import Any

from oslo_config import cfg

from neutrino.rpc import topics
from neutrino.rpc.transport import configured_url, rpc_transport

TIMEOUT = 20  # seconds an agent may take to run the tool and answer


class AgentCalls:
    def __init__(self, conf: cfg.ConfigOpts, timeout: float = TIMEOUT) -> None:
        self.conf = conf
        self.timeout = timeout
        self._transport: Any = None
        self._lock = threading.Lock()

    def _client(self, topic: str, host: str) -> Any:
        # deferred: an API worker loads oslo.messaging only when a live trace is asked
        import oslo_messaging
        with self._lock:
            if self._transport is None:
                self._transport = rpc_transport(self.conf)
        target = oslo_messaging.Target(topic=topic, server=host, version=topics.AUDIT_VERSION)
        return oslo_messaging.get_rpc_client(self._transport, target, timeout=self.timeout)

    def ask(self, topic: str, host: str, packet: dict[str, Any]) -> dict[str, Any]:
        """The agent's answer, or ``error`` saying why there is none."""
        if configured_url(self.conf) is None:
            return {"error": "the server has no transport_url: no agent can be asked"}
        import oslo_messaging  # deferred: see _client
        try:
            return dict(self._client(topic, host).call({}, "trace_packet", packet=packet))
        except oslo_messaging.MessagingTimeout:
            return {"error": f"the agent on {host} did not answer within {self.timeout}s"}
        except oslo_messaging.MessagingException as exc:
            return {"error": f"the agent on {host} could not be asked: {exc}"}

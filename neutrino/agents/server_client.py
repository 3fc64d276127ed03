"""What every agent-side client of the server's RPC shares: a transport of
its own, a client for one topic (and namespace), versioned calls made with
upstream's admin context (``neutrino.rpc.admin_context``), close."""
from __future__ import annotations

from typing import Any

import oslo_messaging

from neutrino.rpc.admin_context import admin_context
from neutrino.rpc.transport import rpc_transport


class ServerClient:
    def __init__(self, conf: Any, topic: str, namespace: str | None = None) -> None:
        self.transport = rpc_transport(conf)
        self.client = oslo_messaging.get_rpc_client(self.transport, oslo_messaging.Target(
            topic=topic, namespace=namespace, version="1.0"))

    def call(self, method: str, version: str | None = None, **kwargs: Any) -> Any:
        client = self.client.prepare(version=version) if version else self.client
        return client.call(admin_context(), method, **kwargs)

    def close(self) -> None:
        self.transport.cleanup()

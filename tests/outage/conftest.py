"""The outage tests' message bus: a RabbitMQ virtual host per module, as tests/rpc."""
from __future__ import annotations

from tests.rpc.conftest import vhost  # noqa: F401 - the fixture, shared

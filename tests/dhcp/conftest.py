"""DHCP tests run against a server with a message bus: a RabbitMQ virtual
host per module (as tests/rpc), and DHCP agents that are real state
reporters and real listeners on ``dhcp_agent.<host>``."""
from __future__ import annotations

from tests.rpc.conftest import vhost  # noqa: F401 - the fixture, shared

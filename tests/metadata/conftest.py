"""Metadata tests: a RabbitMQ virtual host per module, as tests/rpc, and
the agent's socket the proxies forward to."""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Iterator

import pytest

from tests.metadata.recording import FakeAgent
from tests.rpc.conftest import vhost  # noqa: F401 - the fixture, shared


@pytest.fixture
def agent_socket(tmp_path: Path) -> Iterator[FakeAgent]:
    """A recording agent on a UNIX socket in the test's directory, served
    by a thread until the test ends."""
    server = FakeAgent(str(tmp_path / "md.sock"))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()

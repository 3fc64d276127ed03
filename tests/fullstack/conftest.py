"""Fullstack fixtures: emulated hosts (root + Open vSwitch), torn down even on failure."""
from __future__ import annotations

from typing import Iterator

import pytest

from tests.fullstack.hosts import Fabric, missing_reason


@pytest.fixture(scope="module")
def fabric(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fabric]:
    reason = missing_reason()
    if reason:
        pytest.skip(reason)
    fab = Fabric(tmp_path_factory.mktemp("fabric"))
    try:
        yield fab
    finally:
        fab.destroy()


from tests.rpc.conftest import vhost  # noqa: E402,F401 - a RabbitMQ vhost per module

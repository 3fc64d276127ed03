"""Fixtures of the root-only DHCP agent tests: an emulated host, a config dir."""
from __future__ import annotations

import os
import shutil
import tempfile
from typing import Iterator

import pytest

from tests.dhcpagent._host import Host
from tests.rpc.conftest import vhost  # noqa: F401 - a RabbitMQ vhost per module


@pytest.fixture
def host() -> Iterator[Host]:
    h = Host()
    yield h
    h.remove()


@pytest.fixture
def confs() -> Iterator[str]:
    path = tempfile.mkdtemp(prefix="dhcpt-confs-")
    os.chmod(path, 0o755)  # dnsmasq re-reads its files as an unprivileged user
    yield path
    shutil.rmtree(path, ignore_errors=True)

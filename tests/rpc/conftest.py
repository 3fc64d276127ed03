"""A RabbitMQ virtual host of its own for each test module, on the machine's broker."""
from __future__ import annotations

import contextlib
import subprocess
import uuid
from typing import Iterator

import pytest


def _ctl(*args: str) -> None:
    subprocess.run(["rabbitmqctl", *args], check=True, capture_output=True, timeout=120)


@contextlib.contextmanager
def fresh_vhost() -> Iterator[str]:
    """A virtual host nobody else uses, deleted afterwards."""
    name = f"neutrino_t_{uuid.uuid4().hex[:10]}"
    _ctl("add_vhost", name)
    try:
        _ctl("set_permissions", "-p", name, "guest", ".*", ".*", ".*")
        yield name
    finally:
        _ctl("delete_vhost", name)


@pytest.fixture(scope="module")
def vhost() -> Iterator[str]:
    with fresh_vhost() as name:
        yield name

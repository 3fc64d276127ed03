"""The Galera cluster, one per session: it takes a while to form."""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Iterator

import pytest

from tests.galera.cluster import OWNER, Cluster, available
from tests.rpc.conftest import vhost  # noqa: F401 - the fixture, shared


@pytest.fixture(scope="session")
def galera() -> Iterator[Cluster]:
    reason = available()
    if reason:
        pytest.skip(reason)
    # Not under pytest's own temporary directory: the nodes' user must be
    # able to reach their homes, and pytest's is private to root.
    home = Path(tempfile.mkdtemp(prefix="neutrino-galera-"))
    shutil.chown(home, OWNER, OWNER)
    cluster = Cluster(home)
    try:
        yield cluster.start()
    finally:
        cluster.stop()
        shutil.rmtree(home, ignore_errors=True)

"""Segment allocation raced by several client processes against two API workers.

Ordering without clocks: every request takes a number from a shared counter
when it is sent and another when its answer arrives. A 503 "no network
available" answered at tick T is premature exactly when some network
creation *sent after* T still succeeded (nothing is deleted during the run).
"""
from __future__ import annotations

import multiprocessing
import queue
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import requests
import sqlalchemy as sa

from neutrino.db import tables as t
from neutrino.db.engine import make_engine
from tests.conftest import Server

pytestmark = pytest.mark.backend

CLIENTS = 4
VLANS = 20
CONF = f"""
[ml2]
tenant_network_types = vlan
[ml2_type_vlan]
network_vlan_ranges = physnet1:100:{99 + VLANS}
"""
PER_CLIENT_LIMIT = VLANS + 5
RUN_BUDGET = 180.0
MP = multiprocessing.get_context("fork")


def _tick(counter: Any) -> int:
    with counter.get_lock():
        counter.value += 1
        return counter.value


def _client(url: str, counter: Any, barrier: Any, out: Any, deadline: float) -> None:
    """Create project networks until told none is left; report every answer."""
    session = requests.Session()
    session.headers.update({"X-Project-Id": uuid.uuid4().hex, "X-User-Id": "u",
                            "X-Roles": "member"})
    results = []
    try:
        barrier.wait(timeout=60)
        for _ in range(PER_CLIENT_LIMIT):
            if time.monotonic() > deadline:
                break
            sent = _tick(counter)
            try:
                resp = session.post(f"{url}/v2.0/networks", json={"network": {"name": "race"}},
                                    timeout=120)
                status, body = resp.status_code, resp.json()
            except (requests.RequestException, ValueError) as exc:
                status, body = -1, {"exception": repr(exc)}
            results.append({"sent": sent, "done": _tick(counter), "status": status,
                            "body": body})
            if status == 503:
                break
    finally:
        out.put(results)


def _race(url: str) -> list[dict[str, Any]]:
    counter, barrier, out = MP.Value("i", 0), MP.Barrier(CLIENTS), MP.Queue()
    deadline = time.monotonic() + RUN_BUDGET
    procs = [MP.Process(target=_client, args=(url, counter, barrier, out, deadline))
             for _ in range(CLIENTS)]
    for proc in procs:
        proc.start()
    results: list[dict[str, Any]] = []
    for _ in procs:
        try:
            results.extend(out.get(timeout=RUN_BUDGET + 60))
        except queue.Empty:
            break
    for proc in procs:
        proc.join(timeout=30)
    return results


# The pool's ranges from the configuration, or from the database as default
# ranges (``network_segment_range``: each allocation reads them).
RANGES = {"configured": "", "segment-ranges": "service_plugins = network_segment_range\n"}


@pytest.mark.parametrize("ranges", sorted(RANGES))
def test_concurrent_project_networks_never_share_a_vlan_and_none_is_refused_early(
        db_url: str, tmp_path: Path, ranges: str) -> None:
    srv = Server(tmp_path, db_url=db_url, extra=RANGES[ranges] + CONF, workers=2).start()
    try:
        results = _race(srv.url)
    finally:
        srv.stop()
    created = [r for r in results if r["status"] == 201]
    refused = [r for r in results if r["status"] != 201]
    assert all(r["status"] == 503 and r["body"]["NeutronError"]["type"] == "NoNetworkAvailable"
               for r in refused), refused
    assert len(created) == VLANS
    first_refusal = min((r["done"] for r in refused), default=None)
    assert first_refusal is None or not any(r["sent"] > first_refusal for r in created), (
        "a creation was refused while VLANs were still free")
    engine = make_engine(db_url)
    try:
        with engine.connect() as conn:
            ids = list(conn.execute(sa.select(t.network_segments.c.segmentation_id)).scalars())
            free = conn.execute(sa.select(sa.func.count()).select_from(t.ml2_vlan_allocations)
                                .where(t.ml2_vlan_allocations.c.allocated.is_(False))).scalar()
    finally:
        engine.dispose()
    assert sorted(ids) == list(range(100, 100 + VLANS))
    assert free == 0

"""Many parallel creates by one project never exceed its quota."""
from __future__ import annotations

import multiprocessing
import uuid
from pathlib import Path

import pytest
import requests

from tests.conftest import Server

LIMIT = 7
PROCESSES = 4
PER_PROCESS = 6  # 24 attempts for 7 slots


def _create_many(url: str, project: str, tag: int, out: "multiprocessing.Queue[list[int]]") -> None:
    session = requests.Session()
    session.headers.update({"X-Project-Id": project, "X-Roles": "member"})
    codes = []
    for i in range(PER_PROCESS):
        resp = session.post(f"{url}/v2.0/networks",
                            json={"network": {"name": f"c{tag}-{i}"}}, timeout=60)
        codes.append(resp.status_code)
    out.put(codes)


@pytest.mark.backend
@pytest.mark.parametrize("db_url", ["postgresql", "mariadb"], indirect=True)
def test_parallel_creates_of_one_project_stop_exactly_at_the_quota(db_url: str, tmp_path: Path) -> None:
    srv = Server(tmp_path, db_url=db_url, workers=2,
                 extra=f"[quotas]\nquota_network = {LIMIT}\n").start()
    try:
        project = uuid.uuid4().hex
        queue: multiprocessing.Queue[list[int]] = multiprocessing.Queue()
        procs = [multiprocessing.Process(target=_create_many, args=(srv.url, project, n, queue))
                 for n in range(PROCESSES)]
        for p in procs:
            p.start()
        codes = [c for _ in procs for c in queue.get(timeout=120)]
        for p in procs:
            p.join(timeout=30)
        assert codes.count(201) == LIMIT
        assert set(codes) <= {201, 409}
        listed = requests.get(f"{srv.url}/v2.0/networks", timeout=30,
                              headers={"X-Project-Id": project, "X-Roles": "member"}).json()
        assert len(listed["networks"]) == LIMIT
    finally:
        srv.stop()

"""The default group is made exactly once per project under concurrency.

Several client processes hit two API workers at once, each asking for the
same projects' default groups in the ways that make them (listing groups,
listing rules, creating a group, creating a network); afterwards every
project has one default group with its four rules, and every client saw
that one.
"""
from __future__ import annotations

import multiprocessing
import queue
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
PROJECTS = [f"{i:032x}" for i in range(1, 6)]
MP = multiprocessing.get_context("fork")


def _client(url: str, index: int, barrier: Any, out: Any) -> None:
    session = requests.Session()
    seen: list[tuple[str, int, Any]] = []
    try:
        barrier.wait(timeout=60)
        for project in PROJECTS:
            headers = {"X-Project-Id": project, "X-User-Id": "u", "X-Roles": "member"}
            kind = (index + PROJECTS.index(project)) % 4
            if kind == 0:
                resp = session.get(f"{url}/v2.0/security-groups?name=default", headers=headers)
            elif kind == 1:
                resp = session.get(f"{url}/v2.0/security-group-rules", headers=headers)
            elif kind == 2:
                resp = session.post(f"{url}/v2.0/security-groups", headers=headers,
                                    json={"security_group": {"name": f"c{index}"}})
            else:
                resp = session.post(f"{url}/v2.0/networks", headers=headers,
                                    json={"network": {"name": f"c{index}"}})
            seen.append((project, resp.status_code, resp.json()))
    finally:
        out.put(seen)


def test_each_project_gets_exactly_one_default_group(db_url: str, tmp_path: Path) -> None:
    srv = Server(tmp_path, db_url=db_url, workers=2).start()
    try:
        barrier, out = MP.Barrier(CLIENTS), MP.Queue()
        procs = [MP.Process(target=_client, args=(srv.url, i, barrier, out))
                 for i in range(CLIENTS)]
        for proc in procs:
            proc.start()
        results: list[tuple[str, int, Any]] = []
        for _ in procs:
            try:
                results.extend(out.get(timeout=180))
            except queue.Empty:
                break
        for proc in procs:
            proc.join(timeout=30)
        assert len(results) == CLIENTS * len(PROJECTS)
        assert all(status in (200, 201) for _, status, _ in results), results
        listed = {}
        for project in PROJECTS:
            body = requests.get(f"{srv.url}/v2.0/security-groups?name=default", headers={
                "X-Project-Id": project, "X-User-Id": "u", "X-Roles": "member"}).json()
            (only,) = body["security_groups"]
            listed[project] = only["id"]
            assert len(only["security_group_rules"]) == 4
        for project, _, body in results:
            if "security_groups" in body:
                assert [g["id"] for g in body["security_groups"]] == [listed[project]]
    finally:
        srv.stop()
    engine = make_engine(db_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(sa.select(t.securitygroups.c.project_id, sa.func.count())
                                .where(t.securitygroups.c.name == "default")
                                .group_by(t.securitygroups.c.project_id)).all()
            marked = conn.execute(sa.select(sa.func.count())
                                  .select_from(t.default_security_group)).scalar()
    finally:
        engine.dispose()
    assert sorted(rows) == [(p, 1) for p in PROJECTS]
    assert marked == len(PROJECTS)

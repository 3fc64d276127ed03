"""The database goes away for ten seconds under load, and comes back.

neutrino runs on a PostgreSQL server of the test's own, which the test
stops (a fast shutdown, as for maintenance) while clients keep sending.
Requests in that window are refused with 503 and a Neutron error, never a
500 nor a traceback; when the database is back, the same server processes
serve again by themselves, without a restart: the API workers and the RPC
process, whose answers to an agent's state reports resume too.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Iterator

import psutil
import pytest

from tests.conftest import Server
from tests.outage.load import Answer, Load
from tests.outage.postgres import PrivatePostgres, available
from tests.rpc.bus import OvsAgent, agent_conf, bus
from tests.waiting import until, wait_for

pytestmark = pytest.mark.backend

OUTAGE = 10.0          # seconds without a database
BEFORE = 20            # good answers before the database is stopped
AFTER = 40             # answers after service resumed, all good
RECOVERY_BOUND = 60.0  # a bound on waiting for service to resume, not a claim
SUCCESS = {200, 201, 204}


@pytest.fixture
def postgres() -> Iterator[PrivatePostgres]:
    reason = available()
    if reason:
        pytest.skip(reason)
    pg = PrivatePostgres()
    try:
        pg.start()
        pg.create_database()
        yield pg
    finally:
        pg.close()


def _processes(srv: Server) -> set[int]:
    assert srv.proc is not None
    master = psutil.Process(srv.proc.pid)
    return {master.pid, *(p.pid for p in master.children(recursive=True))}


def test_requests_while_the_database_is_down_get_503_and_service_resumes_by_itself(
        postgres: PrivatePostgres, tmp_path: Path, vhost: str) -> None:
    srv = Server(tmp_path, db_url=postgres.url, workers=2,
                 extra=f"transport_url = {bus(vhost)}\n").start()
    load = Load(srv.url)
    agent = OvsAgent(agent_conf(tmp_path, vhost, "host-a"))
    try:
        assert agent.register() == "new"
        processes = _processes(srv)
        load.start()
        until(lambda: load.count("before", ok=True) >= BEFORE)
        postgres.stop()
        load.phase = "down"
        assert agent.report_state(timeout=30) is None  # the RPC process cannot record it
        time.sleep(OUTAGE)  # the outage itself: what the test is about
        load.phase = "recovering"
        postgres.start()
        until(lambda: load.count("recovering", ok=True), timeout=RECOVERY_BOUND)
        load.phase = "after"
        wait_for(lambda: load.count("after") >= AFTER, timeout=RECOVERY_BOUND)
        assert agent.report_state(timeout=30) == "alive"
        answers = load.finish()
        assert srv.proc is not None and srv.proc.poll() is None
        assert _processes(srv) == processes, "a server process was restarted"
    finally:
        load.finish()
        agent.stop()
        srv.stop()

    check_every_answer_is_neutrons(answers)
    down = [a for a in answers if a.phase == "down"]
    assert down and all(a.status == 503 for a in down), _summary(down)
    after = [a for a in answers if a.phase == "after"]
    assert len(after) >= AFTER and all(a.status in SUCCESS for a in after), _summary(after)
    assert "Traceback" not in "".join(a.text for a in answers)
    print(f"answers: {_summary(answers)}")


def check_every_answer_is_neutrons(answers: list[Answer]) -> None:
    """A success, or a 503 or 404 whose body is a Neutron error."""
    odd = [a for a in answers
           if a.status not in SUCCESS and not (a.status in (404, 503) and a.neutron_error())]
    assert not odd, odd[:5]


def _summary(answers: list[Answer]) -> dict[tuple[str, int], int]:
    out: dict[tuple[str, int], int] = {}
    for a in answers:
        out[(a.phase, a.status)] = out.get((a.phase, a.status), 0) + 1
    return out

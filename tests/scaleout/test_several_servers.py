"""Two API servers (two workers each) on one database and one RabbitMQ vhost,
behind HAProxy: concurrent creates through the balancer while one server is
SIGKILLed and restarted never hand out a segment, an IP or a MAC twice,
never exceed a quota, and leave nothing half-created.

The clients and the checks are tests/scaleout/load.py's.
"""
from __future__ import annotations

import concurrent.futures
from pathlib import Path
from typing import Any, Iterator

import pytest
import sqlalchemy as sa

from neutrino.db import migrate
from neutrino.db.engine import make_engine
from tests.conftest import ROOT, _mysql_create, _pg_create
from tests.rpc.bus import bus
from tests.scaleout.deployment import TEMPLATES, Balancer, api_server, kill_hard
from tests.scaleout.load import Load, check_answers, check_api, check_db, check_quota, prepare

pytestmark = pytest.mark.backend

KILL_AFTER = 12                # answered requests before server1 is killed
AFTER_RESTART = 40             # answered requests after it is back


@pytest.fixture(params=["postgresql", "mariadb"])
def database(request: pytest.FixtureRequest) -> Iterator[str]:
    url, drop = _pg_create() if request.param == "postgresql" else _mysql_create()
    try:
        yield url
    finally:
        drop()  # type: ignore[operator]


def run_clients(url: str, projects: dict[str, str], net_id: str, servers: list[Any],
                engine: sa.Engine) -> tuple[list[dict[str, Any]], list[dict[str, tuple[int, int]]], list[int]]:
    """Run the clients; kill server1 after KILL_AFTER answers, restart it, and
    stop the clients AFTER_RESTART answers later. Samples quota usage throughout."""
    load = Load([url], projects, net_id, engine)
    killed: list[int] = []
    try:
        load.wait_for(KILL_AFTER)
        killed = kill_hard(servers[0])
        load.sample()
        servers[0].start()
        load.wait_for(load.answered.value + AFTER_RESTART)
    finally:
        results = load.finish()
    return results, load.samples, killed


def test_two_servers_behind_haproxy_survive_a_killed_server_without_double_allocation(
        database: str, tmp_path: Path, vhost: str) -> None:
    servers = [api_server(tmp_path / f"server{n}", database, bus(vhost)) for n in (1, 2)]
    balancer = Balancer(tmp_path, servers)
    engine = make_engine(database)
    try:
        migrate.upgrade(database)  # once; each server's own upgrade is then a no-op
        with concurrent.futures.ThreadPoolExecutor(len(servers)) as pool:
            list(pool.map(lambda srv: srv.start(), servers))
        balancer.start()
        projects, net_id = prepare(balancer.url)

        results, samples, killed = run_clients(balancer.url, projects, net_id, servers, engine)

        assert len(killed) >= 4  # master, two workers, the RPC process
        assert len(results) >= KILL_AFTER + AFTER_RESTART
        check_quota(samples)
        check_answers(results)
        listed = check_api(balancer.url, projects, results)
        check_db(engine, listed)
    finally:
        engine.dispose()
        balancer.stop()
        for srv in servers:
            srv.stop()


def test_readme_shows_the_tested_deployment_files() -> None:
    readme = (ROOT / "README.md").read_text()
    for name in ("neutron.conf", "haproxy.cfg"):
        assert (TEMPLATES / name).read_text() in readme, name

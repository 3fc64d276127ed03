"""neutrino on a three-node MariaDB Galera cluster, as OpenStack deployments
run it, with every server writing to a node of its own.

Galera certifies each transaction at commit against the others replicated
meanwhile; a loser is rolled back and reported as a deadlock (error 1213),
which ``engine.retrying`` reruns like any other lost race. Row locks are
local to a node, so what the scale-out test checks on one database
(no segment, IP or MAC twice, no quota exceeded, nothing half-made) is
checked here with concurrent writers on different nodes.
"""
from __future__ import annotations

import concurrent.futures
import uuid
from pathlib import Path

import pytest

from neutrino.db import migrate
from neutrino.db.engine import make_engine
from tests.galera.cluster import Cluster
from tests.rpc.bus import bus
from tests.scaleout.deployment import api_server
from tests.scaleout.load import Load, check_answers, check_api, check_db, check_quota, prepare

pytestmark = pytest.mark.backend

ANSWERS = 80  # requests answered in all before the clients stop


def test_servers_on_different_nodes_never_allocate_twice_nor_exceed_a_quota(
        galera: Cluster, tmp_path: Path, vhost: str) -> None:
    name = f"neutrino_t_{uuid.uuid4().hex[:10]}"
    galera.create_database(name)
    urls = [node.url(name) for node in galera.nodes]
    servers = [api_server(tmp_path / f"server{n}", url, bus(vhost))
               for n, url in enumerate(urls, 1)]
    engine = make_engine(urls[0])
    try:
        migrate.upgrade(urls[0])  # once; each server's own upgrade is then a no-op
        with concurrent.futures.ThreadPoolExecutor(len(servers)) as pool:
            list(pool.map(lambda srv: srv.start(), servers))
        projects, net_id = prepare(servers[0].url)

        before = galera.conflicts()
        load = Load([srv.url for srv in servers], projects, net_id, engine)
        try:
            load.wait_for(ANSWERS)
        finally:
            results = load.finish()

        assert len(results) >= ANSWERS
        check_quota(load.samples)
        check_answers(results)
        listed = check_api(servers[-1].url, projects, results)
        check_db(engine, listed)
        print(f"transactions lost to another node's, rerun: {galera.conflicts() - before}")
    finally:
        engine.dispose()
        for srv in servers:
            srv.stop()
        galera.drop_database(name)


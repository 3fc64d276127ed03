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
import threading
import uuid
from pathlib import Path

import pytest

from neutrino.db import migrate
from neutrino.db.engine import make_engine
from tests.conftest import Client
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



ROUNDS = 12


def test_a_quota_holds_against_creates_on_different_nodes_at_the_same_moment(
        galera: Cluster, tmp_path: Path, vhost: str) -> None:
    """Row locks are local to a node: a quota that only locked (SELECT ...
    FOR UPDATE) let a create on each node count the same usage and both
    commit. Two creates of the last allowed network start together, one on
    each node, round after round."""
    name = f"neutrino_t_{uuid.uuid4().hex[:10]}"
    galera.create_database(name)
    urls = [node.url(name) for node in galera.nodes[:2]]
    servers = [api_server(tmp_path / f"server{n}", url, bus(vhost))
               for n, url in enumerate(urls, 1)]
    try:
        migrate.upgrade(urls[0])
        with concurrent.futures.ThreadPoolExecutor(len(servers)) as pool:
            list(pool.map(lambda srv: srv.start(), servers))
        project = uuid.uuid4().hex
        admin = Client(servers[0].url)
        assert admin.put(f"/v2.0/quotas/{project}", {"quota": {"network": 1}})[0] == 200
        members = [Client(srv.url, project) for srv in servers]
        overruns = []
        with concurrent.futures.ThreadPoolExecutor(len(members)) as pool:
            for round_ in range(ROUNDS):
                start = threading.Barrier(len(members))

                def create(member: Client) -> tuple[int, object]:
                    start.wait(timeout=30)
                    return member.post("/v2.0/networks", {"network": {"name": f"r{round_}"}})
                answers = list(pool.map(create, members))
                assert {status for status, _ in answers} <= {201, 409}, answers
                made = [body["network"]["id"] for status, body in answers if status == 201]
                if len(made) > 1:
                    overruns.append(round_)
                for net_id in made:
                    assert members[0].delete(f"/v2.0/networks/{net_id}")[0] == 204
        assert not overruns, f"quota 1 exceeded in rounds {overruns} of {ROUNDS}"
    finally:
        for srv in servers:
            srv.stop()
        galera.drop_database(name)

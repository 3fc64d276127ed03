"""Pipelined INSERTs (``db/pipeline.py``): on MariaDB, through either driver,
they travel with the next statement or the COMMIT, one round trip for all;
they fail the transaction as a plain INSERT would, only later; elsewhere
they are sent at once."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest
import sqlalchemy as sa
from sqlalchemy import event

from neutrino.db import pipeline, writes
from neutrino.db import tables as t
from neutrino.db.engine import Database
from neutrino.plugins import store
from tests.conftest import migrated_database
from tests.inprocess import CountingApp


@pytest.fixture(params=["mariadb", "mariadb-pymysql"])
def mysql_db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    with migrated_database(request.param, tmp_path) as url:
        db = Database(url)
        try:
            yield db
        finally:
            db.dispose()


def tag(conn: sa.Connection, name: str, pipelined: bool = True) -> None:
    store.insert(conn, t.tags, {"resource_id": "r", "tag": name}, pipelined=pipelined)


def tags(db: Database) -> list[str]:
    with db.reader() as conn:
        return sorted(conn.execute(sa.select(t.tags.c.tag)).scalars())


def test_pipelined_inserts_go_with_the_commit_in_one_round_trip(mysql_db: Database) -> None:
    with mysql_db.writer() as conn:
        raw = conn.connection.dbapi_connection
        start = raw.round_trips
        tag(conn, "a")
        tag(conn, "b")
        assert raw.round_trips == start  # nothing sent yet
    assert raw.round_trips == start + 1
    assert tags(mysql_db) == ["a", "b"]


def test_a_failing_pipelined_insert_fails_the_commit_and_nothing_of_the_transaction_stays(
        mysql_db: Database) -> None:
    with mysql_db.writer() as conn:
        tag(conn, "a", pipelined=False)
    with pytest.raises(sa.exc.IntegrityError) as err:
        with mysql_db.writer() as conn:
            raw = conn.connection.dbapi_connection
            tag(conn, "b", pipelined=False)  # sent at once
            tag(conn, "c")
            tag(conn, "a")
    assert err.value.orig.args[0] == 1062  # the driver's number, for the retry loop
    assert raw.pending == []
    # The pool does not roll back on return: the same connection, taken
    # again, holds no transaction that a later COMMIT could keep.
    with mysql_db.writer() as conn:
        assert conn.connection.dbapi_connection is raw
        tag(conn, "d")
    assert tags(mysql_db) == ["a", "d"]


def test_a_statement_after_a_pipelined_insert_sees_its_row_in_the_same_round_trip(
        mysql_db: Database) -> None:
    with mysql_db.writer() as conn:
        raw = conn.connection.dbapi_connection
        start = raw.round_trips
        tag(conn, "a")
        tag(conn, "b")
        found = conn.execute(sa.select(t.tags.c.tag).order_by(t.tags.c.tag)).scalars().all()
        assert found == ["a", "b"]
        assert raw.round_trips == start + 1  # INSERT; INSERT; SELECT
        counted = conn.execute(sa.update(t.tags).where(t.tags.c.tag == "a")
                               .values(tag="z")).rowcount
        assert counted == 1  # the cursor is on the last statement's result
    assert tags(mysql_db) == ["b", "z"]


def test_a_pipelined_insert_failing_before_a_statement_fails_that_statement(
        mysql_db: Database) -> None:
    with mysql_db.writer() as conn:
        tag(conn, "a", pipelined=False)
    with pytest.raises(sa.exc.IntegrityError):
        with mysql_db.writer() as conn:
            tag(conn, "b")
            tag(conn, "a")
            conn.execute(sa.select(t.tags.c.tag)).all()
    assert tags(mysql_db) == ["a"]


def take(conn: sa.Connection, name: str) -> pipeline.Ahead:
    """Rename tag ``name`` to ``name!`` ahead: one row when it is there."""
    return pipeline.ahead(conn, sa.update(t.tags).where(t.tags.c.tag == sa.bindparam("name"))
                          .values(tag=name + "!"), {"name": name})


def test_a_statement_sent_ahead_goes_with_the_next_statement_and_keeps_its_count(
        mysql_db: Database) -> None:
    with mysql_db.writer() as conn:
        tag(conn, "a", pipelined=False)
        tag(conn, "b", pipelined=False)
    with mysql_db.writer() as conn:
        raw = conn.connection.dbapi_connection
        start = raw.round_trips
        hit, miss = take(conn, "a"), take(conn, "nothing")
        assert raw.round_trips == start  # nothing sent yet
        found = conn.execute(sa.select(t.tags.c.tag).order_by(t.tags.c.tag)).scalars().all()
        assert raw.round_trips == start + 1
        assert found == ["a!", "b"]  # the read ran after the UPDATE it carried
        assert (hit.rowcount, miss.rowcount) == (1, 0)
        assert raw.round_trips == start + 1
    assert tags(mysql_db) == ["a!", "b"]


def test_a_count_asked_for_before_anything_else_is_sent_is_sent_for(
        mysql_db: Database) -> None:
    with mysql_db.writer() as conn:
        tag(conn, "a", pipelined=False)
    with mysql_db.writer() as conn:
        raw = conn.connection.dbapi_connection
        start = raw.round_trips
        tag(conn, "b")
        renamed = take(conn, "a")
        assert renamed.rowcount == 1
        assert raw.round_trips == start + 1 and raw.pending == []
    assert tags(mysql_db) == ["a!", "b"]


def test_a_statement_sent_ahead_after_a_failing_one_is_not_run(mysql_db: Database) -> None:
    with mysql_db.writer() as conn:
        tag(conn, "a", pipelined=False)
    with pytest.raises(sa.exc.IntegrityError):
        with mysql_db.writer() as conn:
            tag(conn, "a")  # the duplicate: the batch stops here
            renamed = take(conn, "a")
    with pytest.raises(RuntimeError):
        renamed.rowcount
    assert tags(mysql_db) == ["a"]


def test_a_statement_sent_ahead_is_undone_with_its_transaction(mysql_db: Database) -> None:
    with mysql_db.writer() as conn:
        tag(conn, "a", pipelined=False)
    with pytest.raises(RuntimeError):
        with mysql_db.writer() as conn:
            renamed = take(conn, "a")
            assert renamed.rowcount == 1
            raise RuntimeError("the operation failed")
    assert tags(mysql_db) == ["a"]


def test_a_rollback_drops_what_was_waiting(mysql_db: Database) -> None:
    with pytest.raises(RuntimeError):
        with mysql_db.writer() as conn:
            raw = conn.connection.dbapi_connection
            tag(conn, "a")
            raise RuntimeError("the operation failed")
    assert raw.pending == []
    assert tags(mysql_db) == []


def test_a_savepoint_rolled_back_undoes_a_pipelined_insert_made_inside_it(
        mysql_db: Database) -> None:
    with mysql_db.writer() as conn:
        tag(conn, "a")
        savepoint = conn.begin_nested()
        tag(conn, "b")
        savepoint.rollback()
        tag(conn, "c")
    assert tags(mysql_db) == ["a", "c"]


def test_a_bulk_insert_is_sent_at_once_after_what_was_waiting(mysql_db: Database) -> None:
    with mysql_db.writer() as conn:
        raw = conn.connection.dbapi_connection
        start = raw.round_trips
        tag(conn, "a")
        store.insert(conn, t.tags, [{"resource_id": "r", "tag": "b"},
                                    {"resource_id": "r", "tag": "c"}], pipelined=True)
        assert raw.pending == [] and raw.round_trips == start + 2
    assert tags(mysql_db) == ["a", "b", "c"]


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_elsewhere_a_statement_sent_ahead_runs_at_once(backend: str, tmp_path: Path) -> None:
    with migrated_database(backend, tmp_path) as url:
        db = Database(url)
        try:
            with db.writer() as conn:
                tag(conn, "a", pipelined=False)
            with db.writer() as conn:
                renamed = take(conn, "a")
                assert conn.execute(sa.select(t.tags.c.tag)).scalars().all() == ["a!"]
                assert renamed.rowcount == 1
        finally:
            db.dispose()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_elsewhere_a_pipelined_insert_fails_where_it_is(backend: str, tmp_path: Path) -> None:
    with migrated_database(backend, tmp_path) as url:
        db = Database(url)
        try:
            with db.writer() as conn:
                tag(conn, "a", pipelined=False)
            with pytest.raises(sa.exc.IntegrityError):
                with db.writer() as conn:
                    tag(conn, "a")
                    pytest.fail("the duplicate was not refused at once")
        finally:
            db.dispose()


# -- the API's creates -----------------------------------------------------------

class RoundTrips:
    """Round trips of the writers' connections while they are checked out."""

    def __init__(self, db: Database) -> None:
        self.total = 0
        self._open: dict[int, int] = {}
        pool = db.engine.pool
        event.listen(pool, "checkout", self._out)
        event.listen(pool, "checkin", self._in)

    def _out(self, dbapi_conn: Any, *args: Any) -> None:
        self._open[id(dbapi_conn)] = dbapi_conn.round_trips

    def _in(self, dbapi_conn: Any, *args: Any) -> None:
        self.total += dbapi_conn.round_trips - self._open.pop(id(dbapi_conn))


HEADERS = {"X-Project-Id": "p", "X-Roles": "admin", "X-User-Id": "u"}
ML2 = ("[ml2]\ntype_drivers = vxlan\ntenant_network_types = vxlan\n"
       "mechanism_drivers = openvswitch\nextension_drivers = port_security\n"
       "[ml2_type_vxlan]\nvni_ranges = 1:100\n")


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[CountingApp]:
    """The API on MariaDB as served: without the suite's check of rows told
    from a create's writes against the database's, which reads them back
    before the COMMIT."""
    monkeypatch.delenv(writes.CHECK_ENV, raising=False)
    monkeypatch.setattr(writes, "checking", False)
    with migrated_database("mariadb", tmp_path) as url:
        app = CountingApp(tmp_path, ML2, url=url)
        try:
            app.api.plugin.initialize()  # the VNI ranges
            yield app
        finally:
            app.api.plugin.db.dispose()


def post(app: CountingApp, plural: str, body: dict[str, Any]) -> dict[str, Any]:
    res = app.client.simulate_post(f"/v2.0/{plural}", json={plural[:-1]: body},
                                   headers=HEADERS)
    assert res.status_code == 201, res.text
    return res.json[plural[:-1]]


def test_a_network_create_sends_its_inserts_with_its_commit(served: CountingApp) -> None:
    post(served, "networks", {"name": "warm"})
    trips = RoundTrips(served.api.plugin.db)
    net = post(served, "networks", {"name": "n"})
    # Its VNI's UPDATE sent ahead with its lookups, then the network's and
    # the segment's INSERTs with the COMMIT.
    assert trips.total == 2
    shown = served.client.simulate_get(f"/v2.0/networks/{net['id']}", headers=HEADERS)
    assert shown.json["network"]["provider:network_type"] == "vxlan"
    assert shown.json["network"]["provider:segmentation_id"] in allocated_vnis(served)


def allocated_vnis(app: CountingApp) -> set[int]:
    table = t.ml2_vxlan_allocations
    with app.api.plugin.db.reader() as conn:
        return set(conn.execute(sa.select(table.c.id).where(table.c.allocated)).scalars())


def test_a_network_that_takes_no_project_segment_sends_none_ahead(served: CountingApp) -> None:
    """A provider network's segment is the one asked for: a project VNI
    taken ahead would stay taken by nobody."""
    made = [post(served, "networks", {"name": "n"})]
    made.append(post(served, "networks", {"provider:network_type": "vxlan",
                                          "provider:segmentation_id": 4242}))
    assert allocated_vnis(served) == {n["provider:segmentation_id"] for n in made}


def test_a_port_create_sends_its_inserts_with_its_commit(served: CountingApp) -> None:
    net = post(served, "networks", {"name": "n"})["id"]
    post(served, "subnets", {"network_id": net, "cidr": "10.0.0.0/24", "ip_version": 4})
    post(served, "ports", {"network_id": net})
    trips = RoundTrips(served.api.plugin.db)
    port = post(served, "ports", {"network_id": net})
    # Its lookups, the network, its subnets, the free addresses; then the
    # port's, its address's, its group's and its binding's INSERTs with the
    # COMMIT.
    assert trips.total == 5
    shown = served.client.simulate_get(f"/v2.0/ports/{port['id']}", headers=HEADERS)
    assert shown.json["port"]["fixed_ips"] == port["fixed_ips"] != []
    assert shown.json["port"]["security_groups"] == port["security_groups"] != []
    assert shown.json["port"]["binding:vif_type"] == "unbound"

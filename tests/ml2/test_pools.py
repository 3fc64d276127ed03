"""Segment pools on every backend: start-up sync, allocation, reservation, release."""
from __future__ import annotations

from typing import Any, Callable

import pytest
import sqlalchemy as sa

from neutrino import errors
from neutrino.db import tables as t
from neutrino.db.engine import Database, RetryRequest
from neutrino.plugins.ml2 import pool as pool_mod
from neutrino.plugins.ml2.driver_api import Segment
from neutrino.plugins.ml2.managers import TypeManager
from tests.sql_events import listen_all, remove_all

pytestmark = pytest.mark.backend


@pytest.fixture
def db(db_url: str) -> Any:
    database = Database(db_url)
    yield database
    database.dispose()


@pytest.fixture
def manager(make_conf: Callable[[str], Any], db: Database) -> Callable[[str], TypeManager]:
    """``manager(ini)`` -> a TypeManager whose pools were synced with ``ini``."""
    def build(text: str) -> TypeManager:
        tm = TypeManager(make_conf(text))
        tm.sync_allocations(db)
        return tm
    return build


def _vlans(db: Database) -> dict[tuple[str, int], bool]:
    with db.reader() as conn:
        rows = conn.execute(sa.select(t.ml2_vlan_allocations)).all()
    return {(r.physical_network, r.vlan_id): r.allocated for r in rows}


def _vnis(db: Database) -> dict[int, bool]:
    with db.reader() as conn:
        return {r.id: r.allocated for r in conn.execute(sa.select(t.ml2_vxlan_allocations))}


def _vlan_conf(ranges: str) -> str:
    return f"[ml2]\ntenant_network_types = vlan\n[ml2_type_vlan]\nnetwork_vlan_ranges = {ranges}\n"


def test_sync_creates_one_free_row_per_id_of_the_ranges(manager, db):
    manager(_vlan_conf("physnet1:1:4094,physnet2:100:102,physnet3"))
    rows = _vlans(db)
    assert len(rows) == 4094 + 3 and not any(rows.values())
    assert ("physnet2", 101) in rows and ("physnet2", 103) not in rows


def test_sync_of_a_large_vni_range_then_shrinking_it(manager, db):
    manager("[ml2_type_vxlan]\nvni_ranges = 1:12000,20000:20009\n")
    assert len(_vnis(db)) == 12010
    manager("[ml2_type_vxlan]\nvni_ranges = 5:9\n")
    assert sorted(_vnis(db)) == [5, 6, 7, 8, 9]


def test_resync_keeps_allocated_rows_and_drops_free_rows_outside(manager, db):
    tm = manager(_vlan_conf("physnet1:1:10,physnet2:1:3"))
    with db.writer() as conn:
        tm.drivers["vlan"].reserve_provider_segment(conn, Segment("vlan", "physnet1", 9))
        tm.drivers["vlan"].reserve_provider_segment(conn, Segment("vlan", "physnet2", 2))
    manager(_vlan_conf("physnet1:1:3,physnet1:20:21"))  # shrunk, added, physnet2 removed
    assert _vlans(db) == {("physnet1", 1): False, ("physnet1", 2): False,
                          ("physnet1", 3): False, ("physnet1", 9): True,
                          ("physnet1", 20): False, ("physnet1", 21): False,
                          ("physnet2", 2): True}


def test_tenant_allocation_hands_out_each_id_once_then_nothing(manager, db):
    tm = manager(_vlan_conf("physnet1:3456:3457"))
    driver = tm.drivers["vlan"]
    with db.writer() as conn:
        got = [driver.allocate_tenant_segment(conn) for _ in range(3)]
    assert sorted(s.segmentation_id for s in got[:2]) == [3456, 3457]
    assert got[2] is None
    assert all(_vlans(db).values())


def test_tenant_types_are_tried_in_order(manager, db):
    tm = manager("[ml2]\ntenant_network_types = vlan,vxlan\n[ml2_type_vlan]\n"
                 "network_vlan_ranges = physnet1:7:7\n[ml2_type_vxlan]\nvni_ranges = 50:50\n")
    with db.writer() as conn:
        first = tm.allocate(conn, {})
        second = tm.allocate(conn, {})
        with pytest.raises(errors.NoNetworkAvailable) as info:
            tm.allocate(conn, {})
    assert first == [Segment("vlan", "physnet1", 7)] and second == [Segment("vxlan", None, 50)]
    assert info.value.code == 503
    assert info.value.msg == ("Unable to create the network. No tenant network is available "
                              "for allocation.")


def test_a_lost_race_asks_for_the_whole_operation_again(manager, db, monkeypatch):
    tm = manager(_vlan_conf("physnet1:1:5"))
    table = t.ml2_vlan_allocations

    def rival_takes_it(conn: Any) -> Callable[[list[Any]], None]:
        def shuffle(candidates: list[Any]) -> None:  # the last one is tried
            conn.execute(sa.update(table).where(table.c.vlan_id == candidates[-1][1])
                         .values(allocated=True))
        return shuffle
    # Only the read of candidates has a race to lose: a taken guess falls
    # back to it, so this test does without the guess.
    monkeypatch.setattr(pool_mod, "_random_in", lambda ranges: None)
    with pytest.raises(RetryRequest):
        with db.writer() as conn:
            monkeypatch.setattr(pool_mod.random, "shuffle", rival_takes_it(conn))
            tm.drivers["vlan"].allocate_tenant_segment(conn)


def test_reserving_an_id_outside_the_ranges_and_releasing_it(manager, db):
    tm = manager(_vlan_conf("physnet1:3456:3457"))
    driver = tm.drivers["vlan"]
    seg = Segment("vlan", "physnet1", 3455)
    with db.writer() as conn:
        assert driver.reserve_provider_segment(conn, seg) == seg
    assert _vlans(db)[("physnet1", 3455)] is True
    with db.writer() as conn:
        with pytest.raises(errors.VlanIdInUse) as info:
            driver.reserve_provider_segment(conn, seg)
    assert info.value.code == 409 and info.value.msg == (
        "Unable to create the network. The VLAN 3455 on physical network physnet1 is in use.")
    with db.writer() as conn:
        driver.release_segment(conn, seg)
    assert ("physnet1", 3455) not in _vlans(db)


def test_releasing_an_id_inside_the_ranges_frees_it(manager, db):
    tm = manager(_vlan_conf("physnet1:3456:3456"))
    driver = tm.drivers["vlan"]
    seg = Segment("vlan", "physnet1", 3456)
    with db.writer() as conn:
        driver.reserve_provider_segment(conn, seg)
        assert driver.allocate_tenant_segment(conn) is None
        driver.release_segment(conn, seg)
        assert driver.allocate_tenant_segment(conn) == seg


def test_partial_vlan_segment_is_taken_from_the_named_physnet(manager, db):
    tm = manager(_vlan_conf("physnet1:10:12,physnet2:20:20"))
    driver = tm.drivers["vlan"]
    with db.writer() as conn:
        got = driver.reserve_provider_segment(conn, Segment("vlan", "physnet2"))
        assert got == Segment("vlan", "physnet2", 20)
        with pytest.raises(errors.NoNetworkAvailable):
            driver.reserve_provider_segment(conn, Segment("vlan", "physnet2"))


def test_tunnel_id_in_use_and_partial_tunnel_segments(manager, db):
    tm = manager("[ml2_type_gre]\ntunnel_id_ranges = 1:1\n")
    driver = tm.drivers["gre"]
    with db.writer() as conn:
        assert driver.reserve_provider_segment(conn, Segment("gre")) == Segment("gre", None, 1)
        assert driver.reserve_provider_segment(conn, Segment("gre", None, 4294967295))
        with pytest.raises(errors.TunnelIdInUse) as info:
            driver.reserve_provider_segment(conn, Segment("gre", None, 1))
        with pytest.raises(errors.NoNetworkAvailable):
            driver.reserve_provider_segment(conn, Segment("gre"))
    assert info.value.msg == "Unable to create the network. The tunnel ID 1 is in use."


def test_a_flat_physnet_serves_one_network_at_a_time(manager, db):
    tm = manager("")
    driver = tm.drivers["flat"]
    seg = Segment("flat", "physnet1")
    with db.writer() as conn:
        driver.reserve_provider_segment(conn, seg)
        with pytest.raises(errors.FlatNetworkInUse) as info:
            driver.reserve_provider_segment(conn, seg)
        driver.release_segment(conn, seg)
        assert driver.reserve_provider_segment(conn, seg) == seg
    assert info.value.msg == ("Unable to create the flat network. Physical network physnet1 "
                              "is in use.")


def _vxlan_conf(ranges: str) -> str:
    return f"[ml2]\ntenant_network_types = vxlan\n[ml2_type_vxlan]\nvni_ranges = {ranges}\n"


def _statements(db: Database, fn: Callable[[Any], Any]) -> tuple[Any, list[str]]:
    seen: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        seen.append(statement)
    listen_all(db, "before_cursor_execute", record)
    try:
        with db.writer() as conn:
            return fn(conn), [s for s in seen if not s.startswith("BEGIN")]
    finally:
        remove_all(db, "before_cursor_execute", record)


def test_a_mostly_free_tunnel_pool_gives_an_id_in_one_statement(manager, db):
    """A random id of the ranges is tried first: the conditional UPDATE that
    takes it is the whole allocation when it was free."""
    driver = manager(_vxlan_conf("1:1000")).drivers["vxlan"]
    got, statements = _statements(db, driver.allocate_tenant_segment)
    assert 1 <= got.segmentation_id <= 1000
    assert len(statements) == 1 and statements[0].startswith("UPDATE"), statements
    assert [vni for vni, taken in _vnis(db).items() if taken] == [got.segmentation_id]


def test_a_taken_guess_falls_back_to_the_free_ids_until_none_is_left(manager, db):
    driver = manager(_vxlan_conf("7:9")).drivers["vxlan"]
    with db.writer() as conn:
        got = [driver.allocate_tenant_segment(conn) for _ in range(4)]
    assert sorted(s.segmentation_id for s in got[:3]) == [7, 8, 9]
    assert got[3] is None


def test_a_mostly_free_vlan_pool_gives_an_id_in_one_statement_on_any_or_the_named_physnet(
        manager, db):
    """Project networks guess in every physnet's ranges, a provider network
    naming a physnet in that physnet's ranges only."""
    driver = manager(_vlan_conf("physnet1:1:1000,physnet2:2001:3000")).drivers["vlan"]
    got, statements = _statements(db, driver.allocate_tenant_segment)
    assert (got.physical_network, got.segmentation_id) in (
        [("physnet1", v) for v in range(1, 1001)] + [("physnet2", v) for v in range(2001, 3001)])
    assert len(statements) == 1 and statements[0].startswith("UPDATE"), statements
    named, statements = _statements(
        db, lambda conn: driver.reserve_provider_segment(conn, Segment("vlan", "physnet2")))
    assert named.physical_network == "physnet2" and 2001 <= named.segmentation_id <= 3000
    assert len(statements) == 1 and statements[0].startswith("UPDATE"), statements
    assert {k for k, taken in _vlans(db).items() if taken} == {
        (got.physical_network, got.segmentation_id), ("physnet2", named.segmentation_id)}


def _take_all_but(db: Database, free: set[int]) -> None:
    table = t.ml2_vxlan_allocations
    with db.writer() as conn:
        conn.execute(sa.update(table).where(table.c.id.not_in(free)).values(allocated=True))


def test_a_nearly_full_pool_reads_its_free_ids_once_then_takes_them_in_one_statement_each(
        manager, db, monkeypatch):
    """After a missed guess the candidates read are remembered: the next
    allocations try them first, each a single conditional UPDATE."""
    driver = manager(_vxlan_conf("1:1000")).drivers["vxlan"]
    free = {100, 200, 300, 400, 500}
    _take_all_but(db, free)
    monkeypatch.setattr(pool_mod, "_random_in", lambda ranges: (None, 1))  # a taken id
    first, statements = _statements(db, driver.allocate_tenant_segment)
    assert [s.split()[0] for s in statements] == ["UPDATE", "SELECT", "UPDATE"], statements
    got = [first.segmentation_id]
    for _ in range(4):
        seg, statements = _statements(db, driver.allocate_tenant_segment)
        assert len(statements) == 1 and statements[0].startswith("UPDATE"), statements
        got.append(seg.segmentation_id)
    assert sorted(got) == sorted(free)
    none, statements = _statements(db, driver.allocate_tenant_segment)
    assert none is None and [s.split()[0] for s in statements] == ["UPDATE", "SELECT"]
    assert all(_vnis(db).values())


def test_remembered_ids_another_server_took_are_dropped_and_the_free_ones_read_again(
        manager, db, monkeypatch):
    driver = manager(_vxlan_conf("1:1000")).drivers["vxlan"]
    _take_all_but(db, {100, 200, 300})
    monkeypatch.setattr(pool_mod, "_random_in", lambda ranges: (None, 1))  # a taken id
    # Candidates are tried lowest first here (the last of the list is next).
    monkeypatch.setattr(pool_mod.random, "shuffle", lambda keys: keys.sort(key=lambda k: -k[1]))
    with db.writer() as conn:
        assert driver.allocate_tenant_segment(conn).segmentation_id == 100
    _take_all_but(db, {300})  # another server takes 200, remembered here
    seg, statements = _statements(db, driver.allocate_tenant_segment)
    assert seg.segmentation_id == 300
    assert [s.split()[0] for s in statements] == ["UPDATE", "UPDATE", "SELECT", "UPDATE"]
    assert all(_vnis(db).values())
    # 300 was remembered too but dropped with 200: nothing is tried twice.
    none, statements = _statements(db, driver.allocate_tenant_segment)
    assert none is None and [s.split()[0] for s in statements] == ["UPDATE", "SELECT"]


# -- a first try sent ahead (db/pipeline.py) -------------------------------------------

def _ahead_then_allocate(driver: Any) -> Callable[[Any], Any]:
    def run(conn: Any) -> Any:
        driver.ahead_tenant_segment(conn)
        return driver.allocate_tenant_segment(conn)
    return run


def test_a_try_sent_ahead_that_got_its_id_is_the_whole_allocation(manager, db):
    driver = manager(_vxlan_conf("1:1000")).drivers["vxlan"]
    got, statements = _statements(db, _ahead_then_allocate(driver))
    assert len(statements) == 1 and statements[0].startswith("UPDATE"), statements
    assert [vni for vni, taken in _vnis(db).items() if taken] == [got.segmentation_id]


def test_a_try_sent_ahead_that_missed_falls_back_to_the_free_ids(manager, db, monkeypatch):
    driver = manager(_vxlan_conf("1:1000")).drivers["vxlan"]
    _take_all_but(db, {500})
    monkeypatch.setattr(pool_mod, "_random_in", lambda ranges: (None, 1))  # a taken id
    got, statements = _statements(db, _ahead_then_allocate(driver))
    assert got.segmentation_id == 500
    assert [s.split()[0] for s in statements] == ["UPDATE", "SELECT", "UPDATE"]
    assert all(_vnis(db).values())


def test_a_try_sent_ahead_that_another_scope_was_asked_for_instead_is_given_back(
        manager, db, monkeypatch):
    pool = manager(_vlan_conf("physnet1:1:10,physnet2:1:10")).drivers["vlan"].pool
    monkeypatch.setattr(pool_mod, "_random_in", lambda ranges: ("physnet1", 5))

    def run(conn: Any) -> Any:
        pool.ahead(conn, guess_in={"physnet1": [(1, 10)]})
        monkeypatch.setattr(pool_mod, "_random_in", lambda ranges: ("physnet2", 7))
        return pool.allocate(conn, "physnet2", guess_in={"physnet2": [(1, 10)]})
    got, _ = _statements(db, run)
    assert got == ("physnet2", 7)
    assert {k for k, taken in _vlans(db).items() if taken} == {("physnet2", 7)}

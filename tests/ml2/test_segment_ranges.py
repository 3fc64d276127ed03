"""Pools that follow the database's segment ranges (``network_segment_range``
loaded), on every backend: default ranges written at start-up, a project's
own ranges first, other projects' ranges never, concurrent allocation unique."""
from __future__ import annotations

import threading
from typing import Any, Callable

import pytest
import sqlalchemy as sa

from neutrino.db import tables as t
from neutrino.db.engine import Database, retrying
from neutrino.plugins import store
from neutrino.plugins.ml2.driver_api import Segment
from neutrino.plugins.ml2.managers import TypeManager
from neutrino.plugins.ml2.segment_ranges import SegmentRanges
from tests.sql_events import listen_all, remove_all

pytestmark = pytest.mark.backend

R = t.network_segment_ranges
CONF = ("[ml2]\ntype_drivers = flat,vlan,vxlan,gre\ntenant_network_types = vxlan\n"
        "[ml2_type_vlan]\nnetwork_vlan_ranges = physnet1:100:104,physnet2\n"
        "[ml2_type_vxlan]\nvni_ranges = 1:20\n")


@pytest.fixture
def db(db_url: str) -> Any:
    database = Database(db_url)
    yield database
    database.dispose()


@pytest.fixture
def manager(make_conf: Callable[[str], Any], db: Database) -> Callable[..., TypeManager]:
    """``manager(ini)`` -> a TypeManager on the database's ranges, started
    (defaults written, pools synced) as the server starts it."""
    def build(text: str = CONF) -> TypeManager:
        tm = TypeManager(make_conf(text))
        tm.use_segment_ranges(SegmentRanges())
        tm.sync_allocations(db)
        return tm
    return build


def _ranges(db: Database) -> list[Any]:
    with db.reader() as conn:
        return list(conn.execute(sa.select(R).order_by(R.c.network_type, R.c.minimum)))


def _add_range(db: Database, tm: TypeManager, network_type: str, lo: int, hi: int,
               project: str | None = None, physnet: str = "") -> str:
    """A range as the API writes it, its pool following in the same transaction."""
    row = store.standard_row(None, {}, revision=0)
    row.update(project_id=project, default=False, shared=project is None,
               network_type=network_type, physical_network=physnet, minimum=lo, maximum=hi)
    with db.writer() as conn:
        conn.execute(sa.insert(R).values(**row))
        tm.segment_ranges_changed(conn, network_type)
    return str(row["id"])


def _vnis(db: Database) -> dict[int, bool]:
    with db.reader() as conn:
        return {r.id: r.allocated for r in conn.execute(sa.select(t.ml2_vxlan_allocations))}


def _allocate(db: Database, tm: TypeManager, project: str | None, n: int) -> list[Any]:
    got = []
    for _ in range(n):
        with db.writer() as conn:
            seg = tm.drivers["vxlan"].allocate_tenant_segment(conn, project)
        got.append(None if seg is None else seg.segmentation_id)
    return got


def test_start_up_writes_the_configured_ranges_as_default_shared_ranges(manager, db):
    manager()
    rows = _ranges(db)
    assert [(r.network_type, r.physical_network, r.minimum, r.maximum) for r in rows] == [
        ("vlan", "physnet1", 100, 104), ("vxlan", "", 1, 20)]
    assert all(r.default and r.shared and r.project_id is None for r in rows)
    assert sorted(_vnis(db)) == list(range(1, 21))


def test_a_restart_keeps_unchanged_defaults_and_replaces_changed_ones(manager, db):
    manager()
    before = {r.network_type: r.id for r in _ranges(db)}
    manager(CONF.replace("vni_ranges = 1:20", "vni_ranges = 5:9"))
    after = _ranges(db)
    assert [(r.network_type, r.minimum, r.maximum) for r in after] == [
        ("vlan", 100, 104), ("vxlan", 5, 9)]
    assert {r.network_type: r.id for r in after}["vlan"] == before["vlan"]
    assert sorted(_vnis(db)) == [5, 6, 7, 8, 9]


def test_a_project_with_its_own_range_gets_segments_from_it_first(manager, db):
    tm = manager()
    _add_range(db, tm, "vxlan", 5, 7, project="p1")
    got = _allocate(db, tm, "p1", 4)
    assert sorted(got[:3]) == [5, 6, 7]
    # Its range used up, the project takes from the shared ranges.
    assert got[3] is not None and not 5 <= got[3] <= 7


def test_other_projects_never_get_segments_from_a_projects_private_range(manager, db):
    tm = manager()
    _add_range(db, tm, "vxlan", 5, 7, project="p1")
    got = _allocate(db, tm, "p2", 18)
    assert sorted(got[:17]) == [i for i in range(1, 21) if not 5 <= i <= 7]
    assert got[17] is None  # 5..7 stay free for p1
    assert sorted(i for i, taken in _vnis(db).items() if not taken) == [5, 6, 7]
    assert sorted(_allocate(db, tm, "p1", 3)) == [5, 6, 7]


def test_a_private_range_outside_the_defaults_grows_the_pool_for_its_project_only(
        manager, db):
    tm = manager()
    _add_range(db, tm, "vxlan", 100, 101, project="p1")
    assert sorted(_vnis(db)) == [*range(1, 21), 100, 101]
    assert sorted(_allocate(db, tm, "p1", 2)) == [100, 101]
    assert all(i <= 20 for i in _allocate(db, tm, "p2", 20))


def test_a_shared_range_outside_the_defaults_serves_every_project(manager, db):
    tm = manager(CONF.replace("vni_ranges = 1:20", "vni_ranges = 1:1"))
    _add_range(db, tm, "vxlan", 50, 51)
    assert sorted(_allocate(db, tm, "p2", 3)) == [1, 50, 51]
    assert _allocate(db, tm, "p3", 1) == [None]


def test_a_released_segment_goes_back_to_its_range_and_removing_the_range_drops_it(
        manager, db):
    tm = manager()
    rid = _add_range(db, tm, "vxlan", 100, 100, project="p1")
    [vni] = _allocate(db, tm, "p1", 1)
    with db.writer() as conn:
        tm.drivers["vxlan"].release_segment(conn, Segment("vxlan", None, vni))
    assert _vnis(db)[100] is False
    with db.writer() as conn:
        conn.execute(sa.delete(R).where(R.c.id == rid))
        tm.segment_ranges_changed(conn, "vxlan")
    assert 100 not in _vnis(db)


def test_a_vlan_network_on_a_named_physnet_takes_its_projects_range_there(manager, db):
    tm = manager()
    _add_range(db, tm, "vlan", 200, 201, project="p1", physnet="physnet2")
    driver = tm.drivers["vlan"]
    with db.writer() as conn:
        mine = {driver.reserve_provider_segment(conn, Segment("vlan", "physnet2"), "p1")
                for _ in range(2)}
    assert mine == {Segment("vlan", "physnet2", 200), Segment("vlan", "physnet2", 201)}
    with db.writer() as conn:
        other = driver.allocate_tenant_segment(conn, "p2")
    assert other is not None and other.physical_network == "physnet1"


def test_a_mostly_free_pool_gives_an_id_in_a_read_of_the_ranges_and_one_update(manager, db):
    """The ranges are cut in Python, the pool asked by primary key: a random
    id of the project's (or the shared) ranges is tried at once."""
    tm = manager(CONF.replace("vni_ranges = 1:20", "vni_ranges = 1:5000"))
    _add_range(db, tm, "vxlan", 6000, 6999, project="p1")
    seen: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        seen.append(statement.split()[0])
    for project, lo, hi in (("p1", 6000, 6999), ("p2", 1, 5000)):
        seen.clear()
        listen_all(db, "before_cursor_execute", record)
        try:
            [vni] = _allocate(db, tm, project, 1)
        finally:
            remove_all(db, "before_cursor_execute", record)
        assert lo <= vni <= hi
        assert [s for s in seen if s != "BEGIN"] == ["SELECT", "UPDATE"], seen


def test_concurrent_allocations_from_a_projects_range_stay_unique(manager, db):
    """Threads on their own connections race for a project's ids and then the
    shared ones: every lost conditional UPDATE reruns its transaction, and
    no id is handed out twice."""
    tm = manager()
    _add_range(db, tm, "vxlan", 5, 10, project="p1")
    got: list[int | None] = []
    lock = threading.Lock()

    @retrying
    def one() -> int | None:
        with db.writer() as conn:
            seg = tm.drivers["vxlan"].allocate_tenant_segment(conn, "p1")
            return None if seg is None else seg.segmentation_id

    def worker() -> None:
        for _ in range(5):
            value = one()
            with lock:
                got.append(value)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert None not in got and len(got) == 20
    assert len(set(got)) == 20
    assert set(range(5, 11)) <= set(got)  # the project's own ids went first
    assert sorted(i for i, taken in _vnis(db).items() if taken) == sorted(got)

"""What a part of a transaction wrote to (``db/writes.py``): the ground a
create's read-back stands on when it skips the other child tables."""
from __future__ import annotations

import pytest
import sqlalchemy as sa

from neutrino.db import tables as t
from neutrino.db import writes
from neutrino.db.engine import Database


def test_inserts_and_updates_inside_the_block_are_recorded_and_nothing_else(
        db_url: str) -> None:
    db = Database(db_url)
    try:
        with db.writer() as conn:
            conn.execute(sa.insert(t.tags).values(resource_id="before", tag="x"))
            with writes.tracked() as written:
                conn.execute(sa.insert(t.tags).values(resource_id="r", tag="a"))
                conn.execute(sa.update(t.quotas).values(hard_limit=1))
                conn.execute(sa.delete(t.dns_nameservers))
                conn.execute(sa.select(t.subnets)).all()
            conn.execute(sa.update(t.subnet_routes).values(nexthop="10.0.0.1"))
        assert written == {t.tags, t.quotas}
    finally:
        db.dispose()


def test_a_plain_insert_leaves_its_rows_with_the_defaults_sqlalchemy_filled(db: Database) -> None:
    with db.writer() as conn, writes.tracked() as written:
        conn.execute(sa.insert(t.tags), [{"resource_id": "r", "tag": "a"},
                                         {"resource_id": "r", "tag": "b"}])
        conn.execute(sa.insert(t.address_scopes), {"id": "s", "project_id": "p",
                                                   "ip_version": 4})
    assert written.rows[t.tags] == [{"resource_id": "r", "tag": "a"},
                                    {"resource_id": "r", "tag": "b"}]
    scope = written.rows[t.address_scopes][0]
    assert scope["id"] == "s" and scope["name"] == t.address_scopes.c.name.default.arg
    assert written.reliable(t.tags) and written.reliable(t.address_scopes)


def test_rows_by_a_column_include_the_rows_put_after_the_first_look(db: Database) -> None:
    with db.writer() as conn, writes.tracked() as written:
        conn.execute(sa.insert(t.tags), {"resource_id": "r", "tag": "a"})
        assert [r["tag"] for r in written.rows_with(t.tags, "resource_id", "r")] == ["a"]
        conn.execute(sa.insert(t.tags), [{"resource_id": "r", "tag": "b"},
                                         {"resource_id": "s", "tag": "c"}])
        assert [r["tag"] for r in written.rows_with(t.tags, "resource_id", "r")] == ["a", "b"]
        assert written.rows_with(t.tags, "resource_id", "none") == []


def test_a_table_changed_otherwise_than_by_a_plain_insert_is_not_told_from_its_rows(
        db: Database) -> None:
    with db.writer() as conn, writes.tracked() as written:
        conn.execute(sa.insert(t.tags), {"resource_id": "r", "tag": "a"})
        conn.execute(sa.update(t.tags).values(tag="b"))
        conn.execute(sa.insert(t.quotas).values(project_id="p", resource="port",
                                                hard_limit=1))
        conn.execute(sa.insert(t.quota_locks), {"project_id": "p", "resource": "port"})
        conn.execute(sa.delete(t.quota_locks))
    assert not written.reliable(t.tags)  # updated after the insert
    assert not written.reliable(t.quotas)  # values given in the statement
    assert not written.reliable(t.quota_locks)  # deleted
    assert written == {t.tags, t.quotas, t.quota_locks}


def test_a_failed_insert_or_a_rolled_back_savepoint_leaves_nothing_to_tell(db: Database) -> None:
    with db.writer() as conn, writes.tracked() as written:
        conn.execute(sa.insert(t.quota_locks), {"project_id": "p", "resource": "port"})
        with pytest.raises(sa.exc.IntegrityError), conn.begin_nested():
            conn.execute(sa.insert(t.quota_locks), {"project_id": "p", "resource": "port"})
        assert not written.reliable(t.quota_locks)  # a statement never finished
    with db.writer() as conn, writes.tracked() as written:
        conn.execute(sa.insert(t.tags), {"resource_id": "s", "tag": "a"})
        with conn.begin_nested() as savepoint:
            conn.execute(sa.insert(t.quota_locks), {"project_id": "q", "resource": "port"})
            savepoint.rollback()
        assert not written.reliable(t.quota_locks)
        assert not written.reliable(t.tags)

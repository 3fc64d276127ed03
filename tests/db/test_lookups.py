"""Single-value reads named together are one round trip (``db/lookups.py``)."""
from __future__ import annotations

from typing import Any, Iterator

import pytest
import sqlalchemy as sa

from neutrino.db import lookups
from neutrino.db import tables as t
from neutrino.db.engine import Database
from neutrino.plugins.qos.policies import DEFAULT_OF
from neutrino.plugins.security_groups import DEFAULT_ID
from neutrino.quota.engine import LIMIT
from tests.sql_events import listen_all

READS = (LIMIT, DEFAULT_OF, DEFAULT_ID)
PARAMS = {"project": "p", "resource": "network"}


def _counting(db: Database) -> list[str]:
    """The statements sent from now on, SQLite's BEGIN left out."""
    seen: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if not statement.startswith("BEGIN"):
            seen.append(statement)
    listen_all(db, "before_cursor_execute", record)
    return seen


@pytest.fixture
def db(db_url: str) -> Iterator[Database]:
    """A database where project p's network limit is 7 and project q's is 3."""
    database = Database(db_url)
    with database.writer() as conn:
        conn.execute(sa.insert(t.quotas), [
            {"project_id": "p", "resource": "network", "hard_limit": 7},
            {"project_id": "q", "resource": "network", "hard_limit": 3}])
    try:
        yield database
    finally:
        database.dispose()


def test_reads_named_together_cost_one_statement_and_give_each_its_own_value(
        db: Database) -> None:
    seen = _counting(db)
    with db.writer() as conn, lookups.together(conn, READS, PARAMS):
        assert lookups.scalar(conn, DEFAULT_ID, {"project": "p"}) is None
        assert lookups.scalar(conn, LIMIT, PARAMS) == 7
        assert lookups.scalar(conn, DEFAULT_OF, {"project": "p"}) is None
    assert len(seen) == 1, seen


def test_a_value_is_served_once_and_read_again_afterwards(db: Database) -> None:
    """A component that changes what it read (the default group it made)
    and reads it again gets the database's answer, not the batch's."""
    seen = _counting(db)
    with db.writer() as conn, lookups.together(conn, READS, PARAMS):
        assert lookups.scalar(conn, LIMIT, PARAMS) == 7
        conn.execute(sa.update(t.quotas).where(t.quotas.c.project_id == "p")
                     .values(hard_limit=9))
        assert lookups.scalar(conn, LIMIT, PARAMS) == 9
    assert len(seen) == 3, seen


def test_reads_with_other_parameters_or_connections_or_outside_go_to_the_database(
        db: Database) -> None:
    seen = _counting(db)
    other = {"project": "q", "resource": "network"}
    with db.writer() as conn, lookups.together(conn, READS, PARAMS):
        assert lookups.scalar(conn, LIMIT, other) == 3  # not the batch's project
        assert len(seen) == 1
        with db.reader() as elsewhere:
            assert lookups.scalar(elsewhere, LIMIT, other) == 3
        assert len(seen) == 2  # another connection: not served from the batch
        assert lookups.scalar(conn, DEFAULT_OF, {"project": "p"}) is None
        assert len(seen) == 3  # the batch, read once for what is left
    with db.writer() as conn:
        assert lookups.scalar(conn, LIMIT, other) == 3
    assert len(seen) == 4

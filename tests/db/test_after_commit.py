"""Work a write transaction hands to ``after_commit`` runs once it is
durable, never for an attempt that rolled back, and cannot fail the write."""
from __future__ import annotations

import logging
from typing import Any

import pytest
import sqlalchemy as sa

from neutrino.db import tables as t
from neutrino.db.engine import Database, RetryRequest, after_commit, retrying


def _tag(conn: Any, tag: str) -> None:
    conn.execute(sa.insert(t.tags).values(resource_id="r", tag=tag))


def _tags(db: Database) -> list[str]:
    with db.reader() as conn:
        return sorted(conn.execute(sa.select(t.tags.c.tag)).scalars())


def test_runs_once_committed_and_sees_the_change(db: Database) -> None:
    seen: list[list[str]] = []
    with db.writer() as conn:
        _tag(conn, "a")
        after_commit(conn, lambda: seen.append(_tags(db)))
        assert seen == []
    assert seen == [["a"]]


def test_a_rolled_back_transaction_runs_none(db: Database) -> None:
    seen: list[str] = []
    with pytest.raises(ValueError):
        with db.writer() as conn:
            _tag(conn, "a")
            after_commit(conn, lambda: seen.append("told"))
            raise ValueError("refused")
    assert seen == [] and _tags(db) == []
    with db.writer() as conn:  # the next transaction on the pool starts with none
        _tag(conn, "b")
    assert seen == []


def test_a_retried_attempt_drops_its_own(db: Database) -> None:
    seen: list[int] = []
    attempts = [0]

    @retrying
    def op() -> None:
        attempts[0] += 1
        with db.writer() as conn:
            _tag(conn, f"t{attempts[0]}")
            after_commit(conn, lambda n=attempts[0]: seen.append(n))
            if attempts[0] == 1:
                raise RetryRequest()
    op()
    assert seen == [2] and _tags(db) == ["t2"]


def test_a_failing_callback_is_logged_and_the_rest_still_run(
        db: Database, caplog: pytest.LogCaptureFixture) -> None:
    seen: list[str] = []

    def fails() -> None:
        raise RuntimeError("agent unreachable")
    with caplog.at_level(logging.ERROR, logger="neutrino.db.engine"):
        with db.writer() as conn:
            _tag(conn, "a")
            after_commit(conn, fails)
            after_commit(conn, lambda: seen.append("second"))
    assert seen == ["second"] and _tags(db) == ["a"]
    assert "agent unreachable" in caplog.text

"""A database that cannot be reached is a 503 ServiceUnavailable, whichever
way a request meets it: no connection to be had, or one lost in use."""
from __future__ import annotations

import pytest
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from neutrino import errors
from neutrino.db.engine import Database, is_retriable, is_unreachable
from tests.conftest import free_port


@pytest.mark.parametrize("scheme", ["postgresql", "mysql"])
def test_no_database_listening_is_service_unavailable(scheme: str) -> None:
    db = Database(f"{scheme}://nobody@127.0.0.1:{free_port()}/neutron")
    try:
        with pytest.raises(errors.ServiceUnavailable) as info:
            with db.writer() as conn:
                conn.execute(sa.text("SELECT 1"))
        assert info.value.code == 503
        with pytest.raises(errors.ServiceUnavailable):
            with db.reader() as conn:
                conn.execute(sa.text("SELECT 1"))
        with pytest.raises(errors.ServiceUnavailable):
            with db.reads_together(), db.reader() as conn:
                conn.execute(sa.text("SELECT 1"))
    finally:
        db.dispose()


def test_a_connection_lost_in_use_is_unreachable_and_retried() -> None:
    lost = sa_exc.OperationalError("SELECT 1", {}, Exception("server closed the connection"),
                                   connection_invalidated=True)
    assert is_unreachable(lost) and is_retriable(lost)
    try:
        raise errors.ServiceUnavailable() from lost
    except errors.ServiceUnavailable as exc:
        assert is_retriable(exc)  # the whole operation is rerun on a new connection


def test_an_exhausted_pool_is_unreachable() -> None:
    assert is_unreachable(sa_exc.TimeoutError("QueuePool limit reached"))


def test_other_database_errors_are_not_unreachable() -> None:
    assert not is_unreachable(sa_exc.OperationalError("SELECT", {}, Exception("deadlock")))
    assert not is_unreachable(sa_exc.IntegrityError("INSERT", {}, Exception("duplicate")))

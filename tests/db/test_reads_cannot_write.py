"""Reads cannot write: a write that strays into ``Database.reader`` fails
and changes nothing, on every backend and MySQL driver. On a server
database reads run in autocommit mode, where such a write would otherwise
commit on the spot."""
from __future__ import annotations

import pytest
import sqlalchemy as sa

from neutrino.db import tables as t
from neutrino.db.engine import Database
from tests.db.rows import network_row


def test_a_write_inside_a_read_is_refused_and_changes_nothing(db: Database) -> None:
    with pytest.raises(sa.exc.DBAPIError, match="(?i)read.only|readonly"):
        with db.reader() as conn:
            conn.execute(sa.insert(t.networks).values(**network_row("stray")))
    with db.reader() as conn:
        assert conn.execute(sa.select(t.networks.c.id)).all() == []


def test_a_write_inside_shared_reads_is_refused_too(db: Database) -> None:
    with db.reads_together():
        with db.reader() as conn:
            conn.execute(sa.select(t.networks.c.id)).all()
            with pytest.raises(sa.exc.DBAPIError, match="(?i)read.only|readonly"):
                conn.execute(sa.update(t.networks).values(name="x"))
    with db.writer() as conn:
        assert conn.execute(sa.select(t.networks.c.id)).all() == []

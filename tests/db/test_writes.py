"""What a part of a transaction wrote to (``db/writes.py``): the ground a
create's read-back stands on when it skips the other child tables."""
from __future__ import annotations

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

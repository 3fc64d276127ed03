"""A transaction that changes a port's own child rows (addresses, pairs, DHCP
options, groups) changes its row too, so its revision advances: the test
suite's servers refuse to commit one that does not (``db/writes.py``), and
a subnet delete advances the revision of the ports that lose an address
(``test_row_memo.py``)."""
from __future__ import annotations

from typing import Iterator

import pytest
import sqlalchemy as sa

from neutrino.db import tables as t
from neutrino.db import writes
from neutrino.db.engine import Database
from neutrino.plugins import ports as ports_module
from tests.db.rows import network_row, port_row


@pytest.fixture
def checked(db_url: str) -> Iterator[Database]:
    db = Database(db_url)
    writes.check_parents(db.engine)
    try:
        yield db
    finally:
        db.dispose()


def test_a_commit_changing_a_ports_own_rows_without_its_row_is_refused(
        checked: Database) -> None:
    assert writes.FOLLOWING[t.allowed_address_pairs] is t.ports  # declared in ports_module
    assert ports_module.CHILDREN
    net, port = network_row("n"), None
    with checked.writer() as conn:
        conn.execute(sa.insert(t.networks).values(**net))
        port = port_row(str(net["id"]))
        conn.execute(sa.insert(t.ports).values(**port))
    with pytest.raises(writes.ParentNotWritten, match="allowed_address_pairs"):
        with checked.writer() as conn:
            conn.execute(sa.insert(t.allowed_address_pairs).values(
                port_id=port["id"], ip_address="10.0.0.1", mac_address="fa:16:3e:00:00:01"))
    with pytest.raises(writes.ParentNotWritten):  # a status is not a revision
        with checked.writer() as conn:
            conn.execute(sa.insert(t.allowed_address_pairs).values(
                port_id=port["id"], ip_address="10.0.0.1", mac_address="fa:16:3e:00:00:01"))
            conn.execute(sa.update(t.ports).where(t.ports.c.id == port["id"])
                         .values(status="ACTIVE"))
    with checked.writer() as conn:
        conn.execute(sa.insert(t.allowed_address_pairs).values(
            port_id=port["id"], ip_address="10.0.0.1", mac_address="fa:16:3e:00:00:01"))
        conn.execute(sa.update(t.ports).where(t.ports.c.id == port["id"])
                     .values(revision_number=t.ports.c.revision_number + 1))
    with checked.reader() as conn:
        assert conn.execute(sa.select(t.ports.c.revision_number)).scalar() == 2
        assert len(conn.execute(sa.select(t.allowed_address_pairs)).all()) == 1

"""A transaction that changes a port's own child rows (addresses, pairs, DHCP
options, groups) changes its row too, so its revision advances: the test
suite's servers refuse to commit one that does not (``db/writes.py``), and
a subnet delete advances the revision of the ports that lose an address
(``test_row_memo.py``)."""
from __future__ import annotations

from typing import Any, Iterator

import pytest
import sqlalchemy as sa

from neutrino.db import tables as t
from neutrino.db import writes
from neutrino.db.engine import Database
from neutrino.plugins import ports as ports_module
from neutrino.plugins.ml2 import ext_port_security, ext_qos, port_binding
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


@pytest.mark.parametrize("joined", [port_binding.JOINED, ext_port_security.PORTS_JOINED,
                                    ext_qos.PORT_POLICY], ids=lambda j: j.table.name)
def test_an_update_of_a_ports_one_to_one_row_without_its_revision_is_refused(
        checked: Database, joined: Any) -> None:
    """The binding, port_security and QoS rows have no revision of their
    own: any UPDATE of one counts as a change of the port's."""
    table = joined.table
    assert writes.FOLLOWING[table] is t.ports and joined.follows_revision
    net = network_row("n")
    port = port_row(str(net["id"]))
    values = {"ml2_port_bindings": {"host": "h", "vif_type": "unbound"},
              "port_port_security": {"port_security_enabled": True},
              "qos_port_policy_bindings": {"policy_id": "q"}}[table.name]
    with checked.writer() as conn:
        conn.execute(sa.insert(t.networks).values(**net))
        if table is t.qos_port_policy_bindings:
            conn.execute(sa.insert(t.qos_policies).values(
                id="q", project_id="p", name="q", created_at=net["created_at"],
                updated_at=net["created_at"]))
        conn.execute(sa.insert(t.ports).values(**port))
        conn.execute(sa.insert(table).values(port_id=port["id"], **values))
    changed = {"ml2_port_bindings": {"host": "other"},
               "port_port_security": {"port_security_enabled": False},
               "qos_port_policy_bindings": {"policy_id": "q"}}[table.name]
    update = sa.update(table).where(table.c.port_id == port["id"]).values(**changed)
    with pytest.raises(writes.ParentNotWritten, match=table.name):
        with checked.writer() as conn:
            conn.execute(update)
    with checked.writer() as conn:
        conn.execute(update)
        conn.execute(sa.update(t.ports).where(t.ports.c.id == port["id"])
                     .values(revision_number=t.ports.c.revision_number + 1))
    with checked.reader() as conn:
        assert conn.execute(sa.select(t.ports.c.revision_number)).scalar() == 2

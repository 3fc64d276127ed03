"""A flavor is in use while a row names it through a foreign key that
neither cascades nor nulls on delete (upstream's foreign keys decide so;
``l3-flavors`` adds routers' ``flavor_id``)."""
from __future__ import annotations

from sqlalchemy import Column, ForeignKey, MetaData, String, Table

from neutrino.db import tables as t
from neutrino.plugins.flavors import restricting_references


def test_only_keys_that_keep_the_row_make_it_in_use() -> None:
    meta = MetaData()
    Table("flavors", meta, Column("id", String(36), primary_key=True))
    users = Table("users", meta, Column("id", String(36), primary_key=True),
                  Column("flavor_id", String(36), ForeignKey("flavors.id")))
    restricted = Table("restricted", meta, Column("id", String(36), primary_key=True),
                       Column("flavor_id", String(36),
                              ForeignKey("flavors.id", ondelete="RESTRICT")))
    Table("bindings", meta, Column("flavor_id", String(36),
                                   ForeignKey("flavors.id", ondelete="CASCADE")))
    Table("loose", meta, Column("flavor_id", String(36),
                                ForeignKey("flavors.id", ondelete="SET NULL")))
    assert set(restricting_references(meta, "flavors")) == {users.c.flavor_id,
                                                            restricted.c.flavor_id}


def test_a_flavors_own_bindings_do_not_keep_it() -> None:
    assert t.flavorserviceprofilebindings.c.flavor_id not in restricting_references(
        t.metadata, "flavors")

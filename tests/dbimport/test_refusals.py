"""What ``db import`` refuses, on a small source made here: something
neutrino cannot carry is listed (and left behind only when told), a
database that is not upstream Neutron's is refused, and nothing is written
to the target when it refuses."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
import sqlalchemy as sa

from neutrino.db import tables
from neutrino.db.upstream import importer
from tests.conftest import create_database

NET = "5e1f0000-0000-4000-8000-000000000001"
CREATED = dt.datetime(2024, 5, 6, 7, 8, 9)


def _source(path: Path, transparent: bool = False, evpn: bool = True,
            url: str | None = None) -> str:
    url = url or f"sqlite:///{path}"
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.exec_driver_sql(
            "CREATE TABLE standardattributes (id INTEGER PRIMARY KEY, resource_type TEXT,"
            " created_at TIMESTAMP, updated_at TIMESTAMP, description TEXT,"
            " revision_number INTEGER)")
        conn.exec_driver_sql(
            "CREATE TABLE networks (project_id TEXT, id TEXT PRIMARY KEY, name TEXT, status TEXT,"
            " admin_state_up BOOLEAN, mtu INTEGER, vlan_transparent BOOLEAN,"
            " standard_attr_id INTEGER, availability_zone_hints TEXT)")
        conn.exec_driver_sql("CREATE TABLE evpn_networks (network_id TEXT, router_id TEXT)")
        conn.execute(sa.text("INSERT INTO standardattributes VALUES (1, 'networks', :c, NULL,"
                             " 'kept', 4)"), {"c": CREATED})
        conn.execute(sa.text("INSERT INTO networks VALUES ('p1', :id, 'n1', 'ACTIVE', true, 1450,"
                             " :t, 1, NULL)"), {"id": NET, "t": transparent})
        if evpn:
            conn.execute(sa.text("INSERT INTO evpn_networks VALUES (:id, 'r')"), {"id": NET})
    engine.dispose()
    return url


def _networks(url: str) -> list[dict]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(sa.select(tables.networks))]
    finally:
        engine.dispose()


def test_a_table_neutrino_has_no_place_for_is_refused_and_nothing_written(tmp_path: Path) -> None:
    target = f"sqlite:///{tmp_path / 'target.sqlite'}"
    with pytest.raises(importer.ImportRefused) as refused:
        importer.run(_source(tmp_path / "src.sqlite"), target)
    assert refused.value.problems == ["table evpn_networks: 1 row(s) neutrino has no place for"]
    assert "--skip-unsupported" in str(refused.value)
    assert not (tmp_path / "target.sqlite").exists()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql", "mariadb"])
def test_skip_unsupported_leaves_it_behind_and_carries_the_rest(tmp_path: Path,
                                                               backend: str) -> None:
    target, drop = create_database(backend, tmp_path)
    try:
        report = importer.run(_source(tmp_path / "src.sqlite"), target, skip_unsupported=True)
        assert report.skipped == ["table evpn_networks: 1 row(s) neutrino has no place for"]
        assert report.copied["networks"] == 1
        assert report.copied["securitygroupdefaultrules"] == 0  # the seeded ones stay
        [net] = _networks(target)
        assert (net["id"], net["project_id"], net["description"], net["revision_number"],
                net["created_at"], net["updated_at"], net["mtu"], net["name"]) == \
            (NET, "p1", "kept", 4, CREATED, CREATED, 1450, "n1")
    finally:
        drop()  # type: ignore[operator]


def test_a_postgresql_source_is_read_in_a_read_only_snapshot(tmp_path: Path) -> None:
    url, drop = create_database("postgresql", tmp_path)
    try:
        source = _source(tmp_path, evpn=False, url=url)
        target = f"sqlite:///{tmp_path / 'target.sqlite'}"
        assert importer.run(source, target).copied["networks"] == 1
        assert [n["id"] for n in _networks(target)] == [NET]
    finally:
        drop()  # type: ignore[operator]


def test_a_separate_service_projects_table_is_refused_even_where_names_match(
        tmp_path: Path) -> None:
    source = _source(tmp_path / "src.sqlite", evpn=False)
    engine = sa.create_engine(source)
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE vpnservices (id TEXT, tenant_id TEXT)")
        conn.exec_driver_sql("INSERT INTO vpnservices VALUES ('v', 'p1')")
    engine.dispose()
    with pytest.raises(importer.ImportRefused) as refused:
        importer.run(source, f"sqlite:///{tmp_path / 'target.sqlite'}")
    assert refused.value.problems == ["table vpnservices: 1 row(s) neutrino has no place for"]


def test_an_attribute_neutrino_does_not_serve_is_refused(tmp_path: Path) -> None:
    source = _source(tmp_path / "src.sqlite", transparent=True, evpn=False)
    with pytest.raises(importer.ImportRefused) as refused:
        importer.run(source, f"sqlite:///{tmp_path / 'target.sqlite'}")
    assert refused.value.problems == [
        "VLAN-transparent networks (networks.vlan_transparent): 1 row(s)"]


def test_a_database_that_is_not_neutrons_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.sqlite"
    engine = sa.create_engine(f"sqlite:///{other}")
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE things (id INTEGER)")
    engine.dispose()
    with pytest.raises(importer.ImportRefused, match="not an upstream Neutron database"):
        importer.run(f"sqlite:///{other}", f"sqlite:///{tmp_path / 'target.sqlite'}")


def test_a_target_with_rows_is_refused(tmp_path: Path) -> None:
    target = f"sqlite:///{tmp_path / 'target.sqlite'}"
    source = _source(tmp_path / "src.sqlite", evpn=False)
    importer.run(source, target)
    with pytest.raises(importer.ImportRefused) as refused:
        importer.run(source, target)
    assert refused.value.problems == ["table networks has rows"]
    assert len(_networks(target)) == 1

"""Alembic migrations against every backend: head, equal to tables.py, idempotent."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from neutrino.db import migrate
from neutrino.db.engine import make_engine
from neutrino.db.tables import metadata

pytestmark = pytest.mark.backend


def _cli_upgrade(tmp_path: Path, url: str) -> subprocess.CompletedProcess[str]:
    conf = tmp_path / "neutron.conf"
    conf.write_text(f"[DEFAULT]\nstate_path = {tmp_path / 'var'}\n"
                    f"[database]\nconnection = {url}\n")
    return subprocess.run([sys.executable, "-m", "neutrino.cmd.main", "db", "upgrade",
                           "--config-file", str(conf)],
                          capture_output=True, text=True, timeout=120)


def _schema_diff(url: str) -> list[object]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            ctx = MigrationContext.configure(conn, opts={"compare_type": True,
                                                         "compare_server_default": True})
            return compare_metadata(ctx, metadata)
    finally:
        engine.dispose()


def _tables(url: str) -> set[str]:
    engine = make_engine(url)
    try:
        return set(sa.inspect(engine).get_table_names())
    finally:
        engine.dispose()


def test_db_upgrade_command_reaches_head(empty_db_url: str, tmp_path: Path) -> None:
    assert migrate.current(empty_db_url) is None
    result = _cli_upgrade(tmp_path, empty_db_url)
    assert result.returncode == 0, result.stderr
    assert migrate.current(empty_db_url) == migrate.head()
    assert set(metadata.tables) <= _tables(empty_db_url)


def test_migrated_schema_equals_tables_module(empty_db_url: str) -> None:
    migrate.upgrade(empty_db_url)
    assert _schema_diff(empty_db_url) == []


def test_upgrading_twice_is_a_no_op(empty_db_url: str, tmp_path: Path) -> None:
    first = _cli_upgrade(tmp_path, empty_db_url)
    assert first.returncode == 0, first.stderr
    tables = _tables(empty_db_url)
    second = _cli_upgrade(tmp_path, empty_db_url)
    assert second.returncode == 0, second.stderr
    assert migrate.current(empty_db_url) == migrate.head()
    assert _tables(empty_db_url) == tables
    assert _schema_diff(empty_db_url) == []


def test_upgrade_keeps_existing_rows(empty_db_url: str) -> None:
    migrate.upgrade(empty_db_url)
    engine = make_engine(empty_db_url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("INSERT INTO tags (resource_id, tag) VALUES ('r1', 'kept')"))
        migrate.upgrade(empty_db_url)
        with engine.connect() as conn:
            assert conn.execute(sa.text("SELECT tag FROM tags")).scalars().all() == ["kept"]
    finally:
        engine.dispose()


def test_the_newest_script_by_name_is_alembics_head() -> None:
    """``serve`` tells a current schema by the newest file name, without
    Alembic: that holds only while the scripts are one chain in name order."""
    assert migrate.newest_script() == migrate.head()


def test_a_schema_is_current_only_at_the_head(empty_db_url: str) -> None:
    assert not migrate.is_current(empty_db_url)  # no alembic_version table yet
    migrate.upgrade(empty_db_url, "0021_l3_ha")
    assert not migrate.is_current(empty_db_url)
    migrate.upgrade(empty_db_url)
    assert migrate.is_current(empty_db_url)


def test_external_networks_table_filled_from_the_external_entries(empty_db_url: str) -> None:
    """The externalnetworks migration: a network was external while it had
    ``access_as_external`` entries; on upgrade exactly those networks (once
    each) have the flag."""
    migrate.upgrade(empty_db_url, "0032_ndp_proxies")
    engine = make_engine(empty_db_url)
    net = ("INSERT INTO networks (id, project_id, name, description, created_at, updated_at, "
           "revision_number, admin_state_up, status, mtu) VALUES "
           "(:id, 'p', '', '', '2026-01-01 00:00:00', '2026-01-01 00:00:00', 0, :up, "
           "'ACTIVE', 1500)")
    entry = ("INSERT INTO networkrbacs (id, project_id, object_id, action, target_tenant) "
             "VALUES (:id, 'p', :net, :action, :target)")
    try:
        with engine.begin() as conn:
            for nid in ("both", "external", "shared", "plain"):
                conn.execute(sa.text(net), {"id": nid, "up": True})
            for i, (nid, action, target) in enumerate((
                    ("both", "access_as_external", "*"), ("both", "access_as_external", "p2"),
                    ("both", "access_as_shared", "*"), ("external", "access_as_external", "p3"),
                    ("shared", "access_as_shared", "*"))):
                conn.execute(sa.text(entry), {"id": f"e{i}", "net": nid, "action": action,
                                              "target": target})
        migrate.upgrade(empty_db_url)
        with engine.connect() as conn:
            flagged = conn.execute(sa.text("SELECT network_id FROM externalnetworks")).scalars()
            assert sorted(flagged) == ["both", "external"]
    finally:
        engine.dispose()

"""The fuzzing suite's table check finds what it is meant to find."""
from __future__ import annotations

import datetime
from pathlib import Path

import sqlalchemy as sa

from neutrino.db import migrate
from neutrino.db import tables as t
from tests.fuzz import consistency


def _database(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'c.sqlite'}"
    migrate.upgrade(url)
    return url


def test_a_clean_database_has_nothing_half_created(tmp_path: Path) -> None:
    url = _database(tmp_path)
    assert consistency.orphans(url) == []
    assert consistency.quota_mismatches(url, lambda project: {}) == []


def test_orphans_and_wrong_usage_are_reported(tmp_path: Path) -> None:
    url = _database(tmp_path)
    now = datetime.datetime(2026, 1, 1)
    engine = sa.create_engine(url)  # no foreign keys enforced: rows may dangle
    with engine.begin() as conn:
        conn.execute(sa.insert(t.ml2_vxlan_allocations).values(id=7, allocated=True))
        conn.execute(sa.insert(t.ml2_vlan_allocations).values(
            physical_network="physnet1", vlan_id=100, allocated=True))
        conn.execute(sa.insert(t.ipallocations).values(
            port_id="gone", ip_address="10.0.0.3", subnet_id="gone", network_id="gone"))
        conn.execute(sa.insert(t.networks).values(
            id="n1", project_id="p1", name="", description="", created_at=now,
            updated_at=now, revision_number=0, admin_state_up=True, status="ACTIVE",
            mtu=1450))
    engine.dispose()
    found = consistency.orphans(url)
    assert "1 IP allocations without their port" in found
    assert "1 VLANs allocated without a segment" in found
    assert "1 vxlan ids allocated without a segment" in found
    usage = {"network": {"used": 2}, "port": {"used": 0}}
    assert consistency.quota_mismatches(url, lambda project: usage) == [
        "project p1: network used 2, 1 rows"]

"""Storage behaviour of the core plugin on every backend (sqlite, postgresql,
mariadb): round trips, constraints the database itself enforces, tags,
revisions, timestamps, booleans and conditional updates."""
from __future__ import annotations

import re
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.ipam import allocator
from neutrino.plugins import store
from neutrino.plugins.ports import Ports
from tests.sql_events import listen_all, remove_all

pytestmark = pytest.mark.backend

ISO_Z = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
ADMIN = Context.admin()
MAC = "fa:16:3e:aa:bb:cc"


def _one(plugin: Any, plural: str, item: dict[str, Any]) -> dict[str, Any]:
    return plugin.create(ADMIN, plural, [item])[0]


@pytest.fixture
def net(plugin: Any) -> dict[str, Any]:
    return _one(plugin, "networks", {"name": "n1", "project_id": "p1"})


@pytest.fixture
def subnet(plugin: Any, net: dict[str, Any]) -> dict[str, Any]:
    return _one(plugin, "subnets", {"network_id": net["id"], "ip_version": 4,
                                    "cidr": "192.168.10.0/24", "project_id": "p1"})


def _list(plugin: Any, plural: str, **filters: Any) -> list[dict[str, Any]]:
    query = store.ListQuery(filters={k.replace("_any", "-any").replace("not_", "not-"): v
                                     for k, v in filters.items()})
    return plugin.list(ADMIN, plural, query)[0]


# -- round trips -------------------------------------------------------------------

def test_network_round_trip(plugin: Any) -> None:
    created = _one(plugin, "networks", {"name": "rt", "project_id": "p1", "mtu": 1400,
                                        "admin_state_up": False, "shared": True})
    shown = plugin.get(ADMIN, "networks", created["id"])
    assert shown == created
    assert (shown["name"], shown["mtu"], shown["admin_state_up"], shown["shared"]) == \
        ("rt", 1400, False, True)
    assert [n["id"] for n in _list(plugin, "networks", name=["rt"])] == [created["id"]]
    updated = plugin.update(ADMIN, "networks", created["id"], {"name": "rt2", "mtu": 1450})
    assert (updated["name"], updated["mtu"]) == ("rt2", 1450)
    assert plugin.get(ADMIN, "networks", created["id"]) == updated
    plugin.delete(ADMIN, "networks", created["id"])
    with pytest.raises(errors.NetworkNotFound):
        plugin.get(ADMIN, "networks", created["id"])
    assert _list(plugin, "networks", name=["rt2"]) == []


def test_subnet_round_trip_keeps_children_in_order(plugin: Any, net: dict[str, Any]) -> None:
    created = _one(plugin, "subnets", {
        "network_id": net["id"], "ip_version": 4, "cidr": "10.1.0.0/24", "name": "s",
        "dns_nameservers": ["10.0.0.9", "10.0.0.3", "10.0.0.7"],
        "host_routes": [{"destination": "10.9.0.0/16", "nexthop": "10.1.0.254"}],
        "allocation_pools": [{"start": "10.1.0.100", "end": "10.1.0.110"},
                             {"start": "10.1.0.10", "end": "10.1.0.20"}],
        "enable_dhcp": False})
    shown = plugin.get(ADMIN, "subnets", created["id"])
    assert shown == created
    assert shown["dns_nameservers"] == ["10.0.0.9", "10.0.0.3", "10.0.0.7"]
    assert shown["gateway_ip"] == "10.1.0.1"
    assert shown["enable_dhcp"] is False
    assert {(p["start"], p["end"]) for p in shown["allocation_pools"]} == {
        ("10.1.0.100", "10.1.0.110"), ("10.1.0.10", "10.1.0.20")}
    assert plugin.get(ADMIN, "networks", net["id"])["subnets"] == [created["id"]]
    updated = plugin.update(ADMIN, "subnets", created["id"],
                            {"name": "s2", "dns_nameservers": ["10.0.0.1"], "enable_dhcp": True})
    assert (updated["name"], updated["dns_nameservers"], updated["enable_dhcp"]) == \
        ("s2", ["10.0.0.1"], True)
    assert [s["id"] for s in _list(plugin, "subnets", network_id=[net["id"]])] == [created["id"]]
    plugin.delete(ADMIN, "subnets", created["id"])
    with pytest.raises(errors.SubnetNotFound):
        plugin.get(ADMIN, "subnets", created["id"])
    assert plugin.get(ADMIN, "networks", net["id"])["subnets"] == []


def test_port_round_trip_allocates_and_releases_addresses(
        plugin: Any, net: dict[str, Any], subnet: dict[str, Any]) -> None:
    created = _one(plugin, "ports", {"network_id": net["id"], "name": "p",
                                     "device_owner": "compute:nova", "device_id": "vm1"})
    assert len(created["fixed_ips"]) == 1
    ip = created["fixed_ips"][0]
    assert ip["subnet_id"] == subnet["id"]
    assert ip["ip_address"].startswith("192.168.10.")
    assert plugin.get(ADMIN, "ports", created["id"]) == created
    assert [p["id"] for p in _list(plugin, "ports", device_id=["vm1"])] == [created["id"]]
    assert [p["id"] for p in _list(plugin, "ports",
                                   fixed_ips=[f"ip_address={ip['ip_address']}"])] == [created["id"]]
    # (allocation is random: the address moved to must not be the one given)
    moved = "192.168.10.77" if ip["ip_address"] != "192.168.10.77" else "192.168.10.78"
    updated = plugin.update(ADMIN, "ports", created["id"], {
        "name": "p2", "admin_state_up": False,
        "fixed_ips": [{"subnet_id": subnet["id"], "ip_address": moved}]})
    assert updated["name"] == "p2" and updated["admin_state_up"] is False
    assert updated["fixed_ips"] == [{"subnet_id": subnet["id"], "ip_address": moved}]
    # The old address is free again; the new one is not.
    other = _one(plugin, "ports", {"network_id": net["id"],
                                   "fixed_ips": [{"ip_address": ip["ip_address"]}]})
    assert other["fixed_ips"][0]["ip_address"] == ip["ip_address"]
    plugin.delete(ADMIN, "ports", created["id"])
    with pytest.raises(errors.PortNotFound):
        plugin.get(ADMIN, "ports", created["id"])
    again = _one(plugin, "ports", {"network_id": net["id"],
                                   "fixed_ips": [{"ip_address": moved}]})
    assert again["fixed_ips"][0]["ip_address"] == moved


def test_bulk_create_is_all_or_nothing(plugin: Any, net: dict[str, Any],
                                       subnet: dict[str, Any]) -> None:
    with pytest.raises(errors.MacAddressInUse):
        plugin.create(ADMIN, "ports", [
            {"network_id": net["id"], "name": "bulk", "mac_address": MAC},
            {"network_id": net["id"], "name": "bulk", "mac_address": MAC}])
    assert _list(plugin, "ports", name=["bulk"]) == []


# -- constraints enforced by the database ---------------------------------------------

def test_same_mac_twice_on_one_network_is_refused(plugin: Any, net: dict[str, Any]) -> None:
    _one(plugin, "ports", {"network_id": net["id"], "mac_address": MAC})
    with pytest.raises(errors.MacAddressInUse):
        _one(plugin, "ports", {"network_id": net["id"], "mac_address": MAC})
    other_net = _one(plugin, "networks", {"name": "n2"})
    assert _one(plugin, "ports", {"network_id": other_net["id"],
                                  "mac_address": MAC})["mac_address"] == MAC


def test_database_refuses_duplicate_mac_when_the_check_is_raced(
        plugin: Any, net: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """The unique key, not the pre-check, is what guarantees a MAC once per network."""
    _one(plugin, "ports", {"network_id": net["id"], "mac_address": MAC})
    monkeypatch.setattr(Ports, "_check_mac", lambda *a, **kw: None)
    with pytest.raises(errors.MacAddressInUse):
        _one(plugin, "ports", {"network_id": net["id"], "mac_address": MAC})
    with pytest.raises(sa_exc.IntegrityError):
        with plugin.db.writer() as conn:
            row = store.standard_row("p1", {})
            row.update(network_id=net["id"], mac_address=MAC, admin_state_up=True,
                       status="DOWN", device_id="", device_owner="")
            conn.execute(sa.insert(t.ports).values(**row))
    assert len(_list(plugin, "ports", network_id=[net["id"]])) == 1


def test_generated_mac_collision_is_retried_with_a_new_mac(
        plugin: Any, net: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    _one(plugin, "ports", {"network_id": net["id"], "mac_address": MAC})
    macs = iter([MAC, MAC, "fa:16:3e:00:00:01"])
    monkeypatch.setattr(allocator, "generate_mac", lambda base: next(macs))
    port = _one(plugin, "ports", {"network_id": net["id"]})
    assert port["mac_address"] == "fa:16:3e:00:00:01"


def test_same_address_twice_in_one_subnet_is_refused(
        plugin: Any, net: dict[str, Any], subnet: dict[str, Any]) -> None:
    ip = [{"subnet_id": subnet["id"], "ip_address": "192.168.10.50"}]
    _one(plugin, "ports", {"network_id": net["id"], "fixed_ips": ip})
    with pytest.raises(errors.IpAddressAlreadyAllocated):
        _one(plugin, "ports", {"network_id": net["id"], "fixed_ips": ip})


def test_database_refuses_duplicate_address_when_the_check_is_raced(
        plugin: Any, net: dict[str, Any], subnet: dict[str, Any],
        monkeypatch: pytest.MonkeyPatch) -> None:
    ip = [{"subnet_id": subnet["id"], "ip_address": "192.168.10.50"}]
    first = _one(plugin, "ports", {"network_id": net["id"], "fixed_ips": ip})
    monkeypatch.setattr(allocator, "check_requested", lambda *a, **kw: None)
    with pytest.raises(errors.IpAddressAlreadyAllocated):
        _one(plugin, "ports", {"network_id": net["id"], "fixed_ips": ip})
    with pytest.raises(sa_exc.IntegrityError):
        with plugin.db.writer() as conn:
            conn.execute(sa.insert(t.ipallocations).values(
                port_id=first["id"], subnet_id=subnet["id"], ip_address="192.168.10.50",
                network_id=net["id"]))
    assert len(_list(plugin, "ports", network_id=[net["id"]])) == 1


def test_automatic_address_collision_is_retried_with_another_address(
        plugin: Any, net: dict[str, Any], subnet: dict[str, Any],
        monkeypatch: pytest.MonkeyPatch) -> None:
    taken = _one(plugin, "ports", {"network_id": net["id"], "fixed_ips": [
        {"subnet_id": subnet["id"], "ip_address": "192.168.10.5"}]})
    real = allocator.pick_address
    picks = iter(["192.168.10.5", "192.168.10.5"])
    monkeypatch.setattr(allocator, "pick_address",
                        lambda conn, s: next(picks, None) or real(conn, s))
    port = _one(plugin, "ports", {"network_id": net["id"]})
    assert port["fixed_ips"][0]["ip_address"] != "192.168.10.5"
    assert taken["fixed_ips"][0]["ip_address"] == "192.168.10.5"


def test_full_subnet_reports_ip_generation_failure(plugin: Any, net: dict[str, Any]) -> None:
    _one(plugin, "subnets", {"network_id": net["id"], "ip_version": 4, "cidr": "10.5.0.0/29"})
    ips = {_one(plugin, "ports", {"network_id": net["id"]})["fixed_ips"][0]["ip_address"]
           for _ in range(5)}
    assert ips == {f"10.5.0.{i}" for i in range(2, 7)}
    with pytest.raises(errors.IpAddressGenerationFailure):
        _one(plugin, "ports", {"network_id": net["id"]})


def test_once_the_windows_are_taken_the_walk_picks_among_the_first_free_ones(
        plugin: Any, net: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """The random tries miss when every window's addresses are taken (here
    windows do not grow); the walk then picks among the first WINDOW free
    ones, in order across pools, IPv6 included."""
    monkeypatch.setattr(allocator, "WINDOW", 4)
    monkeypatch.setattr(allocator, "GROWTH", 1)
    v4 = _one(plugin, "subnets", {"network_id": net["id"], "ip_version": 4,
                                  "cidr": "10.6.0.0/24", "allocation_pools": [
                                      {"start": "10.6.0.10", "end": "10.6.0.15"},
                                      {"start": "10.6.0.100", "end": "10.6.0.110"}]})
    for last in (10, 11, 12, 13, 15):
        _one(plugin, "ports", {"network_id": net["id"], "fixed_ips": [
            {"subnet_id": v4["id"], "ip_address": f"10.6.0.{last}"}]})
    taken = {10, 11, 12, 13, 15}
    for _ in range(4):
        window = [n for n in [*range(10, 16), *range(100, 111)] if n not in taken][:4]
        got = _one(plugin, "ports", {"network_id": net["id"], "fixed_ips": [
            {"subnet_id": v4["id"]}]})["fixed_ips"][0]["ip_address"]
        assert int(got.split(".")[-1]) in window
        taken.add(int(got.split(".")[-1]))
    v6 = _one(plugin, "subnets", {"network_id": net["id"], "ip_version": 6,
                                  "cidr": "2001:db8:6::/64", "allocation_pools": [
                                      {"start": "2001:db8:6::a", "end": "2001:db8:6::f"}]})
    for last in "abcd":
        _one(plugin, "ports", {"network_id": net["id"], "fixed_ips": [
            {"subnet_id": v6["id"], "ip_address": f"2001:db8:6::{last}"}]})
    got = _one(plugin, "ports", {"network_id": net["id"], "fixed_ips": [
        {"subnet_id": v6["id"]}]})["fixed_ips"][0]["ip_address"]
    assert got in {"2001:db8:6::e", "2001:db8:6::f"}


def test_once_the_first_window_is_taken_an_address_comes_from_a_wider_one_without_the_walk(
        plugin: Any, net: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """A subnet whose first WINDOW addresses are taken is tried in a window
    GROWTH times larger: no read of all its allocations."""
    monkeypatch.setattr(allocator, "WINDOW", 4)
    v4 = _one(plugin, "subnets", {"network_id": net["id"], "ip_version": 4,
                                  "cidr": "10.7.0.0/24", "allocation_pools": [
                                      {"start": "10.7.0.10", "end": "10.7.0.15"},
                                      {"start": "10.7.0.100", "end": "10.7.0.150"}]})
    for last in (10, 11, 12, 13):
        _one(plugin, "ports", {"network_id": net["id"], "fixed_ips": [
            {"subnet_id": v4["id"], "ip_address": f"10.7.0.{last}"}]})
    wider = {14, 15, *range(100, 110)}  # the rest of the first 4 * GROWTH addresses
    seen: list[str] = []
    record = lambda conn, cursor, statement, *a: seen.append(" ".join(statement.split()))  # noqa: E731
    listen_all(plugin.db, "before_cursor_execute", record)
    try:
        for _ in range(6):
            got = _one(plugin, "ports", {"network_id": net["id"], "fixed_ips": [
                {"subnet_id": v4["id"]}]})["fixed_ips"][0]["ip_address"]
            assert int(got.split(".")[-1]) in wider
            wider.discard(int(got.split(".")[-1]))
    finally:
        remove_all(plugin.db, "before_cursor_execute", record)
    walks = [s for s in seen if s.startswith("SELECT ipallocations.ip_address")
             and " IN (" not in s]
    assert walks == []
    assert allocator.windows(4 * 4 ** 9) == [4 * 4 ** k for k in range(allocator.WIDEST)]
    assert allocator.windows(3) == [3, 3, 3]


# -- tags, revisions, timestamps, booleans --------------------------------------------

def test_tags_are_stored_filtered_and_replaced(plugin: Any) -> None:
    a = _one(plugin, "networks", {"name": "ta", "tags": ["red", "blue"]})
    b = _one(plugin, "networks", {"name": "tb", "tags": ["red"]})
    assert a["tags"] == ["blue", "red"]
    assert plugin.set_tags(ADMIN, "networks", b["id"], add=["green"]) == ["green", "red"]
    ids = lambda rows: sorted(r["id"] for r in rows)  # noqa: E731
    assert ids(_list(plugin, "networks", tags=["red,blue"])) == [a["id"]]
    assert ids(_list(plugin, "networks", tags_any=["blue,green"])) == ids([a, b])
    assert ids(_list(plugin, "networks", not_tags=["red,green"])) == [a["id"]]
    assert ids(_list(plugin, "networks", not_tags_any=["green"])) == [a["id"]]
    assert plugin.set_tags(ADMIN, "networks", a["id"], replace=["x"]) == ["x"]
    assert plugin.get(ADMIN, "networks", a["id"])["tags"] == ["x"]
    with pytest.raises(errors.TagNotFound):
        plugin.set_tags(ADMIN, "networks", a["id"], remove=["red"])
    assert plugin.set_tags(ADMIN, "networks", a["id"], remove=["x"]) == []
    plugin.delete(ADMIN, "networks", b["id"])
    with plugin.db.reader() as conn:
        assert conn.execute(sa.select(t.tags).where(t.tags.c.resource_id == b["id"])).all() == []


def test_revision_number_increases_with_every_change(plugin: Any, net: dict[str, Any]) -> None:
    rev = net["revision_number"]
    assert rev >= 1
    after_update = plugin.update(ADMIN, "networks", net["id"], {"name": "r"})["revision_number"]
    plugin.set_tags(ADMIN, "networks", net["id"], add=["t"])
    after_tag = plugin.get(ADMIN, "networks", net["id"])["revision_number"]
    _one(plugin, "subnets", {"network_id": net["id"], "ip_version": 4, "cidr": "10.6.0.0/24"})
    after_subnet = plugin.get(ADMIN, "networks", net["id"])["revision_number"]
    assert rev < after_update < after_tag < after_subnet


def test_timestamps_are_iso8601_utc_and_created_at_stays(plugin: Any, net: dict[str, Any],
                                                          subnet: dict[str, Any]) -> None:
    port = _one(plugin, "ports", {"network_id": net["id"]})
    for res in (net, subnet, port):
        assert ISO_Z.match(res["created_at"]), res["created_at"]
        assert ISO_Z.match(res["updated_at"]), res["updated_at"]
        assert res["updated_at"] >= res["created_at"]
    updated = plugin.update(ADMIN, "ports", port["id"], {"name": "later"})
    assert updated["created_at"] == port["created_at"]
    assert updated["updated_at"] >= port["updated_at"]
    listed = _list(plugin, "ports", created_at=[port["created_at"]])
    assert port["id"] in [p["id"] for p in listed]


def test_booleans_come_back_as_booleans(plugin: Any) -> None:
    """MariaDB stores BOOLEAN as TINYINT; the API must still see True/False."""
    net = _one(plugin, "networks", {"shared": True, "admin_state_up": False})
    sub = _one(plugin, "subnets", {"network_id": net["id"], "ip_version": 4,
                                   "cidr": "10.7.0.0/24", "enable_dhcp": False})
    port = _one(plugin, "ports", {"network_id": net["id"], "admin_state_up": True})
    pool = _one(plugin, "subnetpools", {"prefixes": ["10.8.0.0/16"], "shared": False,
                                        "is_default": True})
    for value in (net["shared"], net["admin_state_up"], sub["enable_dhcp"],
                  port["admin_state_up"], pool["shared"], pool["is_default"]):
        assert type(value) is bool
    listed = _list(plugin, "networks", shared=[True])
    assert [n["id"] for n in listed] == [net["id"]]
    assert type(listed[0]["shared"]) is bool


# -- conditional updates ---------------------------------------------------------------

def test_update_with_matching_revision_succeeds(plugin: Any, net: dict[str, Any],
                                                subnet: dict[str, Any]) -> None:
    port = _one(plugin, "ports", {"network_id": net["id"]})
    for plural, res in (("networks", plugin.get(ADMIN, "networks", net["id"])),
                        ("subnets", subnet), ("ports", port)):
        out = plugin.update(ADMIN, plural, res["id"], {"name": "ok"},
                            revision=res["revision_number"])
        assert out["name"] == "ok"
        assert out["revision_number"] > res["revision_number"]


def test_update_with_stale_revision_is_refused_and_changes_nothing(
        plugin: Any, net: dict[str, Any], subnet: dict[str, Any]) -> None:
    port = _one(plugin, "ports", {"network_id": net["id"], "name": "orig"})
    stale = port["revision_number"]
    plugin.update(ADMIN, "ports", port["id"], {"name": "newer"})
    with pytest.raises(errors.RevisionNumberConstraintFailed):
        plugin.update(ADMIN, "ports", port["id"], {"name": "lost"}, revision=stale)
    with pytest.raises(errors.RevisionNumberConstraintFailed):
        plugin.update(ADMIN, "networks", net["id"], {"name": "lost"},
                      revision=net["revision_number"] + 10)
    with pytest.raises(errors.RevisionNumberConstraintFailed):
        plugin.delete(ADMIN, "ports", port["id"], revision=stale)
    assert plugin.get(ADMIN, "ports", port["id"])["name"] == "newer"
    assert plugin.get(ADMIN, "networks", net["id"])["name"] == net["name"]

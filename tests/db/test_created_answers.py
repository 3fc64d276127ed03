"""A create answers with its new resource told from the rows its
transaction put, where those rows tell all of it, instead of reading it
back (``store.get_row`` under ``store.fresh``); where they cannot (a read of
older rows, a table changed otherwise), it reads it back as before. The
suite's check (``writes.checking``) compares every told row with the
database's on every server the tests start."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from neutrino.db import tables as t
from neutrino.db import writes
from neutrino.plugins import ports as ports_mod
from neutrino.plugins import store
from neutrino.plugins.joined import Aggregated, Computed, Joined
from neutrino.plugins.ml2 import segments_db
from neutrino.plugins.networks import _GRANTS, _SUBNETS
from tests.inprocess import CountingApp

ADMIN = {"X-Project-Id": "p", "X-Roles": "admin"}
CONF = ("[DEFAULT]\nservice_plugins = qos,segments\n"
        "[ml2]\nextension_drivers = port_security,qos\n")


def _post(app: CountingApp, path: str, body: dict[str, Any]) -> dict[str, Any]:
    res = app.client.simulate_post(path, json=body, headers=ADMIN)
    assert res.status_code == 201, res.text
    return next(iter(res.json.values()))


def _reads_of(statements: list[str], table: str) -> list[str]:
    return [s for s in statements
            if s.lstrip().upper().startswith("SELECT") and f"FROM {table} " in s + " "]


def test_a_network_create_answers_without_reading_the_network_back(
        db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = CountingApp(tmp_path, CONF, url=db_url)
    monkeypatch.setattr(writes, "checking", False)  # the check would read it
    try:
        policy = _post(app, "/v2.0/qos/policies", {"policy": {"name": "q"}})["id"]
        for body in ({"name": "plain ☃"},
                     {"name": "n", "description": "d", "qos_policy_id": policy,
                      "port_security_enabled": False, "admin_state_up": False}):
            statements, made = app.recorded("/v2.0/networks", ADMIN, "POST", {"network": body})
            assert _reads_of(statements, "networks") == [], statements
            shown = app.client.simulate_get(f"/v2.0/networks/{made['network']['id']}",
                                            headers=ADMIN).json
            assert made == shown
    finally:
        app.api.plugin.db.dispose()


def test_a_subnet_create_answers_without_reading_the_subnet_back(
        db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its network's ``router:external`` comes with the create's first read
    (the quota's, ``db/lookups.py``); its pools, numbered by the database,
    in the order they were given."""
    app = CountingApp(tmp_path, CONF, url=db_url)
    monkeypatch.setattr(writes, "checking", False)  # the check would read it
    try:
        for external in (False, True):
            net = _post(app, "/v2.0/networks", {"network": {"router:external": external}})
            body = {"network_id": net["id"], "ip_version": 4, "cidr": "10.30.0.0/24",
                    "allocation_pools": [{"start": "10.30.0.100", "end": "10.30.0.120"},
                                         {"start": "10.30.0.10", "end": "10.30.0.20"}],
                    "dns_nameservers": ["192.0.2.2", "192.0.2.1"], "tags": ["b", "a"]}
            statements, made = app.recorded("/v2.0/subnets", ADMIN, "POST", {"subnet": body})
            assert _reads_of(statements, "subnets") == [
                s for s in statements if "subnets.network_id =" in s], statements
            subnet = made["subnet"]
            assert subnet["router:external"] is external
            assert [p["start"] for p in subnet["allocation_pools"]] == [
                "10.30.0.100", "10.30.0.10"]
            shown = app.client.simulate_get(f"/v2.0/subnets/{subnet['id']}",
                                            headers=ADMIN).json
            assert made == shown
    finally:
        app.api.plugin.db.dispose()


def test_a_port_create_answers_from_its_rows_and_its_network_s_read(
        db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A port shows its network's QoS policy, a row older than the port:
    the create read it with the network, in the same transaction, and
    tells it from that read."""
    app = CountingApp(tmp_path, CONF, url=db_url)
    monkeypatch.setattr(writes, "checking", False)  # the check would read it
    try:
        policy = _post(app, "/v2.0/qos/policies", {"policy": {"name": "q"}})["id"]
        for net_body in ({"name": "plain"}, {"name": "qos", "qos_policy_id": policy}):
            net = _post(app, "/v2.0/networks", {"network": net_body})
            statements, made = app.recorded("/v2.0/ports", ADMIN, "POST", {"port": {
                "network_id": net["id"], "name": "p", "tags": ["t"]}})
            assert _reads_of(statements, "ports") == [], statements
            assert made["port"]["qos_network_policy_id"] == net_body.get("qos_policy_id")
            shown = app.client.simulate_get(f"/v2.0/ports/{made['port']['id']}",
                                            headers=ADMIN).json
            assert made == shown
    finally:
        app.api.plugin.db.dispose()


@pytest.mark.parametrize("body", [
    {"name": "tagged", "tags": ["b", "a"]},
    {"name": "shared", "shared": True},
    {"name": "external", "router:external": True},
    {"name": "vlan", "provider:network_type": "vlan", "provider:physical_network": "physnet1",
     "provider:segmentation_id": 7},
    {"name": "two", "segments": [{"provider:network_type": "vxlan"},
                                 {"provider:network_type": "vlan",
                                  "provider:physical_network": "physnet1"}]},
])
def test_what_a_create_answers_is_what_a_show_then_gives(
        db_url: str, tmp_path: Path, body: dict[str, Any]) -> None:
    """On every backend and driver: the told row's values are of the types
    the database's read gives (the suite's check compares them too)."""
    app = CountingApp(tmp_path, CONF + "[ml2_type_vlan]\nnetwork_vlan_ranges = physnet1:1:9\n"
                          "[ml2_type_vxlan]\nvni_ranges = 1:9\n", url=db_url)
    try:
        app.api.plugin.initialize()  # the segment pools
        made = _post(app, "/v2.0/networks", {"network": body})
        shown = app.client.simulate_get(f"/v2.0/networks/{made['id']}", headers=ADMIN).json
        assert {"network": made} == shown
        port = _post(app, "/v2.0/ports", {"port": {"network_id": made["id"], "tags": ["t"]}})
        assert {"port": port} == app.client.simulate_get(f"/v2.0/ports/{port['id']}",
                                                         headers=ADMIN).json
    finally:
        app.api.plugin.db.dispose()


def test_the_check_fails_when_a_told_row_is_not_the_database_s(
        db: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(writes, "checking", True)
    with pytest.raises(AssertionError, match="name told 'told', held 'held'"), \
            db.writer() as conn:
        with writes.tracked() as written:
            row = store.standard_row("p", {"name": "held"}) | {
                "admin_state_up": True, "status": "ACTIVE", "mtu": 1500}
            store.insert(conn, t.networks, row)
        written.rows[t.networks][0]["name"] = "told"
        with store.fresh({row["id"]}, written):
            store.get_row(conn, t.networks, row["id"], AssertionError)


def _written(table: Any, *rows: dict[str, Any]) -> writes.Written:
    written = writes.Written()
    written.add(table)
    written.rows[table] = [dict(r) for r in rows]
    return written


def test_an_aggregate_is_told_by_its_rows_that_meet_its_conditions() -> None:
    seg = {"id": "s", "network_type": "vlan", "physical_network": "p", "segment_index": 1,
           "is_dynamic": False, "network_id": "n", "segmentation_id": 5}
    written = _written(t.network_segments, seg, seg | {"id": "d", "is_dynamic": True},
                       seg | {"id": "o", "network_id": "other"},
                       seg | {"id": "z", "segment_index": 0, "network_type": "vxlan"})
    [text] = segments_db.STATIC.fresh_values({"id": "n"}, written)
    assert segments_db.STATIC.decode(text) == [["n", "vxlan", "p", 5], ["n", "vlan", "p", 5]]
    assert segments_db.STATIC.fresh_values({"id": "none"}, written) == [None]
    assert segments_db.STATIC.fresh_values({"id": "n"}, writes.Written()) == [None]


def test_reads_that_need_older_rows_are_left_to_the_database() -> None:
    subnet = {"id": "s", "network_id": "n", "ip_version": 4, "subnetpool_id": None}
    # A subnet's pool is an older row.
    assert _SUBNETS.fresh_values({"id": "n"}, _written(t.subnets, subnet)) is None
    # A one-to-one row keyed by another column (a port's network's) may be
    # older: known only when this transaction read it and did not write it.
    by_network = Joined(t.qos_network_policy_bindings, "network_id", ("policy_id",),
                        lambda item, value: None, parent_column="network_id")
    port = {"id": "p", "network_id": "n"}
    assert by_network.fresh_values(port, writes.Written()) is None
    seen = writes.Written()
    seen.seen[(t.qos_network_policy_bindings, "network_id", "n")] = ("q",)
    assert by_network.fresh_values(port, seen) == ["n", "q"]
    seen.add(t.qos_network_policy_bindings)
    assert by_network.fresh_values(port, seen) is None
    # A computed value says what it is for a new resource, else it is read.
    assert Computed("c", lambda p: p.c.id).fresh_values({"id": "n"}, writes.Written()) is None
    adjacent = Computed("c", lambda p: p.c.id, fresh=((t.subnets,), True))
    assert adjacent.fresh_values({"id": "n"}, writes.Written()) == [True]
    assert adjacent.fresh_values({"id": "n"}, _written(t.subnets, subnet)) is None
    # Conditions on constants are evaluated: a network's sharing entries.
    grants = _written(t.networkrbacs, *({"id": a, "object_id": "n", "action": a,
                                         "target_tenant": "*", "project_id": "p"}
                                        for a in ("access_as_shared", "something_else")))
    [text] = _GRANTS.fresh_values({"id": "n"}, grants)
    assert _GRANTS.decode(text) == [["n", "access_as_shared", "*"]]
    # Rows in no declared order come in the database's.
    ips = _written(t.ipallocations, {"port_id": "p", "subnet_id": "a", "ip_address": "1"},
                   {"port_id": "p", "subnet_id": "b", "ip_address": "2"})
    ports_ips = next(j for j in ports_mod.CHILDREN if j.table is t.ipallocations)
    assert ports_ips.fresh_values({"id": "p"}, ips) is None
    ips.rows[t.ipallocations].pop()
    assert ports_ips.fresh_values({"id": "p"}, ips) is not None
    # A table changed otherwise than by plain inserts.
    written = _written(t.tags, {"resource_id": "n", "tag": "a"})
    written._unsure.add(t.tags)
    assert store.TAGS.fresh_values({"id": "n"}, written) is None
    assert isinstance(store.TAGS, Aggregated)


def test_each_item_of_a_bulk_create_is_told_from_its_own_rows(db_url: str,
                                                              tmp_path: Path) -> None:
    app = CountingApp(tmp_path, CONF, url=db_url)
    try:
        res = app.client.simulate_post("/v2.0/networks", headers=ADMIN, json={"networks": [
            {"name": f"n{i}", "tags": [f"t{i}"], "port_security_enabled": i % 2 == 0}
            for i in range(4)]})
        assert res.status_code == 201, res.text
        for i, made in enumerate(res.json["networks"]):
            assert (made["name"], made["tags"], made["port_security_enabled"]) == (
                f"n{i}", [f"t{i}"], i % 2 == 0)
            assert {"network": made} == app.client.simulate_get(
                f"/v2.0/networks/{made['id']}", headers=ADMIN).json
    finally:
        app.api.plugin.db.dispose()

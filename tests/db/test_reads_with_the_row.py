"""A port shown alone comes from one SELECT (its child tables as JSON
aggregates, its one-to-one tables and its trunk's id joined; a trunk's
parent reads the rest of its trunk in one more) and equals the same port
read in a page (one batch query per child table), on every backend and
MySQL driver."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.inprocess import CountingApp

ADMIN = {"X-Project-Id": "p", "X-Roles": "admin,service"}  # service: binding:profile
CHILD_TABLES = ("tags", "ipallocations", "allowed_address_pairs", "extra_dhcp_opts",
                "securitygroupportbindings", "ml2_port_bindings", "port_port_security",
                "qos_port_policy_bindings", "qos_network_policy_bindings", "trunks")


def _post(app: CountingApp, path: str, body: dict[str, Any]) -> dict[str, Any]:
    res = app.client.simulate_post(path, json=body, headers=ADMIN)
    assert res.status_code == 201, res.text
    return next(iter(res.json.values()))


def _get(app: CountingApp, path: str) -> tuple[dict[str, Any], list[str]]:
    statements, body = app.recorded(path, ADMIN)
    return body, statements


def test_a_port_shown_alone_is_one_select_and_equals_its_listing(
        db_url: str, tmp_path: Path) -> None:
    app = CountingApp(tmp_path, "[DEFAULT]\nservice_plugins = qos,trunk\n"
                                "[ml2]\nextension_drivers = port_security,qos\n", url=db_url)
    try:
        policy = _post(app, "/v2.0/qos/policies", {"policy": {"name": "q"}})["id"]
        net = _post(app, "/v2.0/networks", {"network": {"name": "n", "qos_policy_id": policy}})
        _post(app, "/v2.0/subnets", {"subnet": {"network_id": net["id"], "ip_version": 4,
                                                "cidr": "10.9.0.0/24"}})
        groups = sorted(_post(app, "/v2.0/security-groups",
                              {"security_group": {"name": f"g{i}"}})["id"] for i in range(3))
        port = _post(app, "/v2.0/ports", {"port": {
            "network_id": net["id"], "name": "émoji ☃", "tags": ["b", "A", "ß", "c"],
            "fixed_ips": [{"ip_address": "10.9.0.30"}, {"ip_address": "10.9.0.4"}],
            "allowed_address_pairs": [{"ip_address": "10.1.0.0/24"},
                                      {"ip_address": "10.2.0.1", "mac_address": "fa:16:3e:00:00:01"}],
            "extra_dhcp_opts": [{"opt_name": "tftp-server", "opt_value": "10.0.0.1"},
                                {"opt_name": "bootfile-name", "opt_value": "pxe \"x\"",
                                 "ip_version": 4}],
            "security_groups": list(reversed(groups)),
            "binding:host_id": "h", "binding:profile": {"k": [1, "v"]}}})

        shown, statements = _get(app, f"/v2.0/ports/{port['id']}")
        listed, _ = _get(app, f"/v2.0/ports?id={port['id']}")
        shown = shown["port"]
        assert shown == listed["ports"][0]
        assert shown["tags"] == ["A", "b", "c", "ß"]
        assert [ip["ip_address"] for ip in shown["fixed_ips"]] == ["10.9.0.4", "10.9.0.30"]
        assert sorted(p["ip_address"] for p in shown["allowed_address_pairs"]) == \
            ["10.1.0.0/24", "10.2.0.1"]
        assert sorted((o["opt_name"], o["opt_value"]) for o in shown["extra_dhcp_opts"]) == \
            [("bootfile-name", 'pxe "x"'), ("tftp-server", "10.0.0.1")]
        assert shown["security_groups"] == groups
        assert shown["binding:profile"] == {"k": [1, "v"]}
        assert shown["qos_network_policy_id"] == policy and shown["name"] == "émoji ☃"
        separate = [s for s in statements
                    if any(f"FROM {table} " in s or s.endswith(f"FROM {table}")
                           for table in CHILD_TABLES)
                    and not s.lstrip().startswith("SELECT ports.")]
        assert separate == []
        # A port's trunk is probed by a join, not planned as a subquery.
        [select] = [s for s in statements if s.lstrip().startswith("SELECT ports.")]
        assert "trunks AS trunks_probe" in select and "FROM trunks" not in select

        parent, *subports = [_post(app, "/v2.0/ports", {"port": {"network_id": net["id"]}})
                             for _ in range(3)]
        trunk = _post(app, "/v2.0/trunks", {"trunk": {"port_id": parent["id"], "sub_ports": [
            {"port_id": s["id"], "segmentation_type": "vlan", "segmentation_id": 10 + i}
            for i, s in enumerate(subports)]}})
        shown, statements = _get(app, f"/v2.0/ports/{parent['id']}")
        listed, _ = _get(app, f"/v2.0/ports?id={parent['id']}")
        assert shown["port"] == listed["ports"][0]
        assert shown["port"]["trunk_details"] == {"trunk_id": trunk["id"], "sub_ports": sorted(
            ({"port_id": s["id"], "segmentation_type": "vlan", "segmentation_id": 10 + i,
              "mac_address": s["mac_address"]} for i, s in enumerate(subports)),
            key=lambda s: s["port_id"])}
        # Only a trunk's parent reads its trunk, in one statement more.
        assert len([s for s in statements if "FROM trunks" in s
                    and not s.lstrip().startswith("SELECT ports.")]) == 1

        bare = _post(app, "/v2.0/ports", {"port": {"network_id": net["id"],
                                                   "fixed_ips": [], "security_groups": []}})
        shown, _ = _get(app, f"/v2.0/ports/{bare['id']}")
        listed, _ = _get(app, f"/v2.0/ports?id={bare['id']}")
        assert shown["port"] == listed["ports"][0]
        assert (shown["port"]["tags"], shown["port"]["fixed_ips"],
                shown["port"]["security_groups"], shown["port"]["extra_dhcp_opts"]) == \
            ([], [], [], [])
        assert "trunk_details" not in shown["port"]
        # a trunk without subports
        _post(app, "/v2.0/trunks", {"trunk": {"port_id": bare["id"]}})
        shown, _ = _get(app, f"/v2.0/ports/{bare['id']}")
        listed, _ = _get(app, f"/v2.0/ports?id={bare['id']}")
        assert shown["port"] == listed["ports"][0]
        assert shown["port"]["trunk_details"]["sub_ports"] == []
    finally:
        app.api.plugin.db.dispose()


def test_mysql_sessions_do_not_cut_the_json_aggregates_at_1_mb(db_url: str) -> None:
    from neutrino.db.engine import MYSQL_AGGREGATE_MAX, make_engine
    engine = make_engine(db_url)
    if engine.dialect.name != "mysql":
        engine.dispose()
        return
    try:
        with engine.connect() as conn:
            length = conn.exec_driver_sql("SELECT @@SESSION.group_concat_max_len").scalar()
        assert int(length) == MYSQL_AGGREGATE_MAX
    finally:
        engine.dispose()


def test_a_network_shown_alone_reads_its_tags_and_subnets_with_its_row(
        db_url: str, tmp_path: Path) -> None:
    app = CountingApp(tmp_path, "[ml2]\nextension_drivers = port_security\n", url=db_url)
    try:
        net = _post(app, "/v2.0/networks", {"network": {"name": "n", "tags": ["z", "B", "k"]}})
        subnets = [_post(app, "/v2.0/subnets", {"subnet": {
            "network_id": net["id"], "ip_version": 4, "cidr": f"10.{i}.0.0/24"}})["id"]
            for i in range(3)]
        shown, statements = _get(app, f"/v2.0/networks/{net['id']}")
        listed, _ = _get(app, f"/v2.0/networks?id={net['id']}")
        assert shown["network"] == listed["networks"][0]
        assert shown["network"]["tags"] == ["B", "k", "z"]
        assert sorted(shown["network"]["subnets"]) == sorted(subnets)
        separate = [s for s in statements if "FROM tags" in s or "SELECT subnets.id" in s]
        separate = [s for s in separate if not s.lstrip().startswith("SELECT networks.")]
        assert separate == []
    finally:
        app.api.plugin.db.dispose()


def test_a_network_reads_its_segments_and_address_scopes_with_its_row(
        db_url: str, tmp_path: Path) -> None:
    """Segments in the order given (multi-provider) and the scope of each IP
    version's subnets come in the network's own SELECT, as in its listing."""
    app = CountingApp(tmp_path, "[ml2]\ntype_drivers = flat,vxlan\n"
                                "tenant_network_types = vxlan\nextension_drivers = port_security\n"
                                "[ml2_type_flat]\nflat_networks = *\n"
                                "[ml2_type_vxlan]\nvni_ranges = 1:100\n", url=db_url)
    try:
        scope = _post(app, "/v2.0/address-scopes", {"address_scope": {
            "name": "s", "ip_version": 4}})["id"]
        pool = _post(app, "/v2.0/subnetpools", {"subnetpool": {
            "name": "p", "prefixes": ["10.80.0.0/16"], "default_prefixlen": 24,
            "address_scope_id": scope}})["id"]
        given = [{"provider:network_type": "vxlan", "provider:segmentation_id": 77,
                  "provider:physical_network": None},
                 {"provider:network_type": "flat", "provider:physical_network": "ph",
                  "provider:segmentation_id": None}]
        net = _post(app, "/v2.0/networks", {"network": {"name": "n", "segments": given}})
        _post(app, "/v2.0/subnets", {"subnet": {"network_id": net["id"], "ip_version": 4,
                                                "subnetpool_id": pool}})
        _post(app, "/v2.0/subnets", {"subnet": {"network_id": net["id"], "ip_version": 6,
                                                "cidr": "fd00:9::/64"}})
        shown, statements = _get(app, f"/v2.0/networks/{net['id']}")
        listed, _ = _get(app, f"/v2.0/networks?id={net['id']}")
        assert shown["network"] == listed["networks"][0]
        assert shown["network"]["segments"] == given
        assert (shown["network"]["ipv4_address_scope"], shown["network"]["ipv6_address_scope"]) \
            == (scope, None)
        separate = [s for s in statements if not s.lstrip().startswith("SELECT networks.")
                    and ("FROM network_segments" in s or "subnetpools" in s)]
        assert separate == []
    finally:
        app.api.plugin.db.dispose()


def test_a_subnet_shown_alone_is_one_select_and_equals_its_listing(
        db_url: str, tmp_path: Path) -> None:
    app = CountingApp(tmp_path, "[ml2]\nextension_drivers = port_security\n", url=db_url)
    try:
        net = _post(app, "/v2.0/networks", {"network": {"name": "n", "router:external": True}})
        subnet = _post(app, "/v2.0/subnets", {"subnet": {
            "network_id": net["id"], "ip_version": 4, "cidr": "10.7.0.0/24",
            "tags": ["z", "a"], "dns_nameservers": ["9.9.9.9", "1.1.1.1", "8.8.8.8"],
            "allocation_pools": [{"start": "10.7.0.100", "end": "10.7.0.120"},
                                 {"start": "10.7.0.10", "end": "10.7.0.20"}],
            "host_routes": [{"destination": "10.8.0.0/16", "nexthop": "10.7.0.5"},
                            {"destination": "10.9.0.0/16", "nexthop": "10.7.0.6"}]}})
        bare = _post(app, "/v2.0/subnets", {"subnet": {
            "network_id": _post(app, "/v2.0/networks", {"network": {"name": "m"}})["id"],
            "ip_version": 6, "cidr": "fd00:7::/64", "allocation_pools": []}})
        for made in (subnet, bare):
            shown, statements = _get(app, f"/v2.0/subnets/{made['id']}")
            listed, _ = _get(app, f"/v2.0/subnets?id={made['id']}")
            assert shown["subnet"] == listed["subnets"][0] == made
            separate = [s for s in statements if not s.lstrip().startswith("SELECT subnets.")
                        and any(f"FROM {table}" in s for table in (
                            "tags", "allocation_pools", "dns_nameservers", "subnet_routes",
                            "networkrbacs"))]
            assert separate == []
        shown = subnet
        assert shown["router:external"] is True and bare["router:external"] is False
        assert shown["dns_nameservers"] == ["9.9.9.9", "1.1.1.1", "8.8.8.8"]
        assert shown["tags"] == ["a", "z"] and bare["allocation_pools"] == []
        assert sorted(p["start"] for p in shown["allocation_pools"]) == ["10.7.0.10", "10.7.0.100"]
        assert len(shown["host_routes"]) == 2
    finally:
        app.api.plugin.db.dispose()


def test_a_networks_sharing_read_with_its_row_is_what_its_listing_shows_each_caller(
        db_url: str, tmp_path: Path) -> None:
    """``shared`` and ``router:external`` come from RBAC entries read in the
    network's own SELECT; each caller sees what its listing shows it."""
    app = CountingApp(tmp_path, "[ml2]\nextension_drivers = port_security\n", url=db_url)
    owner = {"X-Project-Id": "0" * 32, "X-Roles": "member"}
    friend = {"X-Project-Id": "1" * 32, "X-Roles": "member"}
    stranger = {"X-Project-Id": "2" * 32, "X-Roles": "member"}
    try:
        net = app.client.simulate_post("/v2.0/networks", json={"network": {"name": "n"}},
                                       headers=owner).json["network"]["id"]
        _post(app, "/v2.0/rbac-policies", {"rbac_policy": {
            "object_type": "network", "object_id": net, "action": "access_as_shared",
            "target_tenant": friend["X-Project-Id"]}})
        _post(app, "/v2.0/rbac-policies", {"rbac_policy": {
            "object_type": "network", "object_id": net, "action": "access_as_external",
            "target_tenant": "*"}})
        seen = {}
        for name, headers in (("owner", owner), ("friend", friend), ("stranger", stranger),
                              ("admin", ADMIN)):
            statements, shown = app.recorded(f"/v2.0/networks/{net}", headers)
            _, listed = app.recorded(f"/v2.0/networks?id={net}", headers)
            assert shown["network"] == listed["networks"][0], name
            assert not [s for s in statements if "rbacs" in s.split("WHERE")[0]], name
            seen[name] = (shown["network"]["shared"], shown["network"]["router:external"])
        assert seen == {"owner": (False, True), "friend": (True, True),
                        "stranger": (False, True), "admin": (False, True)}
    finally:
        app.api.plugin.db.dispose()


def test_a_qos_policys_sharing_and_default_read_with_its_row_are_what_its_listing_shows(
        db_url: str, tmp_path: Path) -> None:
    """``shared`` and ``is_default`` come from the policy's own SELECT (an
    aggregate of its RBAC entries, an EXISTS on the defaults); each caller
    sees what its listing shows it."""
    app = CountingApp(tmp_path, "[DEFAULT]\nservice_plugins = qos\n", url=db_url)
    owner = {"X-Project-Id": "0" * 32, "X-Roles": "member"}
    friend = {"X-Project-Id": "1" * 32, "X-Roles": "member"}
    try:
        made = app.client.simulate_post("/v2.0/qos/policies", headers={**ADMIN, **{
            "X-Project-Id": owner["X-Project-Id"]}}, json={"policy": {"name": "q",
                                                                    "is_default": True,
                                                                    "tags": ["b", "a"]}})
        assert made.status_code == 201, made.text
        policy = made.json["policy"]["id"]
        _post(app, "/v2.0/rbac-policies", {"rbac_policy": {
            "object_type": "qos_policy", "object_id": policy, "action": "access_as_shared",
            "target_tenant": friend["X-Project-Id"]}})
        seen = {}
        for name, headers in (("owner", owner), ("friend", friend), ("admin", ADMIN)):
            shown = app.recorded(f"/v2.0/qos/policies/{policy}", headers)[1]["policy"]
            listed = app.recorded(f"/v2.0/qos/policies?id={policy}", headers)[1]["policies"]
            assert shown == listed[0], name
            seen[name] = (shown["shared"], shown["is_default"])
            assert shown["tags"] == ["a", "b"], name
        assert seen == {"owner": (False, True), "friend": (True, False), "admin": (False, True)}
    finally:
        app.api.plugin.db.dispose()


def _made(app: CountingApp, plural: str, body: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """A create's answer, and the SELECT that read the new resource back."""
    statements, made = app.recorded(f"/v2.0/{plural}", ADMIN, "POST", body)
    prefix = f"SELECT {plural}.id, {plural}.project_id, {plural}.name, "
    (read_back,) = [" ".join(s.split()) for s in statements if s.lstrip().startswith(prefix)]
    return next(iter(made.values())), read_back


def test_a_create_reads_back_only_the_child_tables_it_wrote_and_answers_as_a_show(
        db_url: str, tmp_path: Path) -> None:
    """A new resource's child rows can only be the create's own, so its
    answer skips the tables the create wrote nothing to (``db/writes.py``)
    and still equals the resource shown afterwards."""
    app = CountingApp(tmp_path, "[DEFAULT]\nservice_plugins = qos,trunk\n"
                                "[ml2]\nextension_drivers = port_security,qos\n", url=db_url)
    try:
        cases = [
            ("networks", {"network": {"name": "plain"}}, (), ("tags", "networkrbacs")),
            ("networks", {"network": {"name": "t", "tags": ["b", "a"], "shared": True}},
             ("tags", "networkrbacs"), ()),
        ]
        net = _post(app, "/v2.0/networks", {"network": {"name": "n"}})["id"]
        cases += [
            ("subnets", {"subnet": {"network_id": net, "ip_version": 4, "cidr": "10.7.0.0/24"}},
             (), ("dns_nameservers", "subnet_routes")),
            ("subnets", {"subnet": {"network_id": net, "ip_version": 4, "cidr": "10.8.0.0/24",
                                    "dns_nameservers": ["10.0.0.2", "10.0.0.1"],
                                    "host_routes": [{"destination": "10.9.0.0/24",
                                                     "nexthop": "10.8.0.9"}]}},
             ("dns_nameservers", "subnet_routes"), ()),
            ("ports", {"port": {"network_id": net}},
             ("ipallocations", "securitygroupportbindings"),
             ("tags", "allowed_address_pairs", "extra_dhcp_opts", "trunks")),
            ("ports", {"port": {"network_id": net, "tags": ["x"],
                                "allowed_address_pairs": [{"ip_address": "10.1.0.0/24"}],
                                "extra_dhcp_opts": [{"opt_name": "tftp-server",
                                                     "opt_value": "10.0.0.1"}]}},
             ("tags", "allowed_address_pairs", "extra_dhcp_opts"), ("trunks",)),
        ]
        for plural, body, read, skipped in cases:
            made, read_back = _made(app, plural, body)
            shown, _ = _get(app, f"/v2.0/{plural}/{made['id']}")
            assert made == next(iter(shown.values())), (plural, body)
            for table in read:
                assert f"FROM {table} " in read_back, (table, read_back)
            for table in skipped:
                assert f"FROM {table} " not in read_back, (table, read_back)
                assert f"NULL AS {table}__rows" in read_back, (table, read_back)
    finally:
        app.api.plugin.db.dispose()


def test_only_a_table_with_one_row_per_parent_can_be_probed() -> None:
    """A probe joins the table to the parent's row: a key with several rows
    per parent would repeat the parent."""
    from neutrino.db import tables as t
    from neutrino.plugins.joined import Aggregated
    with pytest.raises(ValueError):
        Aggregated(t.ipallocations, "port_id", ("ip_address",), probed=True)
    assert Aggregated(t.trunks, "port_id", ("id",), probed=True).probed

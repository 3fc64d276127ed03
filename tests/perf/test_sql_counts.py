"""SQL statements per request stay bounded as the data grows (no N+1)."""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from tests.inprocess import CountingApp
from tests.sql_events import listen_all


class App(CountingApp):
    def __init__(self, tmp: Path) -> None:
        super().__init__(tmp, "[ml2]\nextension_drivers = port_security\n")


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    yield App(tmp_path_factory.mktemp("counts"))


def _network_with_ports(app: CountingApp, ports: int, subnets: int = 1) -> str:
    net = app.client.simulate_post("/v2.0/networks", json={"network": {"name": "n"}}).json
    net_id = net["network"]["id"]
    for i in range(subnets):
        app.client.simulate_post("/v2.0/subnets", json={"subnet": {
            "network_id": net_id, "ip_version": 4, "cidr": f"10.{i}.0.0/16"}})
    for start in range(0, ports, 100):
        batch = [{"network_id": net_id, "tags": ["t"]} for _ in range(min(100, ports - start))]
        app.client.simulate_post("/v2.0/ports", json={"ports": batch})
    return net_id


@pytest.mark.parametrize("path", ["ports", "networks", "subnets"])
def test_listing_costs_the_same_statements_for_10_or_300_rows(app: App, path: str) -> None:
    small = _network_with_ports(app, 10)
    big = _network_with_ports(app, 300)
    query = {"ports": "network_id={}", "networks": "id={}", "subnets": "network_id={}"}[path]
    few, body_small = app.counted("GET", f"/v2.0/{path}?" + query.format(small))
    many, body_big = app.counted("GET", f"/v2.0/{path}?" + query.format(big))
    assert len(body_big[path]) >= len(body_small[path])
    assert many == few


def test_member_listing_of_many_networks_subnets_is_bounded(app: App) -> None:
    headers = {"X-Project-Id": "counter", "X-Roles": "member"}
    for i in range(30):
        net = app.client.simulate_post("/v2.0/networks", json={"network": {"name": f"m{i}"}},
                                       headers=headers).json["network"]["id"]
        app.client.simulate_post("/v2.0/subnets", headers=headers, json={"subnet": {
            "network_id": net, "ip_version": 4, "cidr": "10.9.0.0/24"}})
    count, body = app.counted("GET", "/v2.0/subnets", headers=headers)
    assert len(body["subnets"]) == 30
    assert count <= 12


def test_show_port_is_a_handful_of_statements(app: App) -> None:
    net = _network_with_ports(app, 1)
    port = app.client.simulate_get(f"/v2.0/ports?network_id={net}").json["ports"][0]["id"]
    count, _ = app.counted("GET", f"/v2.0/ports/{port}")
    assert count <= 2  # BEGIN and the port with all its tables; an admin's rules need no network


def test_a_member_showing_a_port_adds_one_read_of_its_network(app: App) -> None:
    headers = {"X-Project-Id": "shower", "X-Roles": "member"}
    net = app.client.simulate_post("/v2.0/networks", json={"network": {"name": "n"}},
                                   headers=headers).json["network"]["id"]
    port = app.client.simulate_post("/v2.0/ports", json={"port": {"network_id": net}},
                                    headers=headers).json["port"]["id"]
    admin, _ = app.counted("GET", f"/v2.0/ports/{port}")
    member, body = app.counted("GET", f"/v2.0/ports/{port}", headers=headers)
    assert body["port"]["id"] == port
    assert member == admin + 1  # the network, read in the request's one read transaction


@pytest.mark.parametrize("method", ["PUT", "DELETE"])
def test_only_callers_whose_rules_read_the_network_have_it_read_to_change_a_port(
        app: App, method: str) -> None:
    """An admin's ``update_port``/``delete_port`` hold whatever the network;
    a member's rules read its owner, so the member's request reads it once."""
    headers = {"X-Project-Id": "changer", "X-Roles": "member"}
    net = app.client.simulate_post("/v2.0/networks", json={"network": {"name": "n"}},
                                   headers=headers).json["network"]["id"]
    ports = [app.client.simulate_post("/v2.0/ports", json={"port": {"network_id": net}},
                                      headers=headers).json["port"]["id"] for _ in range(2)]
    body = {"port": {"name": "x"}} if method == "PUT" else None
    admin, _ = app.counted(method, f"/v2.0/ports/{ports[0]}", json=body)
    member, _ = app.counted(method, f"/v2.0/ports/{ports[1]}", json=body, headers=headers)
    assert member == admin + 1  # the network's owner and sharing, for the member's rules
    gone = app.client.simulate_get(f"/v2.0/ports/{ports[1]}")
    assert gone.status_code == (404 if method == "DELETE" else 200)
    if method == "PUT":
        assert gone.json["port"]["name"] == "x"


def test_port_create_is_a_bounded_number_of_statements(app: App) -> None:
    net = _network_with_ports(app, 0)
    count, _ = app.counted("POST", "/v2.0/ports", json={"port": {"network_id": net}})
    assert count <= 13  # includes the port's default security group; no savepoints


@pytest.mark.parametrize("plural,body,looked_up", [
    ("networks", {"network": {"name": "n"}},
     ("quotas", "qos_policy_defaults", "default_security_group")),
    ("ports", {"port": {"name": "p"}}, ("quotas", "default_security_group")),
])
def test_a_create_reads_its_projects_limit_and_defaults_in_one_statement(
        tmp_path: Path, plural: str, body: dict[str, dict[str, str]],
        looked_up: tuple[str, ...]) -> None:
    """The quota engine's, the QoS driver's and the security groups
    driver's single-value reads by project are one round trip
    (``db/lookups.py``), whichever component asks first. (The project's
    first create also makes its default group, whose rules' limit is a
    read of its own: that one is made before.)"""
    app = CountingApp(tmp_path, "[DEFAULT]\nservice_plugins = qos\n"
                                "[ml2]\nextension_drivers = port_security,qos\n")
    member = {"X-Project-Id": "looked-up", "X-Roles": "member"}
    net = app.client.simulate_post("/v2.0/networks", headers=member,
                                   json={"network": {"name": "first"}}).json["network"]
    if plural == "ports":
        body["port"]["network_id"] = net["id"]
    statements, made = app.recorded(f"/v2.0/{plural}", member, "POST", body)
    assert made[plural[:-1]]["project_id"] == "looked-up"
    reading = [s for s in statements if any(f"FROM {table}" in s for table in looked_up)]
    assert len(reading) == 1, statements
    assert all(f"FROM {table}" in reading[0] for table in looked_up), reading


def test_a_new_port_inherits_from_its_network_what_came_with_the_networks_row(
        tmp_path: Path) -> None:
    """Port security and the QoS policy a port inherits are read with its
    network's row, and its subnets with their pools: no read of their own."""
    app = CountingApp(tmp_path, "[DEFAULT]\nservice_plugins = qos\n"
                                "[ml2]\nextension_drivers = port_security,qos\n")
    admin = {"X-Roles": "admin", "X-Project-Id": "p"}
    policy = app.client.simulate_post("/v2.0/qos/policies", json={"policy": {"name": "q"}},
                                      headers=admin).json["policy"]["id"]
    net = app.client.simulate_post("/v2.0/networks", headers=admin, json={"network": {
        "name": "n", "port_security_enabled": False, "qos_policy_id": policy}}).json["network"]
    app.client.simulate_post("/v2.0/subnets", headers=admin, json={"subnet": {
        "network_id": net["id"], "ip_version": 4, "cidr": "10.0.0.0/24"}})
    statements, body = app.recorded("/v2.0/ports", admin, "POST",
                                    {"port": {"network_id": net["id"]}})
    port = body["port"]
    assert port["port_security_enabled"] is False and port["security_groups"] == []
    assert port["qos_network_policy_id"] == policy and len(port["fixed_ips"]) == 1
    read_from = [s.rsplit("FROM", 1)[1].split()[0] for s in statements
                    if s.startswith("SELECT")]
    for table in ("network_port_security", "qos_network_policy_bindings", "allocation_pools"):
        assert table not in read_from, statements


def test_a_page_after_a_marker_costs_one_lookup_more_than_the_first(app: App) -> None:
    """The marker's sort values ride along in the list's own lookup: one
    primary-key read, not a whole show of the marker resource."""
    net = _network_with_ports(app, 30)
    first_count, first = app.counted("GET", f"/v2.0/ports?network_id={net}&limit=10")
    marker = first["ports"][-1]["id"]
    count, page = app.counted("GET", f"/v2.0/ports?network_id={net}&limit=10&marker={marker}")
    assert [p["id"] > marker for p in page["ports"]] == [True] * 10
    assert count == first_count + 1


def test_a_whole_list_of_ports_is_a_fixed_handful_of_statements(app: App) -> None:
    """Every child table and extension attribute in one statement each, for
    an admin (no network lookups: the admin's policy needs none)."""
    net = _network_with_ports(app, 120)
    count, body = app.counted("GET", f"/v2.0/ports?network_id={net}",
                              headers={"X-Roles": "admin", "X-Project-Id": "p"})
    assert len(body["ports"]) == 120
    assert count <= 9


def test_with_every_port_extension_600_ports_cost_the_statements_of_60(
        tmp_path: Path) -> None:
    """Past one IN list's worth of ids (500) the child reads, trunk_details
    included, go through the page's own query instead of one per chunk."""
    full = CountingApp(tmp_path, "[DEFAULT]\nservice_plugins = router,qos,segments,trunk,"
                                 "port_forwarding\n[ml2]\nextension_drivers = port_security,qos\n")
    admin = {"X-Roles": "admin", "X-Project-Id": "p"}
    small, large = _network_with_ports(full, 60), _network_with_ports(full, 600)
    few, body = full.counted("GET", f"/v2.0/ports?network_id={small}", headers=admin)
    many, body = full.counted("GET", f"/v2.0/ports?network_id={large}", headers=admin)
    assert len(body["ports"]) == 600
    assert many == few


def test_a_member_listing_adds_one_lookup_of_the_networks(app: App) -> None:
    """A member's rules read the network's owner: one read of the networks
    of the whole page (in a transaction of its own), not one per port."""
    headers = {"X-Project-Id": "lister", "X-Roles": "member"}
    net = app.client.simulate_post("/v2.0/networks", json={"network": {"name": "n"}},
                                   headers=headers).json["network"]["id"]
    app.client.simulate_post("/v2.0/ports", headers=headers,
                             json={"ports": [{"network_id": net} for _ in range(60)]})
    admin = {"X-Roles": "admin", "X-Project-Id": "p"}
    admin_count, _ = app.counted("GET", f"/v2.0/ports?network_id={net}", headers=admin)
    count, body = app.counted("GET", f"/v2.0/ports?network_id={net}", headers=headers)
    assert len(body["ports"]) == 60
    assert count <= admin_count + 2


def test_creating_a_bound_port_is_a_bounded_number_of_statements(
        tmp_path: Path) -> None:
    """Binding inside the create: no unbind of levels and blocks a new port
    cannot have, no sweep of dynamic segments nobody allocated, the binding
    and its segments not read twice."""
    from neutrino.plugins.ml2 import agents_db
    app = CountingApp(tmp_path, "[ml2]\nextension_drivers = port_security\n"
                                "mechanism_drivers = openvswitch\n")
    with app.api.plugin.db.writer() as conn:
        agents_db.report(conn, agents_db.AGENT_TYPE_OVS, "neutron-openvswitch-agent",
                         "counted-host", "N/A", {"bridge_mappings": {},
                                                 "tunnel_types": ["vxlan"]})
    net = _network_with_ports(app, 0)  # type: ignore[arg-type]
    count, body = app.counted("POST", "/v2.0/ports", json={"port": {
        "network_id": net, "binding:host_id": "counted-host", "device_owner": "compute:nova"}})
    assert body["port"]["binding:vif_type"] == "ovs", body
    assert count <= 26  # 61 before these savings


def test_a_request_reads_in_one_transaction_whatever_the_api_extensions(
        tmp_path: Path) -> None:
    """Each transaction (on a server database, each read connection) costs
    a checkout, and a write's a COMMIT: the lookup of a show, a list, or an
    update's original shares one with the API extensions' reads
    (trunk_details, l2_adjacency) and the policy target's network."""
    app = CountingApp(tmp_path, "[DEFAULT]\nservice_plugins = trunk,segments\n")
    begins: list[object] = []
    listen_all(app.api.plugin.db, "begin", begins.append)

    def transactions(method: str, path: str, **kw: object) -> int:
        begins.clear()
        app.counted(method, path, **kw)
        return len(begins)
    member = {"X-Project-Id": "reader", "X-Roles": "member"}
    net = app.client.simulate_post("/v2.0/networks", json={"network": {"name": "n"}},
                                   headers=member).json["network"]["id"]
    port = app.client.simulate_post("/v2.0/ports", json={"port": {"network_id": net}},
                                    headers=member).json["port"]["id"]
    for headers in ({}, member):
        assert transactions("GET", f"/v2.0/ports/{port}", headers=headers) == 1
        assert transactions("GET", "/v2.0/ports", headers=headers) == 1
        assert transactions("GET", f"/v2.0/networks/{net}", headers=headers) == 1
        # the lookup and the write, which reads the updated port with its
        # trunk_details and l2_adjacency (no third for the API extensions)
        assert transactions("PUT", f"/v2.0/ports/{port}", headers=headers,
                            json={"port": {"name": "x"}}) == 2
        assert transactions("PUT", f"/v2.0/networks/{net}", headers=headers,
                            json={"network": {"name": "x"}}) == 2


def test_renaming_a_port_checks_neither_port_security_nor_its_groups(app: App) -> None:
    """Only turning port security off, or setting groups or address pairs,
    can break what the port_security and security-group drivers guard."""
    net = _network_with_ports(app, 1)
    port = app.client.simulate_get(f"/v2.0/ports?network_id={net}").json["ports"][0]["id"]
    count, body = app.counted("PUT", f"/v2.0/ports/{port}", json={"port": {"name": "x"}})
    assert body["port"]["name"] == "x"
    # BEGIN, the policy's read; BEGIN, the original, the lock, the UPDATE,
    # the default group, the result: the drivers learn the port's owner and
    # binding from the original (11 when each read them again)
    assert count <= 9


def test_deleting_an_unbound_port_leaves_its_binding_rows_to_the_cascade(app: App) -> None:
    net = _network_with_ports(app, 1)
    port = app.client.simulate_get(f"/v2.0/ports?network_id={net}").json["ports"][0]["id"]
    count, _ = app.counted("DELETE", f"/v2.0/ports/{port}")
    assert count <= 10


def test_a_network_reads_its_sharing_and_external_entries_in_one_query(app: App) -> None:
    # the project's first network also makes its default security group
    app.counted("POST", "/v2.0/networks", json={"network": {"name": "first"}})
    created, body = app.counted("POST", "/v2.0/networks", json={"network": {"name": "y"}})
    shown, _ = app.counted("GET", f"/v2.0/networks/{body['network']['id']}")
    # BEGIN and the network with its tags, subnets, their scopes, its
    # segments and its RBAC entries (presented for the caller)
    assert created <= 10 and shown <= 2


def test_a_subnet_is_read_in_one_select_on_every_path(app: App) -> None:
    """Its pools, DNS servers, routes, tags and its network's being external
    come with its row: a show is BEGIN and one SELECT, and the writes that
    answer with the subnet pay that once. A create reads the network's other
    subnets once for its overlap, pool and segment rules, and writes its
    pools, DNS servers and routes without first deleting what it cannot have."""
    net = app.client.simulate_post("/v2.0/networks", json={"network": {"name": "s"}}).json
    made, body = app.counted("POST", "/v2.0/subnets", json={"subnet": {
        "network_id": net["network"]["id"], "ip_version": 4, "cidr": "10.5.0.0/24",
        "dns_nameservers": ["1.1.1.1"], "host_routes": [
            {"destination": "10.6.0.0/16", "nexthop": "10.5.0.9"}]}})
    sid = body["subnet"]["id"]
    shown, _ = app.counted("GET", f"/v2.0/subnets/{sid}")
    renamed, _ = app.counted("PUT", f"/v2.0/subnets/{sid}", json={"subnet": {"name": "r"}})
    deleted, _ = app.counted("DELETE", f"/v2.0/subnets/{sid}")
    assert shown <= 2 and made <= 12 and renamed <= 10 and deleted <= 12


@pytest.mark.parametrize("plural,body", [
    ("networks", {"network": {"name": "n"}}),
    ("security-groups", {"security_group": {"name": "g"}}),
    ("address-scopes", {"address_scope": {"name": "s", "ip_version": 4}}),
    ("address-groups", {"address_group": {"name": "a", "addresses": ["10.0.0.0/24"]}}),
    ("subnetpools", {"subnetpool": {"name": "p", "prefixes": ["10.9.0.0/16"],
                                    "default_prefixlen": 24}}),
])
def test_a_shown_resource_reads_its_rbac_entries_with_its_row(app: App, plural: str,
                                                                body: dict[str, object]) -> None:
    """``shared`` is presented for the caller only, from the entries read
    in the resource's own SELECT: no read of an RBAC table of its own."""
    member = {"X-Project-Id": "sharing", "X-Roles": "member"}
    made = app.client.simulate_post(f"/v2.0/{plural}", json=body, headers=member)
    assert made.status_code == 201, made.text
    rid = next(iter(made.json.values()))["id"]
    statements, shown = app.recorded(f"/v2.0/{plural}/{rid}", member)
    assert next(iter(shown.values())).get("shared", False) is False
    # The one statement naming an RBAC table is the resource's own SELECT:
    # its outer FROM (the last) is the resource's table.
    reading = [s for s in statements if "rbacs" in s]
    assert len(reading) == 1, statements
    assert "rbacs" not in reading[0].rsplit("FROM", 1)[1].split()[0], reading


def test_a_shown_qos_policy_reads_its_sharing_and_default_with_its_row(tmp_path: Path) -> None:
    """``shared`` and ``is_default`` are the caller's, from what the
    policy's own SELECT read: no read of the RBAC or defaults table of its
    own."""
    app = CountingApp(tmp_path, "[DEFAULT]\nservice_plugins = qos\n")
    admin = {"X-Project-Id": "qos-owner", "X-Roles": "admin"}  # QoS policies are admins'
    owner = {"X-Project-Id": "qos-owner", "X-Roles": "member"}
    made = app.client.simulate_post("/v2.0/qos/policies", headers=admin,
                                    json={"policy": {"name": "q", "is_default": True}})
    assert made.status_code == 201, made.text
    rid = made.json["policy"]["id"]
    statements, shown = app.recorded(f"/v2.0/qos/policies/{rid}", owner)
    assert shown["policy"]["is_default"] is True and shown["policy"]["shared"] is False
    reading = [s for s in statements if "qospolicyrbacs" in s or "qos_policy_defaults" in s]
    assert len(reading) == 1, statements
    assert reading[0].rsplit("FROM", 1)[1].split()[0] == "qos_policies", reading
    elsewhere = {"X-Project-Id": "other", "X-Roles": "admin"}
    other = {"X-Project-Id": "other", "X-Roles": "member"}
    assert app.recorded(f"/v2.0/qos/policies/{rid}", elsewhere)[1]["policy"]["is_default"] is True
    shared = app.client.simulate_put(f"/v2.0/qos/policies/{rid}", headers=admin,
                                     json={"policy": {"shared": True}})
    assert shared.status_code == 200, shared.text
    seen = app.recorded(f"/v2.0/qos/policies/{rid}", other)[1]["policy"]
    assert seen["shared"] is True and seen["is_default"] is False


@pytest.mark.parametrize("plural,body", [
    ("security-groups", {"security_group": {"name": "g", "tags": ["b", "a"]}}),
    ("qos/policies", {"policy": {"name": "q", "tags": ["b", "a"]}}),
])
def test_a_shown_security_group_or_qos_policy_reads_its_tags_with_its_row(
        tmp_path: Path, plural: str, body: dict[str, object]) -> None:
    app = CountingApp(tmp_path, "[DEFAULT]\nservice_plugins = qos\n")
    admin = {"X-Project-Id": "tagged", "X-Roles": "admin"}
    made = app.client.simulate_post(f"/v2.0/{plural}", json=body, headers=admin)
    assert made.status_code == 201, made.text
    rid = next(iter(made.json.values()))["id"]
    statements, shown = app.recorded(f"/v2.0/{plural}/{rid}", admin)
    assert next(iter(shown.values()))["tags"] == ["a", "b"]
    reading = [s for s in statements if "FROM tags" in s]
    assert len(reading) == 1, statements
    assert reading[0].rsplit("FROM", 1)[1].split()[0] != "tags", reading


def test_a_port_delete_asks_routers_floating_ips_and_trunks_in_one_statement_each(
        tmp_path: Path) -> None:
    """The L3 guard (router interface, floating IP port, associated floating
    IPs) and the trunk guard (subport, parent) are a statement each."""
    app = CountingApp(tmp_path, "[DEFAULT]\nservice_plugins = router,trunk\n"
                                "[ml2]\nextension_drivers = port_security\n")
    net = app.client.simulate_post("/v2.0/networks", json={"network": {"name": "n"}}).json
    net_id = net["network"]["id"]
    app.client.simulate_post("/v2.0/subnets", json={"subnet": {
        "network_id": net_id, "ip_version": 4, "cidr": "10.0.0.0/24"}})
    port = app.client.simulate_post("/v2.0/ports", json={"port": {"network_id": net_id}})
    seen: list[str] = []
    listen_all(app.api.plugin.db, "before_cursor_execute",
                 lambda conn, cur, statement, *a: seen.append(statement))
    result = app.client.simulate_delete(f"/v2.0/ports/{port.json['port']['id']}")
    assert result.status_code == 204, result.text
    asking = [s for s in seen if s.lstrip().startswith("SELECT")
              and not s.lstrip().startswith("SELECT ports.") and any(
                  f"FROM {table} " in s for table in ("routerports", "subports", "trunks"))]
    assert len(asking) == 2, asking


def test_deleting_a_network_costs_the_same_for_one_or_five_subnets_and_ports(app: App) -> None:
    def network(children: int) -> str:
        post = app.client.simulate_post
        net = post("/v2.0/networks", json={"network": {"name": "d"}}).json["network"]["id"]
        for i in range(children):
            post("/v2.0/subnets", json={"subnet": {"network_id": net, "ip_version": 4,
                                                   "cidr": f"10.{i}.0.0/24", "tags": ["s"]}})
            post("/v2.0/ports", json={"port": {"network_id": net, "tags": ["p"],
                                               "device_owner": "network:dhcp"}})
        return net
    small, big = network(1), network(5)
    assert app.counted("DELETE", f"/v2.0/networks/{small}")[0] == \
        app.counted("DELETE", f"/v2.0/networks/{big}")[0]


def test_deleting_an_empty_network_deletes_only_what_it_has(app: App) -> None:
    """No ports or subnets found under the network's lock: no DELETE is
    sent for them, and its RBAC entries go with it by the cascade."""
    post = app.client.simulate_post
    empty = post("/v2.0/networks", json={"network": {"name": "e", "shared": True}})
    full = post("/v2.0/networks", json={"network": {"name": "f", "shared": True}})
    full_id = full.json["network"]["id"]
    post("/v2.0/subnets", json={"subnet": {"network_id": full_id, "ip_version": 4,
                                           "cidr": "10.9.0.0/24"}})
    post("/v2.0/ports", json={"port": {"network_id": full_id, "device_owner": "network:dhcp"}})
    seen: list[str] = []
    listen_all(app.api.plugin.db, "before_cursor_execute",
               lambda conn, cur, statement, *a: seen.append(" ".join(statement.split())))

    def deletes(net_id: str) -> list[str]:
        seen.clear()
        assert app.client.simulate_delete(f"/v2.0/networks/{net_id}").status_code == 204
        return sorted(s.split()[2] for s in seen if s.startswith("DELETE"))
    empty_id = empty.json["network"]["id"]
    assert deletes(empty_id) == ["network_segments", "networks", "tags"]
    assert deletes(full_id) == ["network_segments", "networks", "ports", "subnets", "tags"]
    with app.api.plugin.db.reader() as conn:
        left = conn.exec_driver_sql(
            "SELECT COUNT(*) FROM networkrbacs WHERE object_id IN (?, ?)",
            (empty_id, full_id)).scalar()
        ports = conn.exec_driver_sql("SELECT COUNT(*) FROM ports WHERE network_id = ?",
                                     (full_id,)).scalar()
        addresses = conn.exec_driver_sql("SELECT COUNT(*) FROM ipallocations WHERE "
                                         "network_id = ?", (full_id,)).scalar()
    assert left == 0 and ports == 0 and addresses == 0


@pytest.mark.parametrize("plural", ["networks", "subnets"])
def test_a_list_by_name_finding_one_is_a_show_and_the_pages_read(app: App, plural: str) -> None:
    """A page of a few rows reads each with its child tables in one SELECT
    (``store.SHOWN_ALONE``), not one batch per child table."""
    post = app.client.simulate_post
    net = post("/v2.0/networks", json={"network": {"name": f"one-{plural}", "tags": ["t"]}})
    net_id = net.json["network"]["id"]
    sub = post("/v2.0/subnets", json={"subnet": {
        "network_id": net_id, "ip_version": 4, "cidr": "10.7.0.0/24",
        "name": f"one-{plural}", "dns_nameservers": ["1.1.1.1"], "tags": ["t"]}})
    rid = net_id if plural == "networks" else sub.json["subnet"]["id"]
    shown, body = app.counted("GET", f"/v2.0/{plural}/{rid}")
    listed, page = app.counted("GET", f"/v2.0/{plural}?name=one-{plural}")
    assert page[plural] == [body[plural[:-1]]]
    assert listed == shown + 1

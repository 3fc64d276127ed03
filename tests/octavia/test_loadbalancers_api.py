"""Load balancers through the Octavia v2 API: the VIP port made in neutrino's
core, the status lifecycle through the noop provider, Octavia's refusals
and policies for the owner, another project, a reader and an admin."""
from __future__ import annotations

from tests.octavia.conftest import LB, make_lb, subnet, wait_active


def test_a_load_balancer_gets_a_vip_port_of_its_own_and_becomes_active(owner):
    sub = subnet(owner)
    status, body = owner.post(f"{LB}/loadbalancers", {"loadbalancer": {
        "name": "web", "vip_subnet_id": sub["id"], "tags": ["a"]}})
    assert status == 201, body
    lb = body["loadbalancer"]
    assert lb["provisioning_status"] == "PENDING_CREATE"
    assert lb["operating_status"] == "OFFLINE"
    assert lb["vip_network_id"] == sub["network_id"] and lb["provider"] == "noop_driver"
    assert lb["tenant_id"] == lb["project_id"] and lb["tags"] == ["a"]
    status, port = owner.get(f"/v2.0/ports/{lb['vip_port_id']}")
    assert status == 200, port
    assert port["port"]["device_owner"] == "Octavia"
    assert port["port"]["fixed_ips"][0]["ip_address"] == lb["vip_address"]
    active = wait_active(owner, f"{LB}/loadbalancers/{lb['id']}", "loadbalancer")
    assert active["operating_status"] == "OFFLINE"


def test_the_vip_may_be_asked_by_network_with_an_address(owner):
    sub = subnet(owner, "10.30.0.0/24")
    status, body = owner.post(f"{LB}/loadbalancers", {"loadbalancer": {
        "vip_network_id": sub["network_id"], "vip_address": "10.30.0.77"}})
    assert status == 201, body
    assert body["loadbalancer"]["vip_address"] == "10.30.0.77"
    assert body["loadbalancer"]["vip_subnet_id"] == sub["id"]


def test_a_vip_needs_a_subnet_network_or_port(owner):
    status, body = owner.post(f"{LB}/loadbalancers", {"loadbalancer": {"name": "x"}})
    assert status == 400
    assert body == {"faultcode": "Client", "debuginfo": None, "faultstring":
                    "Validation failure: VIP must contain one of: vip_port_id, "
                    "vip_network_id, vip_subnet_id."}


def test_a_subnet_of_another_project_is_not_found(owner, other):
    sub = subnet(other)
    status, body = owner.post(f"{LB}/loadbalancers", {"loadbalancer": {
        "vip_subnet_id": sub["id"]}})
    assert status == 400
    assert body["faultstring"] == f"Subnet {sub['id']} not found."


def test_unknown_attributes_and_bad_values_are_refused_as_octavia_does(owner):
    sub = subnet(owner)
    status, body = owner.post(f"{LB}/loadbalancers", {"loadbalancer": {
        "vip_subnet_id": sub["id"], "colour": "blue"}})
    assert status == 400 and "colour" in body["faultstring"]
    status, body = owner.post(f"{LB}/loadbalancers", {"loadbalancer": {
        "vip_subnet_id": sub["id"], "admin_state_up": "maybe"}})
    assert status == 400
    assert body["faultstring"].startswith("Invalid input for field/attribute admin_state_up")


def test_another_project_may_neither_see_nor_change_it(owner, other):
    lb = make_lb(owner)
    path = f"{LB}/loadbalancers/{lb['id']}"
    for status, body in (other.get(path),
                         other.req("PUT", path, {"loadbalancer": {"name": "x"}}),
                         other.req("DELETE", path)):
        assert status == 403
        assert body["faultstring"] == "Policy does not allow this request to be performed."
    status, body = other.get(f"{LB}/loadbalancers")
    assert status == 200 and lb["id"] not in [x["id"] for x in body["loadbalancers"]]


def test_a_reader_reads_but_does_not_write(owner, reader):
    lb = make_lb(owner)
    path = f"{LB}/loadbalancers/{lb['id']}"
    assert reader.get(path)[0] == 200
    assert reader.req("PUT", path, {"loadbalancer": {"name": "x"}})[0] == 403
    sub = subnet(owner, "10.31.0.0/24")
    status, _ = reader.post(f"{LB}/loadbalancers", {"loadbalancer": {"vip_subnet_id": sub["id"]}})
    assert status == 403


def test_an_admin_sees_every_project_and_fails_over(owner, admin):
    lb = make_lb(owner)
    status, body = admin.get(f"{LB}/loadbalancers?project_id={lb['project_id']}")
    assert status == 200 and [x["id"] for x in body["loadbalancers"]] == [lb["id"]]
    assert owner.req("PUT", f"{LB}/loadbalancers/{lb['id']}/failover")[0] == 403
    assert admin.req("PUT", f"{LB}/loadbalancers/{lb['id']}/failover")[0] == 202
    wait_active(owner, f"{LB}/loadbalancers/{lb['id']}", "loadbalancer")


def test_an_update_is_pending_and_a_second_one_meanwhile_conflicts(owner, lb_server):
    lb = make_lb(owner)
    path = f"{LB}/loadbalancers/{lb['id']}"
    status, body = owner.req("PUT", path, {"loadbalancer": {"description": "new"}})
    assert status == 200 and body["loadbalancer"]["description"] == "new"
    assert body["loadbalancer"]["provisioning_status"] == "PENDING_UPDATE"
    assert wait_active(owner, path, "loadbalancer")["description"] == "new"


def test_a_load_balancer_with_children_goes_only_with_cascade(owner):
    lb = make_lb(owner)
    status, body = owner.post(f"{LB}/listeners", {"listener": {
        "protocol": "HTTP", "protocol_port": 80, "loadbalancer_id": lb["id"]}})
    assert status == 201, body
    path = f"{LB}/loadbalancers/{lb['id']}"
    wait_active(owner, path, "loadbalancer")
    status, body = owner.req("DELETE", path)
    assert status == 400
    assert body["faultstring"] == (f"Validation failure: Cannot delete Load Balancer "
                                   f"{lb['id']} - it has children")
    assert owner.req("DELETE", path + "?cascade=true")[0] == 204
    status, body = owner.get(path)
    assert status == 404 and body["faultstring"] == f"Load Balancer {lb['id']} not found."
    assert owner.get(f"/v2.0/ports/{lb['vip_port_id']}")[0] == 404


def test_lists_filter_sort_and_page_as_octavia(owner):
    ids = [make_lb(owner, name=f"page-{i}")["id"] for i in range(3)]
    status, body = owner.get(f"{LB}/loadbalancers?sort=name:desc&fields=id&fields=name")
    assert status == 200
    names = [x["name"] for x in body["loadbalancers"] if x["name"].startswith("page-")]
    assert names == ["page-2", "page-1", "page-0"]
    assert set(body["loadbalancers"][0]) == {"id", "name"}
    status, body = owner.get(f"{LB}/loadbalancers?limit=1&sort=name:asc&name=page-1")
    assert [x["id"] for x in body["loadbalancers"]] == [ids[1]]
    status, body = owner.get(f"{LB}/loadbalancers?limit=1&sort=created_at:asc")
    assert body["loadbalancers_links"][0]["rel"] == "next"
    assert owner.get(f"{LB}/loadbalancers?sort=bogus:asc")[0] == 400
    assert owner.get(f"{LB}/loadbalancers?bogus=1")[0] == 400


def test_status_tree_and_stats(owner):
    lb = make_lb(owner)
    status, body = owner.get(f"{LB}/loadbalancers/{lb['id']}/status")
    assert status == 200
    assert body["statuses"]["loadbalancer"]["id"] == lb["id"]
    status, body = owner.get(f"{LB}/loadbalancers/{lb['id']}/stats")
    assert status == 200 and body == {"stats": {
        "bytes_in": 0, "bytes_out": 0, "active_connections": 0, "total_connections": 0,
        "request_errors": 0}}


def test_version_discovery_is_served_under_the_prefix(owner):
    status, body = owner.get("/load-balancer/")
    assert status == 200 and body["versions"][-1]["status"] == "CURRENT"
    assert owner.get("/load-balancer/v2")[1] == "v2"


def test_a_whole_tree_in_one_create(owner):
    sub = subnet(owner, "10.32.0.0/24")
    status, body = owner.post(f"{LB}/loadbalancers", {"loadbalancer": {
        "vip_subnet_id": sub["id"], "listeners": [{
            "protocol": "HTTP", "protocol_port": 80,
            "default_pool": {"protocol": "HTTP", "lb_algorithm": "ROUND_ROBIN",
                             "members": [{"address": "10.32.0.5", "protocol_port": 8080}],
                             "healthmonitor": {"type": "HTTP", "delay": 5, "timeout": 3,
                                               "max_retries": 3}},
            "l7policies": [{"action": "REDIRECT_TO_POOL",
                            "redirect_pool": {"protocol": "HTTP",
                                              "lb_algorithm": "ROUND_ROBIN"},
                            "rules": [{"type": "PATH", "compare_type": "STARTS_WITH",
                                       "value": "/static"}]}]}]}})
    assert status == 201, body
    lb = body["loadbalancer"]
    assert len(lb["listeners"]) == 1 and len(lb["pools"]) == 2
    assert lb["listeners"][0]["provisioning_status"] == "PENDING_CREATE"
    wait_active(owner, f"{LB}/loadbalancers/{lb['id']}", "loadbalancer")
    status, tree = owner.get(f"{LB}/loadbalancers/{lb['id']}/status")
    pools = tree["statuses"]["loadbalancer"]["listeners"][0]["pools"]
    assert len(pools) == 2 and pools[0]["members"][0]["address"] == "10.32.0.5"
    assert pools[0]["health_monitor"]["provisioning_status"] == "ACTIVE"


def test_a_bad_child_leaves_nothing_of_the_tree(owner):
    sub = subnet(owner, "10.33.0.0/24")
    status, body = owner.post(f"{LB}/loadbalancers", {"loadbalancer": {
        "name": "half", "vip_subnet_id": sub["id"],
        "listeners": [{"protocol": "HTTP", "protocol_port": 99999}]}})
    assert status == 400
    status, body = owner.get(f"{LB}/loadbalancers?name=half")
    assert body["loadbalancers"] == []
    status, ports = owner.get(f"/v2.0/ports?network_id={sub['network_id']}&device_owner=Octavia")
    assert ports["ports"] == []


def test_additional_vips_are_more_addresses_of_the_vip_port(owner):
    sub = subnet(owner, "10.34.0.0/24")
    status, body = owner.post("/v2.0/subnets", {"subnet": {
        "network_id": sub["network_id"], "cidr": "fd00:34::/64", "ip_version": 6}})
    assert status == 201, body
    v6 = body["subnet"]
    status, body = owner.post(f"{LB}/loadbalancers", {"loadbalancer": {
        "vip_subnet_id": sub["id"], "additional_vips": [{"subnet_id": v6["id"]}]}})
    assert status == 201, body
    lb = body["loadbalancer"]
    assert [x["subnet_id"] for x in lb["additional_vips"]] == [v6["id"]]
    status, port = owner.get(f"/v2.0/ports/{lb['vip_port_id']}")
    assert {f["subnet_id"] for f in port["port"]["fixed_ips"]} == {sub["id"], v6["id"]}
    other = subnet(owner, "10.35.0.0/24")
    status, body = owner.post(f"{LB}/loadbalancers", {"loadbalancer": {
        "vip_subnet_id": sub["id"], "additional_vips": [{"subnet_id": other["id"]}]}})
    assert status == 400

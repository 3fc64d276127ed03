"""Listeners, pools, members, health monitors, L7 policies and rules: the
load balancer locked while they change, Octavia's refusals, other projects
kept out."""
from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from neutrino.db import tables as t
from neutrino.db.engine import Database
from tests.conftest import Client
from tests.octavia.conftest import LB, make_lb, wait_active


def _lb_active(client: Client, lb_id: str) -> None:
    wait_active(client, f"{LB}/loadbalancers/{lb_id}", "loadbalancer")


def _post(client: Client, path: str, key: str, body: dict[str, Any], lb_id: str) -> dict[str, Any]:
    status, got = client.post(f"{LB}/{path}", {key: body})
    assert status == 201, got
    _lb_active(client, lb_id)
    return got[key]  # type: ignore[no-any-return]


def _stack(client: Client) -> dict[str, Any]:
    lb = make_lb(client)
    listener = _post(client, "listeners", "listener", {
        "protocol": "HTTP", "protocol_port": 80, "loadbalancer_id": lb["id"],
        "insert_headers": {"X-Forwarded-For": "true"}}, lb["id"])
    pool = _post(client, "pools", "pool", {
        "protocol": "HTTP", "lb_algorithm": "ROUND_ROBIN", "listener_id": listener["id"]},
        lb["id"])
    return {"lb": lb, "listener": listener, "pool": pool}


def test_a_listener_is_pending_then_active_and_its_port_is_taken(owner):
    lb = make_lb(owner)
    status, body = owner.post(f"{LB}/listeners", {"listener": {
        "protocol": "HTTP", "protocol_port": 8080, "loadbalancer_id": lb["id"]}})
    assert status == 201 and body["listener"]["provisioning_status"] == "PENDING_CREATE"
    assert body["listener"]["timeout_client_data"] == 50000
    listener = wait_active(owner, f"{LB}/listeners/{body['listener']['id']}", "listener")
    _lb_active(owner, lb["id"])
    status, body = owner.post(f"{LB}/listeners", {"listener": {
        "protocol": "TCP", "protocol_port": 8080, "loadbalancer_id": lb["id"]}})
    assert status == 409
    status, body = owner.post(f"{LB}/listeners", {"listener": {
        "protocol": "UDP", "protocol_port": 8080, "loadbalancer_id": lb["id"]}})
    assert status == 201, body
    assert listener["loadbalancers"] == [{"id": lb["id"]}]


def test_a_port_beyond_65535_is_refused_with_octavias_message(owner):
    lb = make_lb(owner)
    status, body = owner.post(f"{LB}/listeners", {"listener": {
        "protocol": "HTTP", "protocol_port": 99999, "loadbalancer_id": lb["id"]}})
    assert status == 400
    assert body["faultstring"] == ("Invalid input for field/attribute protocol_port. "
                                   "Value: '99999'. Value should be lower or equal to 65535")


def test_a_change_while_the_load_balancer_is_pending_conflicts(owner, lb_server):
    stack = _stack(owner)
    lb_id = stack["lb"]["id"]
    # the noop provider answers at once: hold the load balancer pending
    # through the database as a slower provider would leave it
    db = Database(f"sqlite:///{lb_server.tmp / 'var' / 'neutrino.sqlite'}")
    with db.writer() as conn:
        conn.execute(sa.update(t.octavia_objects).where(t.octavia_objects.c.id == lb_id)
                     .values(provisioning_status="PENDING_UPDATE"))
    status, body = owner.post(f"{LB}/pools/{stack['pool']['id']}/members", {"member": {
        "address": "10.20.0.9", "protocol_port": 80}})
    assert status == 409 and body["faultstring"] == (
        f"Load Balancer {lb_id} is immutable and cannot be updated.")
    status, body = owner.req("PUT", f"{LB}/loadbalancers/{lb_id}",
                             {"loadbalancer": {"name": "x"}})
    assert status == 409 and body["faultstring"] == (
        f"Invalid state PENDING_UPDATE of loadbalancer resource {lb_id}")
    with db.writer() as conn:
        conn.execute(sa.update(t.octavia_objects).where(t.octavia_objects.c.id == lb_id)
                     .values(provisioning_status="ACTIVE"))
    db.dispose()


def test_a_pool_becomes_the_listeners_default_and_a_second_is_refused(owner):
    stack = _stack(owner)
    status, body = owner.get(f"{LB}/listeners/{stack['listener']['id']}")
    assert body["listener"]["default_pool_id"] == stack["pool"]["id"]
    status, body = owner.post(f"{LB}/pools", {"pool": {
        "protocol": "HTTP", "lb_algorithm": "ROUND_ROBIN",
        "listener_id": stack["listener"]["id"]}})
    assert status == 409 and body["faultstring"] == "This listener already has a default pool"
    status, body = owner.post(f"{LB}/pools", {"pool": {
        "protocol": "UDP", "lb_algorithm": "ROUND_ROBIN", "loadbalancer_id": stack["lb"]["id"],
        "session_persistence": {"type": "APP_COOKIE", "cookie_name": "x"}}})
    assert status == 400


def test_source_ip_port_is_not_implemented_by_the_provider(owner):
    lb = make_lb(owner)
    status, body = owner.post(f"{LB}/pools", {"pool": {
        "protocol": "HTTP", "lb_algorithm": "SOURCE_IP_PORT", "loadbalancer_id": lb["id"]}})
    assert status == 501
    assert body["faultstring"].startswith("Provider 'noop_driver' does not support a "
                                          "requested option")
    status, body = owner.get(f"{LB}/pools?loadbalancer_id={lb['id']}")
    assert body["pools"] == []


def test_members_are_no_monitor_and_duplicates_conflict(owner):
    stack = _stack(owner)
    path = f"{LB}/pools/{stack['pool']['id']}/members"
    member = _post(owner, f"pools/{stack['pool']['id']}/members", "member",
                   {"address": "10.20.0.10", "protocol_port": 80, "weight": 5},
                   stack["lb"]["id"])
    assert member["operating_status"] == "NO_MONITOR" and member["weight"] == 5
    status, body = owner.post(path, {"member": {"address": "10.20.0.10", "protocol_port": 80}})
    assert status == 409
    status, body = owner.get(path)
    assert [m["id"] for m in body["members"]] == [member["id"]]


def test_a_batch_update_replaces_the_members(owner):
    stack = _stack(owner)
    pool_id, lb_id = stack["pool"]["id"], stack["lb"]["id"]
    path = f"{LB}/pools/{pool_id}/members"
    _post(owner, f"pools/{pool_id}/members", "member",
          {"address": "10.20.0.10", "protocol_port": 80}, lb_id)
    status, _ = owner.req("PUT", path, {"members": [
        {"address": "10.20.0.11", "protocol_port": 80},
        {"address": "10.20.0.12", "protocol_port": 80}]})
    assert status == 202
    _lb_active(owner, lb_id)
    status, body = owner.get(path)
    assert sorted(m["address"] for m in body["members"]) == ["10.20.0.11", "10.20.0.12"]
    status, _ = owner.req("PUT", path + "?additive_only=true", {"members": [
        {"address": "10.20.0.13", "protocol_port": 80}]})
    assert status == 202
    _lb_active(owner, lb_id)
    assert len(owner.get(path)[1]["members"]) == 3


def test_a_health_monitor_per_pool_with_octavias_http_defaults(owner):
    stack = _stack(owner)
    hm = _post(owner, "healthmonitors", "healthmonitor", {
        "pool_id": stack["pool"]["id"], "type": "HTTP", "delay": 5, "timeout": 3,
        "max_retries": 3}, stack["lb"]["id"])
    assert (hm["http_method"], hm["url_path"], hm["expected_codes"]) == ("GET", "/", "200")
    hm = wait_active(owner, f"{LB}/healthmonitors/{hm['id']}", "healthmonitor")
    assert hm["operating_status"] == "ONLINE"
    status, body = owner.post(f"{LB}/healthmonitors", {"healthmonitor": {
        "pool_id": stack["pool"]["id"], "type": "TCP", "delay": 5, "timeout": 3,
        "max_retries": 3}})
    assert status == 409 and body["faultstring"] == "This pool already has a health monitor"
    status, body = owner.get(f"{LB}/pools/{stack['pool']['id']}")
    assert body["pool"]["healthmonitor_id"] == hm["id"]


def test_a_tcp_monitor_takes_no_http_options(owner):
    stack = _stack(owner)
    status, body = owner.post(f"{LB}/healthmonitors", {"healthmonitor": {
        "pool_id": stack["pool"]["id"], "type": "TCP", "delay": 5, "timeout": 3,
        "max_retries": 3, "url_path": "/x"}})
    assert status == 400
    assert body["faultstring"] == ("url_path is not a valid option for health monitors "
                                   "of type TCP")


def test_l7_policies_keep_their_positions_and_rules_validate(owner):
    stack = _stack(owner)
    lb_id, listener_id = stack["lb"]["id"], stack["listener"]["id"]
    first = _post(owner, "l7policies", "l7policy", {
        "listener_id": listener_id, "action": "REDIRECT_TO_URL",
        "redirect_url": "http://example.com/"}, lb_id)
    assert first["position"] == 1 and first["redirect_http_code"] == 302
    second = _post(owner, "l7policies", "l7policy", {
        "listener_id": listener_id, "action": "REDIRECT_TO_POOL", "position": 1,
        "redirect_pool_id": stack["pool"]["id"]}, lb_id)
    assert second["position"] == 1
    assert owner.get(f"{LB}/l7policies/{first['id']}")[1]["l7policy"]["position"] == 2
    status, body = owner.post(f"{LB}/l7policies", {"l7policy": {
        "listener_id": listener_id, "action": "REDIRECT_TO_URL"}})
    assert status == 400
    rule = _post(owner, f"l7policies/{second['id']}/rules", "rule", {
        "type": "PATH", "compare_type": "STARTS_WITH", "value": "/static"}, lb_id)
    assert rule["invert"] is False
    status, body = owner.post(f"{LB}/l7policies/{second['id']}/rules", {"rule": {
        "type": "HEADER", "compare_type": "EQUAL_TO", "value": "x"}})
    assert status == 400 and body["faultstring"].startswith("Error parsing L7Rule")
    status, body = owner.req("DELETE", f"{LB}/pools/{stack['pool']['id']}")
    assert status == 409 and body["faultstring"] == (
        f"Pool {stack['pool']['id']} is in use by L7 policy {second['id']}")


def test_another_projects_children_are_forbidden_and_admin_reads_them(owner, other, admin):
    stack = _stack(owner)
    for path in (f"listeners/{stack['listener']['id']}", f"pools/{stack['pool']['id']}",
                 f"pools/{stack['pool']['id']}/members"):
        assert other.get(f"{LB}/{path}")[0] == 403, path
        assert admin.get(f"{LB}/{path}")[0] == 200, path
    status, body = other.post(f"{LB}/listeners", {"listener": {
        "protocol": "TCP", "protocol_port": 81, "loadbalancer_id": stack["lb"]["id"]}})
    assert status == 403
    assert other.get(f"{LB}/listeners")[1]["listeners"] == []
    assert owner.get(f"{LB}/listeners/{stack['listener']['id']}/stats")[0] == 200


def test_a_missing_parent_is_not_found(owner):
    status, body = owner.get(f"{LB}/pools/0b7e7a9e-3c44-4c11-9d7a-000000000000/members")
    assert status == 404 and body["faultstring"].startswith("Pool ")

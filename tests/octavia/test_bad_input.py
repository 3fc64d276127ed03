"""Bodies and queries Octavia refuses are 400s with its error body, never a
500, and write nothing."""
from __future__ import annotations

import pytest

from tests.octavia.conftest import LB, make_lb

BAD_BODIES = [None, [], "x", {"listener": []}, {"listener": None}, {"wrong": {}}]


@pytest.mark.parametrize("body", BAD_BODIES)
def test_a_body_that_is_not_a_listener_is_refused(owner, body):
    status, got = owner.post(f"{LB}/listeners", body)
    assert status == 400, got
    assert set(got) == {"faultcode", "faultstring", "debuginfo"}


def test_broken_json_is_refused(owner):
    resp = owner.session.post(owner.url + f"{LB}/loadbalancers", data=b"{nope",
                              headers={"Content-Type": "application/json"}, timeout=30)
    assert resp.status_code == 400 and resp.json()["faultcode"] == "Client"


def test_nested_values_of_the_wrong_shape_are_refused(owner):
    lb = make_lb(owner)
    for pool in ({"session_persistence": "APP_COOKIE"},
                 {"session_persistence": {"type": "NOPE"}},
                 {"session_persistence": {"type": "SOURCE_IP", "colour": 1}},
                 {"tags": "a"}, {"tls_versions": [1]}, {"alpn_protocols": ["spdy"]}):
        status, got = owner.post(f"{LB}/pools", {"pool": {
            "protocol": "HTTP", "lb_algorithm": "ROUND_ROBIN", "loadbalancer_id": lb["id"],
            **pool}})
        assert status == 400, (pool, got)
    status, got = owner.post(f"{LB}/listeners", {"listener": {
        "protocol": "HTTP", "protocol_port": 80, "loadbalancer_id": lb["id"],
        "allowed_cidrs": ["10.0.0.0/33"]}})
    assert status == 400
    for members in ("x", [1], [{"address": "nope", "protocol_port": 1}]):
        status, got = owner.req("PUT", f"{LB}/pools/{lb['id']}/members", {"members": members})
        assert status in (400, 404), (members, got)
    status, got = owner.get(f"{LB}/loadbalancers/{lb['id']}")
    assert got["loadbalancer"]["listeners"] == [] and got["loadbalancer"]["pools"] == []


def test_bad_paging_is_refused(owner):
    for query in ("limit=-1", "limit=x", "marker=nope", "sort=name:sideways", "page_reverse=x"):
        status, got = owner.get(f"{LB}/loadbalancers?{query}")
        assert status in (200, 400), (query, got)
        assert status == 400 or query == "page_reverse=x", query


def test_bad_quota_values_are_refused(admin):
    for quota in ({"loadbalancer": "ten"}, {"loadbalancer": -2}, {"nope": 1}, []):
        status, got = admin.req("PUT", f"{LB}/quotas/p1", {"quota": quota})
        assert status == 400, (quota, got)

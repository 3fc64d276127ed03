"""Quotas of security groups and rules: upstream's option names and counting."""
from __future__ import annotations

import uuid
from typing import Iterator

import pytest

from tests.api._helpers import error
from tests.conftest import Client, Server


@pytest.fixture(scope="module")
def sg_quota_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("sg-quota"),
                 extra="[quotas]\nquota_security_group = 3\nquota_security_group_rule = 9\n"
                 ).start()
    yield srv
    srv.stop()


def test_defaults_are_upstreams(admin: Client) -> None:
    body = admin.get(f"/v2.0/quotas/{uuid.uuid4().hex}/default")[1]["quota"]
    assert body["security_group"] == 10 and body["security_group_rule"] == 100


def test_default_group_and_its_rules_count_as_used(sg_quota_server: Server) -> None:
    project = uuid.uuid4().hex
    member = Client(sg_quota_server.url, project, "member")
    member.get("/v2.0/security-groups")
    details = Client(sg_quota_server.url).get(f"/v2.0/quotas/{project}/details")[1]["quota"]
    assert details["security_group"] == {"limit": 3, "used": 1, "reserved": 0}
    assert details["security_group_rule"] == {"limit": 9, "used": 4, "reserved": 0}


def test_over_quota_groups_and_rules_are_409(sg_quota_server: Server) -> None:
    member = Client(sg_quota_server.url, uuid.uuid4().hex, "member")
    made = [member.post("/v2.0/security-groups", {"security_group": {"name": f"q{i}"}})
            for i in range(2)]
    assert [status for status, _ in made] == [201, 201]
    msg = error(member.post("/v2.0/security-groups", {"security_group": {"name": "q3"}}),
                409, "OverQuota")
    assert "security_group" in msg
    sg_id = made[0][1]["security_group"]["id"]
    # 4 default + 2 + 2 egress rules are in use: one more fits, the next does not.
    ok = member.post("/v2.0/security-group-rules", {"security_group_rule": {
        "security_group_id": sg_id, "direction": "ingress", "protocol": "tcp"}})
    assert ok[0] == 201, ok
    error(member.post("/v2.0/security-group-rules", {"security_group_rule": {
        "security_group_id": sg_id, "direction": "ingress", "protocol": "udp"}}),
        409, "OverQuota")

"""Builders for the QoS tests: a policy owner (role ``manager``, which
upstream's QoS rules require), policies and rules, all asserting success."""
from __future__ import annotations

import uuid
from typing import Any

from tests.conftest import Client

RULES = "/v2.0/qos/policies/{}/{}_rules"


def manager(url: str, project: str | None = None) -> Client:
    return Client(url, project or uuid.uuid4().hex, "manager")


def reader(url: str, project: str) -> Client:
    return Client(url, project, "reader")


def policy(client: Client, **attrs: Any) -> dict[str, Any]:
    attrs.setdefault("name", f"qos-{uuid.uuid4().hex[:8]}")
    status, body = client.post("/v2.0/qos/policies", {"policy": attrs})
    assert status == 201, body
    return body["policy"]


def rule(client: Client, policy_id: str, rule_type: str, **attrs: Any) -> dict[str, Any]:
    key = f"{rule_type}_rule"
    status, body = client.post(RULES.format(policy_id, rule_type), {key: attrs})
    assert status == 201, body
    return body[key]


def error(result: tuple[int, Any], status: int, kind: str) -> str:
    code, body = result
    assert code == status, body
    assert body["NeutronError"]["type"] == kind, body
    return body["NeutronError"]["message"]

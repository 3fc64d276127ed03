"""Small builders shared by the API tests: create a resource, assert 201.

They keep tests about behaviour rather than about request plumbing; every
builder returns the created resource's JSON dict.
"""
from __future__ import annotations

import uuid
from typing import Any

ZERO_UUID = "00000000-0000-0000-0000-000000000000"


def unique(prefix: str = "t") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def created(result: tuple[int, Any], key: str) -> dict[str, Any]:
    status, body = result
    assert status == 201, body
    return body[key]


def network(client: Any, **attrs: Any) -> dict[str, Any]:
    attrs.setdefault("name", unique("net"))
    return created(client.post("/v2.0/networks", {"network": attrs}), "network")


def subnet(client: Any, network_id: str, cidr: str | None = "10.0.0.0/24",
           **attrs: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"network_id": network_id, "ip_version": 4, **attrs}
    if cidr is not None:
        body["cidr"] = cidr
        if ":" in cidr:
            body.setdefault("ip_version", 6)
            body["ip_version"] = attrs.get("ip_version", 6)
    return created(client.post("/v2.0/subnets", {"subnet": body}), "subnet")


def port(client: Any, network_id: str, **attrs: Any) -> dict[str, Any]:
    return created(client.post("/v2.0/ports", {"port": {"network_id": network_id, **attrs}}),
                   "port")


def pool(client: Any, prefixes: list[str], **attrs: Any) -> dict[str, Any]:
    attrs.setdefault("name", unique("pool"))
    return created(client.post("/v2.0/subnetpools",
                               {"subnetpool": {"prefixes": prefixes, **attrs}}), "subnetpool")


def error(result: tuple[int, Any], status: int, kind: str | None = None) -> str:
    """Assert an upstream-shaped error and return its message."""
    code, body = result
    assert code == status, body
    assert set(body) == {"NeutronError"}, body
    err = body["NeutronError"]
    assert set(err) == {"type", "message", "detail"}, err
    assert err["detail"] == ""
    if kind is not None:
        assert err["type"] == kind, err
    return err["message"]

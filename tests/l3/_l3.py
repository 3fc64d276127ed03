"""Builders for the L3 tests: external networks, routers, interfaces, floating IPs."""
from __future__ import annotations

import itertools
import uuid
from typing import Any

from tests.api import _helpers as h

EXT = "router:external"
_octets = itertools.count(10)


def external_network(admin: Any, v6: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
    """Owned by a project of its own: its ``*`` external RBAC entry then
    counts against that project's rbac_policy quota, not the admin's
    (the session server is shared with the other suites)."""
    net = h.network(admin, project_id=uuid.uuid4().hex, **{EXT: True})
    sub = h.subnet(admin, net["id"], f"172.{16 + next(_octets) % 15}.{next(_octets) % 250}.0/24")
    if v6:
        h.subnet(admin, net["id"], f"2001:db8:{next(_octets):x}::/64")
    return admin.get(f"/v2.0/networks/{net['id']}")[1]["network"], sub


def private_subnet(client: Any, cidr: str | None = None, **attrs: Any) -> dict[str, Any]:
    net = h.network(client)
    n = next(_octets)
    return h.subnet(client, net["id"], cidr or f"10.{n // 250}.{n % 250}.0/24", **attrs)


def router(client: Any, **attrs: Any) -> dict[str, Any]:
    attrs.setdefault("name", h.unique("router"))
    return h.created(client.post("/v2.0/routers", {"router": attrs}), "router")


def add_interface(client: Any, router_id: str, **body: Any) -> dict[str, Any]:
    status, info = client.put(f"/v2.0/routers/{router_id}/add_router_interface", body)
    assert status == 200, info
    return info


def remove_interface(client: Any, router_id: str, **body: Any) -> tuple[int, Any]:
    return client.put(f"/v2.0/routers/{router_id}/remove_router_interface", body)


def floatingip(client: Any, network_id: str, **attrs: Any) -> dict[str, Any]:
    return h.created(client.post("/v2.0/floatingips", {"floatingip": {
        "floating_network_id": network_id, **attrs}}), "floatingip")


def reader_of(client: Any) -> Any:
    """A reader of the client's project."""
    from tests.conftest import Client
    project = client.session.headers["X-Project-Id"]
    return Client(client.url, project, "reader")

"""End to end on every backend: a real server on the database, driven over HTTP.

One server per backend for the module; each test uses its own resources.
"""
from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest
import requests

pytestmark = pytest.mark.backend

ISO_Z = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


@pytest.fixture(scope="module", params=["sqlite", "postgresql", "mariadb"])
def api(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
        helpers: Any, start_patiently: Any) -> Iterator[Any]:
    tmp = tmp_path_factory.mktemp(f"api-{request.param}")
    url, drop = helpers.create_database(request.param, tmp)
    srv = helpers.Server(Path(tmp), db_url=url)
    try:
        start_patiently(srv)
        yield helpers.Client(srv.url)
    finally:
        srv.stop()
        drop()


def _raw(api: Any, method: str, path: str, body: Any = None, **headers: str) -> requests.Response:
    return api.session.request(method, api.url + path, json=body, headers=headers, timeout=30)


def _create(api: Any, plural: str, body: dict[str, Any]) -> dict[str, Any]:
    status, data = api.post(f"/v2.0/{plural}", {plural[:-1]: body})
    assert status == 201, data
    return data[plural[:-1]]


def test_round_trip_over_http(api: Any) -> None:
    name = uuid.uuid4().hex
    net = _create(api, "networks", {"name": name})
    sub = _create(api, "subnets", {"network_id": net["id"], "ip_version": 4,
                                   "cidr": "10.40.0.0/24"})
    port = _create(api, "ports", {"network_id": net["id"], "name": name})
    assert port["fixed_ips"][0]["subnet_id"] == sub["id"]
    for plural, res in (("networks", net), ("subnets", sub), ("ports", port)):
        status, shown = api.get(f"/v2.0/{plural}/{res['id']}")
        assert status == 200
        assert {k: v for k, v in shown[plural[:-1]].items() if k != "revision_number"
                and k != "updated_at" and k != "subnets"} == \
            {k: v for k, v in res.items() if k not in ("revision_number", "updated_at", "subnets")}
    status, listed = api.get(f"/v2.0/ports?name={name}")
    assert status == 200 and [p["id"] for p in listed["ports"]] == [port["id"]]
    status, upd = api.put(f"/v2.0/ports/{port['id']}", {"port": {"name": "renamed"}})
    assert status == 200 and upd["port"]["name"] == "renamed"
    assert upd["port"]["revision_number"] > port["revision_number"]
    for plural, res in (("ports", port), ("subnets", sub), ("networks", net)):
        assert api.delete(f"/v2.0/{plural}/{res['id']}")[0] == 204
        assert api.get(f"/v2.0/{plural}/{res['id']}")[0] == 404


def test_json_booleans_and_timestamps(api: Any) -> None:
    net = _create(api, "networks", {"shared": True, "admin_state_up": False})
    sub = _create(api, "subnets", {"network_id": net["id"], "ip_version": 4,
                                   "cidr": "10.41.0.0/24", "enable_dhcp": False})
    port = _create(api, "ports", {"network_id": net["id"]})
    resp = _raw(api, "GET", f"/v2.0/networks/{net['id']}")
    # On the wire: JSON literals, not 0/1 from a TINYINT column.
    assert re.search(r'"shared":\s*true', resp.text)
    assert re.search(r'"admin_state_up":\s*false', resp.text)
    body = json.loads(_raw(api, "GET", f"/v2.0/subnets/{sub['id']}").text)["subnet"]
    assert body["enable_dhcp"] is False
    pool = _create(api, "subnetpools", {"name": "b", "prefixes": [f"10.{uuid.uuid4().int % 200}.0.0/16"],
                                        "shared": False})
    assert pool["shared"] is False and pool["is_default"] is False
    status, listed = api.get("/v2.0/networks?shared=true")
    assert status == 200 and net["id"] in [n["id"] for n in listed["networks"]]
    assert all(n["shared"] is True for n in listed["networks"])
    for res in (net, sub, port):
        assert ISO_Z.match(res["created_at"]) and ISO_Z.match(res["updated_at"])


def test_tags_over_http(api: Any) -> None:
    net = _create(api, "networks", {"name": "tagged"})
    base = f"/v2.0/networks/{net['id']}/tags"
    assert api.put(f"{base}/alpha")[0] == 201
    status, body = api.put(base, {"tags": ["b", "a"]})
    assert status == 200 and sorted(body["tags"]) == ["a", "b"]
    status, body = api.get("/v2.0/networks?tags=a,b")
    assert net["id"] in [n["id"] for n in body["networks"]]
    assert api.delete(f"{base}/a")[0] == 204
    status, shown = api.get(f"/v2.0/networks/{net['id']}")
    assert shown["network"]["tags"] == ["b"]
    assert shown["network"]["revision_number"] > net["revision_number"]


def test_if_match_conditional_update(api: Any) -> None:
    net = _create(api, "networks", {"name": "cond"})
    rev = net["revision_number"]
    resp = _raw(api, "PUT", f"/v2.0/networks/{net['id']}", {"network": {"name": "c1"}},
                **{"If-Match": f"revision_number={rev}"})
    assert resp.status_code == 200, resp.text
    assert resp.json()["network"]["revision_number"] > rev
    resp = _raw(api, "PUT", f"/v2.0/networks/{net['id']}", {"network": {"name": "c2"}},
                **{"If-Match": f"revision_number={rev}"})
    assert resp.status_code == 412, resp.text
    assert resp.json()["NeutronError"]["type"] == "RevisionNumberConstraintFailed"
    status, shown = api.get(f"/v2.0/networks/{net['id']}")
    assert shown["network"]["name"] == "c1"


def test_duplicate_mac_and_address_are_conflicts(api: Any) -> None:
    net = _create(api, "networks", {})
    sub = _create(api, "subnets", {"network_id": net["id"], "ip_version": 4,
                                   "cidr": "10.42.0.0/24"})
    _create(api, "ports", {"network_id": net["id"], "mac_address": "fa:16:3e:01:02:03",
                           "fixed_ips": [{"subnet_id": sub["id"], "ip_address": "10.42.0.9"}]})
    status, body = api.post("/v2.0/ports", {"port": {"network_id": net["id"],
                                                     "mac_address": "fa:16:3e:01:02:03"}})
    assert status == 409 and body["NeutronError"]["type"] == "MacAddressInUse"
    status, body = api.post("/v2.0/ports", {"port": {"network_id": net["id"], "fixed_ips": [
        {"subnet_id": sub["id"], "ip_address": "10.42.0.9"}]}})
    assert status == 409 and body["NeutronError"]["type"] == "IpAddressAlreadyAllocated"

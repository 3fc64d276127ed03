"""Floating IPs with port forwardings list in the same statements for 3 or 30,
and so do the forwardings of a floating IP (one query per page, never per row);
a port's delete lets go of its forwardings in the same statements for 3
floating IPs or 30."""
from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.inprocess import CountingApp

ADMIN = uuid.uuid4().hex
EXTRA = ("quota_router = -1\nquota_floatingip = -1\nquota_port = -1\n"
         "[DEFAULT]\nservice_plugins = router,port_forwarding\n")


class App(CountingApp):
    def call(self, method: str, path: str, project: str, **kw: Any) -> Any:
        headers = {"X-Project-Id": project, "X-User-Id": "u", "X-Roles": "admin"}
        result = self.client.simulate_request(method, path, headers=headers, **kw)
        assert result.status_code < 300, result.text
        return result.json

    def counted_as(self, path: str, project: str) -> tuple[int, Any]:
        headers = {"X-Project-Id": project, "X-User-Id": "u", "X-Roles": "member,reader"}
        return self.counted("GET", path, headers=headers)


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    yield App(tmp_path_factory.mktemp("pf_counts"), extra=EXTRA)


def _project_with(app: App, fips: int, i: int) -> tuple[str, str, str]:
    """A project whose port is forwarded from ``fips`` floating IPs; the
    project, the last floating IP and the port."""
    project = uuid.uuid4().hex
    ext = app.call("POST", "/v2.0/networks", ADMIN, json={"network": {
        "name": "ext", "router:external": True}})["network"]["id"]
    app.call("POST", "/v2.0/subnets", ADMIN, json={"subnet": {
        "network_id": ext, "ip_version": 4, "cidr": f"172.{16 + i}.0.0/16"}})
    net = app.call("POST", "/v2.0/networks", project, json={"network": {
        "name": "int", "project_id": project}})["network"]["id"]
    sub = app.call("POST", "/v2.0/subnets", project, json={"subnet": {
        "network_id": net, "ip_version": 4, "cidr": "10.0.0.0/24",
        "project_id": project}})["subnet"]["id"]
    router = app.call("POST", "/v2.0/routers", project, json={"router": {
        "project_id": project, "external_gateway_info": {"network_id": ext}}})["router"]["id"]
    app.call("PUT", f"/v2.0/routers/{router}/add_router_interface", project,
             json={"subnet_id": sub})
    port = app.call("POST", "/v2.0/ports", project, json={"port": {
        "network_id": net, "project_id": project}})["port"]
    ip = port["fixed_ips"][0]["ip_address"]
    fip_id = ""
    for n in range(fips):
        fip_id = app.call("POST", "/v2.0/floatingips", project, json={"floatingip": {
            "floating_network_id": ext, "project_id": project}})["floatingip"]["id"]
        for proto in ("tcp", "udp"):
            app.call("POST", f"/v2.0/floatingips/{fip_id}/port_forwardings", project, json={
                "port_forwarding": {"protocol": proto, "internal_port_id": port["id"],
                                    "internal_ip_address": ip, "internal_port": 1000 + n,
                                    "external_port": 80}})
    return project, fip_id, port["id"]


def test_floating_ips_with_forwardings_list_in_constant_statements(app: App) -> None:
    few_project, _, _ = _project_with(app, 3, 0)
    many_project, _, _ = _project_with(app, 30, 1)
    few, small = app.counted_as("/v2.0/floatingips", few_project)
    many, big = app.counted_as("/v2.0/floatingips", many_project)
    assert len(small["floatingips"]) == 3 and len(big["floatingips"]) == 30
    assert all(len(f["port_forwardings"]) == 2 for f in big["floatingips"])
    assert many == few, (few, many)


def test_forwardings_of_a_floating_ip_list_in_constant_statements(app: App) -> None:
    project, fip, _ = _project_with(app, 1, 2)
    url = f"/v2.0/floatingips/{fip}/port_forwardings"
    two, body = app.counted_as(url, project)
    assert len(body["port_forwardings"]) == 2
    port = body["port_forwardings"][0]["internal_port_id"]
    for n in range(20):
        app.call("POST", url, project, json={"port_forwarding": {
            "protocol": "sctp", "internal_port_id": port, "external_port": 100 + n,
            "internal_ip_address": body["port_forwardings"][0]["internal_ip_address"],
            "internal_port": 2000 + n}})
    many, body = app.counted_as(url, project)
    assert len(body["port_forwardings"]) == 22
    assert many == two, (two, many)


def test_a_port_forwarded_from_many_floating_ips_is_deleted_in_constant_statements(
        app: App) -> None:
    deletes = []
    for fips, i in ((3, 3), (30, 4)):
        project, _, port = _project_with(app, fips, i)
        headers = {"X-Project-Id": project, "X-User-Id": "u", "X-Roles": "admin"}
        deletes.append(app.counted("DELETE", f"/v2.0/ports/{port}", headers=headers)[0])
        fips_left = app.call("GET", f"/v2.0/floatingips?project_id={project}",
                             project)["floatingips"]
        assert len(fips_left) == fips
        assert all(f["router_id"] is None and f["port_forwardings"] == [] for f in fips_left)
    assert deletes[0] == deletes[1], deletes

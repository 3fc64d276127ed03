"""IP availability of many networks costs the same statements as of a few (no N+1)."""
from __future__ import annotations

import uuid
from typing import Iterator

import pytest

from tests.inprocess import CountingApp


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CountingApp]:
    yield CountingApp(tmp_path_factory.mktemp("ipa-counts"))


def _networks(app: CountingApp, project: str, count: int) -> None:
    for i in range(count):
        net = app.client.simulate_post("/v2.0/networks", json={"network": {
            "name": f"n{i}", "project_id": project}}).json["network"]["id"]
        for cidr in (f"10.{i % 250}.0.0/24", f"fd00:{i:x}::/64"):
            app.client.simulate_post("/v2.0/subnets", json={"subnet": {
                "network_id": net, "cidr": cidr, "project_id": project,
                "ip_version": 6 if ":" in cidr else 4}})
        app.client.simulate_post("/v2.0/ports", json={"ports": [
            {"network_id": net, "project_id": project} for _ in range(3)]})


@pytest.mark.parametrize("query", ["", "&ip_version=4", "&fields=network_id&fields=used_ips"])
def test_listing_3_or_40_networks_costs_the_same_statements(app: CountingApp, query: str) -> None:
    tag = uuid.uuid4().hex[:8]
    _networks(app, f"few-{tag}", 3)
    _networks(app, f"many-{tag}", 40)
    few, small = app.counted("GET", f"/v2.0/network-ip-availabilities?project_id=few-{tag}"
                                    f"{query}")
    many, big = app.counted("GET", f"/v2.0/network-ip-availabilities?project_id=many-{tag}"
                                   f"{query}")
    assert len(small["network_ip_availabilities"]) == 3
    assert len(big["network_ip_availabilities"]) == 40
    assert many == few
    assert all(n["used_ips"] == (3 if "ip_version" in query else 6)
               for n in big["network_ip_availabilities"])


def test_show_is_a_handful_of_statements(app: CountingApp) -> None:
    _networks(app, "one", 1)
    listed = app.client.simulate_get("/v2.0/network-ip-availabilities?project_id=one").json
    net = listed["network_ip_availabilities"][0]["network_id"]
    count, body = app.counted("GET", f"/v2.0/network-ip-availabilities/{net}")
    assert body["network_ip_availability"]["used_ips"] == 6
    assert count <= 8

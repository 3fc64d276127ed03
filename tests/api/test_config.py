"""Server options that change IPAM: ``allow_overlapping_ips = False`` and
``base_mac``."""
from __future__ import annotations

from typing import Iterator

import pytest

from tests.api import _helpers as h
from tests.conftest import Client, Server


@pytest.fixture(scope="module")
def strict_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("nooverlap"),
                 extra="allow_overlapping_ips = False\n"
                       "base_mac = fa:16:3f:4f:00:00\n").start()
    yield srv
    srv.stop()


def test_overlap_across_networks_is_400_without_overlapping_ips(strict_server):
    admin = Client(strict_server.url)
    a, b = h.network(admin), h.network(admin)
    h.subnet(admin, a["id"], "10.60.0.0/24")
    msg = h.error(admin.post("/v2.0/subnets", {"subnet": {
        "network_id": b["id"], "ip_version": 4, "cidr": "10.60.0.0/25"}}), 400, "InvalidInput")
    assert "overlaps with another subnet" in msg
    assert h.subnet(admin, b["id"], "10.61.0.0/24")["cidr"] == "10.61.0.0/24"


def test_overlap_across_projects_is_refused_without_overlapping_ips(strict_server):
    one, two = (Client(strict_server.url, p, "member") for p in ("proj-one", "proj-two"))
    h.subnet(one, h.network(one)["id"], "10.70.0.0/24")
    h.error(two.post("/v2.0/subnets", {"subnet": {
        "network_id": h.network(two)["id"], "ip_version": 4, "cidr": "10.70.0.0/24"}}), 400)


def test_port_mac_keeps_base_mac_prefix_and_nonzero_fourth_octet(strict_server):
    admin = Client(strict_server.url)
    net = h.network(admin)
    macs = {h.port(admin, net["id"])["mac_address"] for _ in range(5)}
    assert all(m.startswith("fa:16:3f:4f:") for m in macs)
    assert len(macs) == 5

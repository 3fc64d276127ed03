"""The IPAM conflicts on every SQL backend: each maps its own integrity
errors, so each must still answer with upstream's 409s and roll back."""
from __future__ import annotations

from typing import Iterator

import pytest

from tests.api import _helpers as h
from tests.conftest import Client, Server


@pytest.fixture
def backend_admin(tmp_path, db_url) -> Iterator[Client]:
    srv = Server(tmp_path, db_url=db_url).start()
    try:
        yield Client(srv.url)
    finally:
        srv.stop()


@pytest.mark.backend
def test_ipam_conflicts_and_bulk_rollback_on_each_backend(backend_admin):
    admin = backend_admin
    net = h.network(admin)
    sub = h.subnet(admin, net["id"], "10.0.0.0/29")
    first = h.port(admin, net["id"], fixed_ips=[{"ip_address": "10.0.0.2"}])
    h.error(admin.post("/v2.0/ports", {"port": {"network_id": net["id"],
                                                "fixed_ips": [{"ip_address": "10.0.0.2"}]}}),
            409, "IpAddressAlreadyAllocated")
    h.error(admin.post("/v2.0/ports", {"port": {"network_id": net["id"],
                                                "mac_address": first["mac_address"]}}),
            409, "MacAddressInUse")
    bulk = [{"network_id": net["id"], "name": "bulk"}] * 5  # only 4 addresses are left
    h.error(admin.post("/v2.0/ports", {"ports": bulk}), 409, "IpAddressGenerationFailure")
    assert admin.get("/v2.0/ports?name=bulk")[1]["ports"] == []
    for _ in range(4):
        h.port(admin, net["id"])
    h.error(admin.post("/v2.0/ports", {"port": {"network_id": net["id"]}}), 409,
            "IpAddressGenerationFailure")
    h.error(admin.delete(f"/v2.0/subnets/{sub['id']}"), 409, "SubnetInUse")
    h.error(admin.delete(f"/v2.0/networks/{net['id']}"), 409, "NetworkInUse")
    h.error(admin.post("/v2.0/subnets", {"subnet": {"network_id": net["id"], "ip_version": 4,
                                                    "cidr": "10.0.0.0/24"}}), 400, "InvalidInput")

"""``floatingip-pools``: the subnets floating IPs can come from, as upstream 29
answers ``GET /v2.0/floatingip_pools``."""
from __future__ import annotations

from tests.api import _helpers as h
from tests.l3 import _l3 as l3

URL = "/v2.0/floatingip_pools"


def test_pools_are_subnets_of_external_networks_named_for_the_caller(admin, member, other):
    net, sub = l3.external_network(admin)
    private = l3.private_subnet(member)
    for client in (member, other, l3.reader_of(member)):
        project = client.session.headers["X-Project-Id"]
        pools = client.get(URL)[1]["floatingip_pools"]
        assert {"subnet_id": sub["id"], "subnet_name": sub["name"], "network_id": net["id"],
                "cidr": sub["cidr"], "project_id": project, "tenant_id": project} in pools
        assert private["id"] not in [p["subnet_id"] for p in pools]
    assert sub["id"] in [p["subnet_id"] for p in admin.get(URL)[1]["floatingip_pools"]]
    assert {"cidr": sub["cidr"]} in admin.get(f"{URL}?fields=cidr")[1]["floatingip_pools"]


def test_pools_are_read_only_and_unfilterable(member):
    msg = h.error(member.get(f"{URL}?cidr=198.51.100.0/24"), 400, "HTTPBadRequest")
    assert msg == "['cidr'] is invalid attribute for filtering"
    msg = h.error(member.post(URL, {"floatingip_pool": {}}), 400, "HTTPBadRequest")
    assert msg == "Attribute 'project_id' not allowed in POST"
    aliases = {e["alias"] for e in member.get("/v2.0/extensions")[1]["extensions"]}
    assert {"floatingip-pools", "fip-port-details"} <= aliases


def test_a_network_no_longer_external_is_no_pool(admin, member):
    net, sub = l3.external_network(admin)
    assert admin.put(f"/v2.0/networks/{net['id']}", {"network": {
        "router:external": False}})[0] == 200
    assert sub["id"] not in [p["subnet_id"] for p in member.get(URL)[1]["floatingip_pools"]]

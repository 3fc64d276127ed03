"""``get_advertised_routes``: what a speaker advertises for its gateway
networks, as upstream computes it: floating IPs associated through a
router on the network (``/32``, next hop the router's gateway address) and
the subnets behind such a router that share the network's address scope
(next hop the same), each only while the speaker advertises that kind and
the router is up."""
from __future__ import annotations

import uuid
from typing import Any

from tests.conftest import Client

SPEAKERS = "/v2.0/bgp-speakers"


def _made(client: Client, path: str, key: str, **attrs: Any) -> dict[str, Any]:
    status, body = client.post(path, {key: attrs})
    assert status == 201, body
    return dict(body[key])


def _routes(admin: Client, speaker_id: str) -> list[dict[str, Any]]:
    status, body = admin.get(f"{SPEAKERS}/{speaker_id}/get_advertised_routes")
    assert status == 200, body
    return list(body["advertised_routes"])


def _scoped_topology(admin: Client, owner: Client) -> dict[str, Any]:
    """An external network and two project subnets, from pools of a shared
    address scope and of another scope, behind one router."""
    octet = uuid.uuid4().int % 200 + 20
    scope = _made(admin, "/v2.0/address-scopes", "address_scope", name="s", ip_version=4,
                  shared=True)
    elsewhere = _made(admin, "/v2.0/address-scopes", "address_scope", name="o", ip_version=4,
                      shared=True)
    ext = _made(admin, "/v2.0/networks", "network", name="ext", **{"router:external": True})
    ext_pool = _made(admin, "/v2.0/subnetpools", "subnetpool", name="e", default_prefixlen=24,
                     prefixes=[f"{octet}.0.0.0/16"], address_scope_id=scope["id"])
    in_pool = _made(admin, "/v2.0/subnetpools", "subnetpool", name="i", default_prefixlen=24,
                    prefixes=[f"10.{octet}.0.0/16"], address_scope_id=scope["id"], shared=True)
    out_pool = _made(admin, "/v2.0/subnetpools", "subnetpool", name="x", default_prefixlen=24,
                     prefixes=[f"11.{octet}.0.0/16"], address_scope_id=elsewhere["id"],
                     shared=True)
    _made(admin, "/v2.0/subnets", "subnet", network_id=ext["id"], ip_version=4,
          cidr=f"{octet}.0.0.0/24", subnetpool_id=ext_pool["id"])
    net = _made(owner, "/v2.0/networks", "network", name="p")
    inside = _made(owner, "/v2.0/subnets", "subnet", network_id=net["id"], ip_version=4,
                   cidr=f"10.{octet}.1.0/24", subnetpool_id=in_pool["id"])
    net2 = _made(owner, "/v2.0/networks", "network", name="p2")
    outside = _made(owner, "/v2.0/subnets", "subnet", network_id=net2["id"], ip_version=4,
                    cidr=f"11.{octet}.1.0/24", subnetpool_id=out_pool["id"])
    router = _made(admin, "/v2.0/routers", "router", name="r",
                   external_gateway_info={"network_id": ext["id"]})
    for subnet in (inside, outside):
        status, body = admin.put(f"/v2.0/routers/{router['id']}/add_router_interface",
                                 {"subnet_id": subnet["id"]})
        assert status == 200, body
    gateway = router["external_gateway_info"]["external_fixed_ips"][0]["ip_address"]
    return {"ext": ext, "net": net, "inside": inside, "router": router, "gateway": gateway}


def test_project_subnets_in_the_gateway_networks_scope_are_advertised(
        admin: Client, owner: Client) -> None:
    topo = _scoped_topology(admin, owner)
    speaker = _made(admin, SPEAKERS, "bgp_speaker", local_as=64512, ip_version=4)
    assert _routes(admin, speaker["id"]) == []
    admin.put(f"{SPEAKERS}/{speaker['id']}/add_gateway_network",
              {"network_id": topo["ext"]["id"]})
    expected = [{"destination": topo["inside"]["cidr"], "next_hop": topo["gateway"]}]
    assert _routes(admin, speaker["id"]) == expected
    router_id = topo["router"]["id"]
    admin.put(f"/v2.0/routers/{router_id}", {"router": {"admin_state_up": False}})
    assert _routes(admin, speaker["id"]) == []
    admin.put(f"/v2.0/routers/{router_id}", {"router": {"admin_state_up": True}})
    assert _routes(admin, speaker["id"]) == expected
    admin.put(f"{SPEAKERS}/{speaker['id']}",
              {"bgp_speaker": {"advertise_tenant_networks": False}})
    assert _routes(admin, speaker["id"]) == []
    six = _made(admin, SPEAKERS, "bgp_speaker", local_as=64512, ip_version=6)
    admin.put(f"{SPEAKERS}/{six['id']}/add_gateway_network", {"network_id": topo["ext"]["id"]})
    assert _routes(admin, six["id"]) == []


def test_floating_ips_are_advertised_while_associated(admin: Client, owner: Client) -> None:
    topo = _scoped_topology(admin, owner)
    speaker = _made(admin, SPEAKERS, "bgp_speaker", local_as=65000, ip_version=4,
                    advertise_tenant_networks=False)
    admin.put(f"{SPEAKERS}/{speaker['id']}/add_gateway_network",
              {"network_id": topo["ext"]["id"]})
    port = _made(owner, "/v2.0/ports", "port", network_id=topo["net"]["id"])
    fip = _made(owner, "/v2.0/floatingips", "floatingip",
                floating_network_id=topo["ext"]["id"])
    assert _routes(admin, speaker["id"]) == []
    status, body = owner.put(f"/v2.0/floatingips/{fip['id']}",
                             {"floatingip": {"port_id": port["id"]}})
    assert status == 200, body
    host_route = {"destination": f"{fip['floating_ip_address']}/32",
                  "next_hop": topo["gateway"]}
    assert _routes(admin, speaker["id"]) == [host_route]
    admin.put(f"{SPEAKERS}/{speaker['id']}",
              {"bgp_speaker": {"advertise_floating_ip_host_routes": False}})
    assert _routes(admin, speaker["id"]) == []
    admin.put(f"{SPEAKERS}/{speaker['id']}",
              {"bgp_speaker": {"advertise_floating_ip_host_routes": True}})
    owner.put(f"/v2.0/floatingips/{fip['id']}", {"floatingip": {"port_id": None}})
    assert _routes(admin, speaker["id"]) == []


def test_a_floating_ip_of_an_unscoped_network_is_advertised_too(admin: Client,
                                                                owner: Client) -> None:
    ext = _made(admin, "/v2.0/networks", "network", name="pub", **{"router:external": True})
    _made(admin, "/v2.0/subnets", "subnet", network_id=ext["id"], ip_version=4,
          cidr="203.0.113.0/24")
    net = _made(owner, "/v2.0/networks", "network", name="p")
    sub = _made(owner, "/v2.0/subnets", "subnet", network_id=net["id"], ip_version=4,
                cidr="10.99.0.0/24")
    router = _made(admin, "/v2.0/routers", "router", external_gateway_info={
        "network_id": ext["id"]})
    admin.put(f"/v2.0/routers/{router['id']}/add_router_interface", {"subnet_id": sub["id"]})
    speaker = _made(admin, SPEAKERS, "bgp_speaker", local_as=64512, ip_version=4)
    admin.put(f"{SPEAKERS}/{speaker['id']}/add_gateway_network", {"network_id": ext["id"]})
    assert _routes(admin, speaker["id"]) == []  # no address scope: no project routes
    port = _made(owner, "/v2.0/ports", "port", network_id=net["id"])
    fip = _made(owner, "/v2.0/floatingips", "floatingip", floating_network_id=ext["id"],
                port_id=port["id"])
    gateway = router["external_gateway_info"]["external_fixed_ips"][0]["ip_address"]
    assert _routes(admin, speaker["id"]) == [
        {"destination": f"{fip['floating_ip_address']}/32", "next_hop": gateway}]

"""NDP proxies (``l3-ndp-proxy``) and routers' ``enable_ndp_proxy``
(``l3-ext-ndp-proxy``), with the checks, codes and error types observed on
upstream Neutron 29 with its ``ndp_proxy`` service plugin."""
from __future__ import annotations

import itertools
import uuid

import pytest

from tests.api import _helpers as h
from tests.l3 import _l3 as l3

_nets = itertools.count(1)


def v6_pool(admin, scope_id):
    n = next(_nets)
    prefix = f"2001:db8:{0x7000 + n:x}::/48"
    return h.pool(admin, [prefix], default_prefixlen=64, address_scope_id=scope_id, shared=True)


def scope(admin):
    return h.created(admin.post("/v2.0/address-scopes", {"address_scope": {
        "name": h.unique("scope"), "ip_version": 6, "shared": True}}), "address_scope")


def ext_network(admin, pool):
    net = h.network(admin, project_id=uuid.uuid4().hex, **{l3.EXT: True})
    h.subnet(admin, net["id"], None, ip_version=6, subnetpool_id=pool["id"])
    h.subnet(admin, net["id"], f"198.51.{next(_nets) % 250}.0/24")
    return net


def internal_subnet(client, pool):
    net = h.network(client)
    return h.subnet(client, net["id"], None, ip_version=6, subnetpool_id=pool["id"],
                    ipv6_ra_mode="slaac", ipv6_address_mode="slaac")


@pytest.fixture
def topo(admin, member):
    """``member``'s router proxying on an external network with IPv6 in an
    address scope, attached to an internal IPv6 subnet of the same scope
    with a port on it."""
    pool = v6_pool(admin, scope(admin)["id"])
    ext = ext_network(admin, pool)
    router = l3.router(member, external_gateway_info={"network_id": ext["id"]},
                       enable_ndp_proxy=True)
    sub = internal_subnet(member, pool)
    l3.add_interface(member, router["id"], subnet_id=sub["id"])
    port = h.port(member, sub["network_id"])
    return {"pool": pool, "ext": ext, "router": router, "sub": sub, "port": port,
            "ip": port["fixed_ips"][0]["ip_address"]}


def proxy_body(topo, **attrs):
    return {"ndp_proxy": {"router_id": topo["router"]["id"], "port_id": topo["port"]["id"],
                          **attrs}}


def create(client, topo, **attrs):
    return client.post("/v2.0/ndp_proxies", proxy_body(topo, **attrs))


def test_extensions_are_listed_as_upstream(admin):
    shown = {e["alias"]: e for e in admin.get("/v2.0/extensions")[1]["extensions"]}
    assert shown["l3-ndp-proxy"]["name"] == "name"  # upstream's definition says so
    assert shown["l3-ext-ndp-proxy"]["name"] == "Router support to enable NDP proxy"


def test_proxy_takes_the_ports_address_on_the_routers_subnet(member, topo):
    proxy = h.created(create(member, topo, name="web"), "ndp_proxy")
    assert proxy == {"id": proxy["id"], "name": "web", "description": "",
                     "project_id": member.session.headers["X-Project-Id"],
                     "tenant_id": member.session.headers["X-Project-Id"],
                     "router_id": topo["router"]["id"], "port_id": topo["port"]["id"],
                     "ip_address": topo["ip"], "revision_number": 0,
                     "created_at": proxy["created_at"], "updated_at": proxy["updated_at"]}
    assert member.get(f"/v2.0/ndp_proxies/{proxy['id']}") == (200, {"ndp_proxy": proxy})
    listed = member.get("/v2.0/ndp_proxies", params={"router_id": topo["router"]["id"]})[1]
    assert listed == {"ndp_proxies": [proxy]}


def test_name_and_description_change_nothing_else(member, topo):
    proxy = h.created(create(member, topo), "ndp_proxy")
    status, body = member.put(f"/v2.0/ndp_proxies/{proxy['id']}",
                              {"ndp_proxy": {"name": "n", "description": "d"}})
    assert status == 200, body
    assert body["ndp_proxy"]["name"] == "n" and body["ndp_proxy"]["revision_number"] == 1
    h.error(member.put(f"/v2.0/ndp_proxies/{proxy['id']}",
                       {"ndp_proxy": {"ip_address": "2001:db8::1"}}), 400)


def test_other_project_neither_sees_nor_changes_a_proxy_admin_does(member, other, admin, topo):
    proxy = h.created(create(member, topo), "ndp_proxy")
    url = f"/v2.0/ndp_proxies/{proxy['id']}"
    h.error(other.get(url), 404, "NDPProxyNotFound")
    h.error(other.put(url, {"ndp_proxy": {"name": "x"}}), 404, "NDPProxyNotFound")
    h.error(other.delete(url), 404, "NDPProxyNotFound")
    assert other.get("/v2.0/ndp_proxies")[1] == {"ndp_proxies": []}
    assert admin.get(url)[0] == 200
    assert admin.delete(url)[0] == 204
    h.error(member.get(url), 404, "NDPProxyNotFound")


def test_other_project_cannot_proxy_anothers_port(other, topo):
    h.error(create(other, topo), 404, "PortNotFound")


def test_one_proxy_per_address(member, admin, topo):
    h.created(create(member, topo), "ndp_proxy")
    h.error(create(member, topo), 409, "NeutronDbObjectDuplicateEntry")
    h.error(create(admin, topo, ip_address=topo["ip"]), 409, "NeutronDbObjectDuplicateEntry")


def test_address_must_be_one_of_the_ports(member, topo):
    msg = h.error(create(member, topo, ip_address="2001:db8:1::5"), 400, "InvalidAddress")
    assert msg == (f"The address 2001:db8:1::5 is invalid, reason: This address not belong "
                   f"to the port {topo['port']['id']}.")


def test_port_without_ipv6_is_refused(member, topo):
    sub = l3.private_subnet(member)
    l3.add_interface(member, topo["router"]["id"], subnet_id=sub["id"])
    port = h.port(member, sub["network_id"])
    msg = h.error(create(member, {**topo, "port": port}), 400, "BadRequest")
    assert "must allocate one IPv6 address at least" in msg


def test_port_on_a_subnet_the_router_is_not_on_is_unreachable(member, admin, topo):
    sub = internal_subnet(member, topo["pool"])
    port = h.port(member, sub["network_id"])
    for client in (member, admin):
        h.error(create(client, {**topo, "port": port}), 409, "PortUnreachableRouter")


def test_router_must_have_proxying_enabled(member, admin, topo):
    assert member.put(f"/v2.0/routers/{topo['router']['id']}",
                      {"router": {"enable_ndp_proxy": False}})[0] == 200
    for client in (member, admin):
        h.error(create(client, topo), 409, "RouterNDPProxyNotEnable")


def test_internal_network_in_another_address_scope_conflicts(member, admin, topo):
    pool = v6_pool(admin, scope(admin)["id"])
    sub = internal_subnet(member, pool)
    l3.add_interface(member, topo["router"]["id"], subnet_id=sub["id"])
    port = h.port(member, sub["network_id"])
    h.error(create(member, {**topo, "port": port}), 409, "AddressScopeConflict")


def test_other_projects_router_is_not_found(other, admin, topo):
    net = h.network(other)
    sub = h.subnet(other, net["id"], None, ip_version=6, subnetpool_id=topo["pool"]["id"])
    port = h.port(other, net["id"])
    # the router's port on that network is not the other project's to see
    h.error(create(other, {**topo, "port": port}), 409, "PortUnreachableRouter")
    l3.add_interface(admin, topo["router"]["id"], subnet_id=sub["id"])
    h.error(create(other, {**topo, "port": port}), 404, "RouterNotFound")


def test_enable_ndp_proxy_defaults_and_needs_an_ipv6_scoped_gateway(member, admin, topo):
    assert topo["router"]["enable_ndp_proxy"] is True
    plain = l3.router(member)
    assert plain["enable_ndp_proxy"] is False
    gw = l3.router(member, external_gateway_info={"network_id": topo["ext"]["id"]})
    assert gw["enable_ndp_proxy"] is False  # [DEFAULT] enable_ndp_proxy_by_default
    for client in (member, admin):
        msg = h.error(client.post("/v2.0/routers", {"router": {
            "name": h.unique("r"), "enable_ndp_proxy": True}}), 409, "RouterGatewayNotValid")
        assert "The request body not contain external gateway information" in msg
    v4_only, _ = l3.external_network(admin)
    before = len(member.get("/v2.0/routers")[1]["routers"])
    h.error(member.post("/v2.0/routers", {"router": {
        "name": h.unique("r"), "enable_ndp_proxy": True,
        "external_gateway_info": {"network_id": v4_only["id"]}}}), 409, "RouterGatewayNotValid")
    assert len(member.get("/v2.0/routers")[1]["routers"]) == before  # nothing half-made
    h.error(member.put(f"/v2.0/routers/{plain['id']}", {"router": {"enable_ndp_proxy": True}}),
            409, "RouterGatewayNotValid")
    status, body = member.put(f"/v2.0/routers/{gw['id']}", {"router": {"enable_ndp_proxy": True}})
    assert status == 200 and body["router"]["enable_ndp_proxy"] is True


def test_gateway_stays_while_proxies_use_it(member, admin, topo):
    h.created(create(member, topo), "ndp_proxy")
    url = f"/v2.0/routers/{topo['router']['id']}"
    for client in (member, admin):
        msg = h.error(client.put(url, {"router": {"external_gateway_info": {}}}), 409,
                      "RouterGatewayInUseByNDPProxy")
        assert topo["router"]["id"] in msg
    assert member.get(url)[1]["router"]["external_gateway_info"] is not None


def test_gateway_keeps_ipv6_while_proxying(admin, topo):
    router = admin.get(f"/v2.0/routers/{topo['router']['id']}")[1]["router"]
    v4 = [f for f in router["external_gateway_info"]["external_fixed_ips"]
          if ":" not in f["ip_address"]]
    h.error(admin.put(f"/v2.0/routers/{router['id']}", {"router": {"external_gateway_info": {
        "network_id": topo["ext"]["id"], "external_fixed_ips": v4}}}), 409,
        "RouterIPv6GatewayInUse")


def test_interface_stays_while_proxies_go_through_it(member, admin, topo):
    proxy = h.created(create(member, topo), "ndp_proxy")
    for client in (member, admin):
        h.error(l3.remove_interface(client, topo["router"]["id"], subnet_id=topo["sub"]["id"]),
                409, "RouterInterfaceInUseByNDPProxy")
    assert member.delete(f"/v2.0/ndp_proxies/{proxy['id']}")[0] == 204
    assert l3.remove_interface(member, topo["router"]["id"],
                               subnet_id=topo["sub"]["id"])[0] == 200


def test_disabling_is_allowed_with_proxies_as_upstream(member, topo):
    h.created(create(member, topo), "ndp_proxy")
    status, body = member.put(f"/v2.0/routers/{topo['router']['id']}",
                              {"router": {"enable_ndp_proxy": False}})
    assert status == 200 and body["router"]["enable_ndp_proxy"] is False


def test_proxy_goes_with_its_port(member, topo):
    proxy = h.created(create(member, topo), "ndp_proxy")
    assert member.delete(f"/v2.0/ports/{topo['port']['id']}")[0] == 204
    h.error(member.get(f"/v2.0/ndp_proxies/{proxy['id']}"), 404, "NDPProxyNotFound")


def test_update_not_naming_it_sets_what_the_gateway_allows_as_upstream(member, topo):
    """Observed on upstream 29: a router made with ``enable_ndp_proxy`` false
    shows true after an update of its name when its gateway could proxy."""
    r = l3.router(member, external_gateway_info={"network_id": topo["ext"]["id"]},
                  enable_ndp_proxy=False)
    assert r["enable_ndp_proxy"] is False
    url = f"/v2.0/routers/{r['id']}"
    assert member.put(url, {"router": {"name": "y"}})[1]["router"]["enable_ndp_proxy"] is True
    assert member.put(url, {"router": {"enable_ndp_proxy": False}}
                      )[1]["router"]["enable_ndp_proxy"] is False
    assert member.get(url)[1]["router"]["enable_ndp_proxy"] is False


def test_refused_update_changes_nothing(member, admin, topo):
    """Removing the gateway and enabling proxying in one update is refused
    (409, as upstream) before anything is written: the router keeps its
    gateway and name, whatever the request's other attributes said."""
    r = l3.router(member, external_gateway_info={"network_id": topo["ext"]["id"]},
                  enable_ndp_proxy=False)
    url = f"/v2.0/routers/{r['id']}"
    h.error(member.put(url, {"router": {"name": "changed", "external_gateway_info": {},
                                        "enable_ndp_proxy": True}}),
            409, "RouterGatewayNotValid")
    after = member.get(url)[1]["router"]
    assert after["external_gateway_info"]["network_id"] == topo["ext"]["id"]
    assert after["name"] == r["name"]
    v4_only, _ = l3.external_network(admin)
    h.error(member.put(url, {"router": {"external_gateway_info": {"network_id": v4_only["id"]},
                                        "enable_ndp_proxy": True}}),
            409, "RouterGatewayNotValid")
    after = member.get(url)[1]["router"]
    assert after["external_gateway_info"]["network_id"] == topo["ext"]["id"]
    plain = l3.router(member)
    h.error(member.put(f"/v2.0/routers/{plain['id']}",
                       {"router": {"name": "changed", "enable_ndp_proxy": True}}),
            409, "RouterGatewayNotValid")
    assert member.get(f"/v2.0/routers/{plain['id']}")[1]["router"]["name"] == plain["name"]

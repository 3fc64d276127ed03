"""``floating-ip-router-writable``: the hosting router of a floating IP may be
asked for on create and update, as upstream Neutron 29 answers: it hosts an
associated floating IP when it has a gateway on the floating network, even
with no interface on the port's subnet (an indirect topology)."""
from __future__ import annotations

import pytest

from tests.api import _helpers as h
from tests.l3 import _l3 as l3


@pytest.fixture
def indirect(admin, member):
    """A port behind an inner router with no gateway; the outer router has the
    gateway and reaches the inner one over a transit network."""
    ext, _ = l3.external_network(admin)
    sub = l3.private_subnet(member)
    transit = l3.private_subnet(member)
    inner = l3.router(member)
    outer = l3.router(member, external_gateway_info={"network_id": ext["id"]})
    l3.add_interface(member, inner["id"], subnet_id=sub["id"])
    l3.add_interface(member, inner["id"], port_id=h.port(member, transit["network_id"])["id"])
    l3.add_interface(member, outer["id"], port_id=h.port(member, transit["network_id"])["id"])
    port = h.port(member, sub["network_id"])
    return {"ext": ext, "inner": inner, "outer": outer, "port": port}


def _fip(ext, **attrs):
    return {"floatingip": {"floating_network_id": ext["id"], **attrs}}


def test_alias_is_listed(admin):
    aliases = {e["alias"] for e in admin.get("/v2.0/extensions")[1]["extensions"]}
    assert "floating-ip-router-writable" in aliases


def test_requested_router_hosts_a_port_it_does_not_reach_directly(member, indirect):
    ext, port = indirect["ext"], indirect["port"]
    # without a router asked for, none joins the port's subnet to the network
    h.error(member.post("/v2.0/floatingips", _fip(ext, port_id=port["id"])), 404,
            "ExternalGatewayForFloatingIPNotFound")
    fip = h.created(member.post("/v2.0/floatingips", _fip(
        ext, port_id=port["id"], router_id=indirect["outer"]["id"])), "floatingip")
    assert fip["router_id"] == indirect["outer"]["id"] and fip["port_id"] == port["id"]
    assert member.get(f"/v2.0/floatingips?router_id={indirect['outer']['id']}")[1][
        "floatingips"][0]["id"] == fip["id"]


def test_router_without_gateway_on_the_floating_network_is_a_conflict(admin, member, indirect):
    other_ext, _ = l3.external_network(admin)
    for router in (indirect["outer"], indirect["inner"]):
        msg = h.error(member.post("/v2.0/floatingips", _fip(
            other_ext, port_id=indirect["port"]["id"], router_id=router["id"])), 409, "Conflict")
        assert msg == "An unknown exception occurred."  # upstream's text, as it is
    assert member.get(f"/v2.0/floatingips?floating_network_id={other_ext['id']}")[1][
        "floatingips"] == []


def test_unknown_or_invisible_router_is_not_found(admin, member, other, indirect):
    ext, port = indirect["ext"], indirect["port"]
    msg = h.error(member.post("/v2.0/floatingips", _fip(
        ext, port_id=port["id"], router_id=h.ZERO_UUID)), 404, "RouterNotFound")
    assert msg == f"Router {h.ZERO_UUID} could not be found"
    theirs = l3.router(other, external_gateway_info={"network_id": ext["id"]})
    msg = h.error(member.post("/v2.0/floatingips", _fip(
        ext, port_id=port["id"], router_id=theirs["id"])), 404, "RouterNotFound")
    assert msg == f"Router {theirs['id']} could not be found"
    msg = h.error(member.post("/v2.0/floatingips", _fip(
        ext, port_id=port["id"], router_id="abc")), 400, "HTTPBadRequest")
    assert msg == "Invalid input for router_id. Reason: 'abc' is not a valid UUID."
    # an admin may put the floating IP on any router with the gateway
    fip = h.created(admin.post("/v2.0/floatingips", _fip(
        ext, port_id=port["id"], router_id=theirs["id"],
        project_id=member.session.headers["X-Project-Id"])), "floatingip")
    assert fip["router_id"] == theirs["id"]


def test_update_moves_an_associated_floating_ip_and_leaves_others(admin, member, other,
                                                                 indirect):
    ext, port = indirect["ext"], indirect["port"]
    fip = h.created(member.post("/v2.0/floatingips", _fip(
        ext, port_id=port["id"], router_id=indirect["outer"]["id"])), "floatingip")
    url = f"/v2.0/floatingips/{fip['id']}"
    second = l3.router(member, external_gateway_info={"network_id": ext["id"]})
    status, body = member.put(url, {"floatingip": {"router_id": second["id"]}})
    assert status == 200, body
    assert body["floatingip"]["router_id"] == second["id"]
    assert body["floatingip"]["port_id"] == port["id"]
    msg = h.error(member.put(url, {"floatingip": {"router_id": indirect["inner"]["id"]}}),
                  409, "Conflict")
    assert msg == "An unknown exception occurred."
    theirs = l3.router(other, external_gateway_info={"network_id": ext["id"]})
    h.error(member.put(url, {"floatingip": {"router_id": theirs["id"]}}), 404,
            "RouterNotFound")
    h.error(other.put(url, {"floatingip": {"router_id": theirs["id"]}}), 404,
            "FloatingIPNotFound")
    status, body = admin.put(url, {"floatingip": {"router_id": theirs["id"]}})
    assert status == 200 and body["floatingip"]["router_id"] == theirs["id"]
    # disassociated, with or without a router named: no router
    status, body = member.put(url, {"floatingip": {"port_id": None,
                                                   "router_id": second["id"]}})
    assert status == 200 and body["floatingip"]["router_id"] is None
    # a router named for an unassociated floating IP changes nothing
    status, body = member.put(url, {"floatingip": {"router_id": second["id"]}})
    assert status == 200 and body["floatingip"]["router_id"] is None
    reader = l3.reader_of(member)
    h.error(reader.put(url, {"floatingip": {"router_id": second["id"]}}), 403,
            "PolicyNotAuthorized")


def test_unassociated_create_ignores_the_router(member, indirect):
    fip = h.created(member.post("/v2.0/floatingips", _fip(
        indirect["ext"], router_id=indirect["outer"]["id"])), "floatingip")
    assert fip["router_id"] is None

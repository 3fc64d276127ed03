"""Floating IPs over the API, as observed on upstream Neutron 29."""
from __future__ import annotations

import pytest

from tests.api import _helpers as h
from tests.l3 import _l3 as l3

FIP_OWNER = "network:floatingip"


@pytest.fixture
def topology(admin, member):
    """An external network, a router with its gateway there and an
    interface on a private subnet, and a port on that subnet."""
    net, ext_sub = l3.external_network(admin, v6=True)
    r = l3.router(member, external_gateway_info={"network_id": net["id"]})
    sub = l3.private_subnet(member)
    l3.add_interface(member, r["id"], subnet_id=sub["id"])
    port = h.port(member, sub["network_id"])
    return {"net": net, "ext_sub": ext_sub, "router": r, "sub": sub, "port": port}


def test_create_unassociated(admin, member, topology):
    net = topology["net"]
    fip = l3.floatingip(member, net["id"], description="d")
    assert fip["status"] == "DOWN" and fip["revision_number"] == 0
    assert fip["port_id"] is None and fip["router_id"] is None
    assert fip["fixed_ip_address"] is None and fip["description"] == "d"
    assert fip["project_id"] == member.session.headers["X-Project-Id"]
    assert "name" not in fip and "subnet_id" not in fip
    ports = admin.get(f"/v2.0/ports?device_id={fip['id']}")[1]["ports"]
    assert [(p["device_owner"], p["project_id"], p["status"]) for p in ports] == \
        [(FIP_OWNER, "", "N/A")]
    assert fip["floating_ip_address"] in [i["ip_address"] for i in ports[0]["fixed_ips"]]
    msg = h.error(admin.delete(f"/v2.0/ports/{ports[0]['id']}"), 409, "ServicePortInUse")
    assert msg.endswith(f"has device owner {FIP_OWNER}.")
    assert member.get(f"/v2.0/ports?device_id={fip['id']}")[1]["ports"] == []
    assert member.delete(f"/v2.0/floatingips/{fip['id']}")[0] == 204
    assert admin.get(f"/v2.0/ports?device_id={fip['id']}")[1]["ports"] == []
    h.error(member.get(f"/v2.0/floatingips/{fip['id']}"), 404, "FloatingIPNotFound")


def test_create_associated_and_move_and_disassociate(member, topology):
    net, port, r = topology["net"], topology["port"], topology["router"]
    fip = l3.floatingip(member, net["id"], port_id=port["id"])
    assert fip["port_id"] == port["id"] and fip["router_id"] == r["id"]
    assert fip["fixed_ip_address"] == port["fixed_ips"][0]["ip_address"]
    shown = l3.reader_of(member).get(f"/v2.0/floatingips/{fip['id']}")[1]["floatingip"]
    assert shown == fip
    assert [f["id"] for f in member.get(f"/v2.0/floatingips?port_id={port['id']}")[1][
        "floatingips"]] == [fip["id"]]
    second = h.port(member, topology["sub"]["network_id"])
    status, body = member.put(f"/v2.0/floatingips/{fip['id']}", {"floatingip": {
        "port_id": second["id"]}})
    assert status == 200, body
    assert body["floatingip"]["port_id"] == second["id"]
    assert body["floatingip"]["fixed_ip_address"] == second["fixed_ips"][0]["ip_address"]
    status, body = member.put(f"/v2.0/floatingips/{fip['id']}", {"floatingip": {
        "port_id": None}})
    assert status == 200, body
    got = body["floatingip"]
    assert (got["port_id"], got["fixed_ip_address"], got["router_id"]) == (None, None, None)


def test_a_bulk_create_with_a_refused_floating_ip_leaves_none_behind(admin, member, topology):
    net, port = topology["net"], topology["port"]
    l3.floatingip(member, net["id"], port_id=port["id"])
    before = admin.get(f"/v2.0/ports?device_owner={FIP_OWNER}")[1]["ports"]
    h.error(member.post("/v2.0/floatingips", {"floatingips": [
        {"floating_network_id": net["id"]},
        {"floating_network_id": net["id"], "port_id": port["id"]}]}),
        409, "FloatingIPPortAlreadyAssociated")
    # the first one, and its port, made before the second was refused, are gone again
    assert len(member.get("/v2.0/floatingips")[1]["floatingips"]) == 1
    assert admin.get(f"/v2.0/ports?device_owner={FIP_OWNER}")[1]["ports"] == before


def test_one_floating_ip_per_fixed_ip_and_network(member, topology):
    net, port = topology["net"], topology["port"]
    fip = l3.floatingip(member, net["id"], port_id=port["id"])
    status, body = member.post("/v2.0/floatingips", {"floatingip": {
        "floating_network_id": net["id"], "port_id": port["id"]}})
    msg = h.error((status, body), 409, "FloatingIPPortAlreadyAssociated")
    fixed = port["fixed_ips"][0]["ip_address"]
    assert f"with port {port['id']} using fixed IP {fixed}, as that fixed IP already has a " \
           f"floating IP on external network {net['id']}." in msg
    # and nothing was left behind
    listed = member.get("/v2.0/floatingips")[1]["floatingips"]
    assert [f["id"] for f in listed] == [fip["id"]]
    spare = l3.floatingip(member, net["id"])
    h.error(member.put(f"/v2.0/floatingips/{spare['id']}", {"floatingip": {
        "port_id": port["id"]}}), 409, "FloatingIPPortAlreadyAssociated")


def test_association_refusals(admin, member, other, topology):
    net, port = topology["net"], topology["port"]
    # a subnet not behind a router with a gateway on the network
    lonely = l3.private_subnet(member)
    lonely_port = h.port(member, lonely["network_id"])
    msg = h.error(member.post("/v2.0/floatingips", {"floatingip": {
        "floating_network_id": net["id"], "port_id": lonely_port["id"]}}), 404,
        "ExternalGatewayForFloatingIPNotFound")
    assert msg == (f"External network {net['id']} is not reachable from subnet "
                   f"{lonely['id']}.  Therefore, cannot associate Port {lonely_port['id']} "
                   f"with a Floating IP.")
    # a router without a gateway does not do either
    bare = l3.router(member)
    l3.add_interface(member, bare["id"], subnet_id=lonely["id"])
    h.error(member.post("/v2.0/floatingips", {"floatingip": {
        "floating_network_id": net["id"], "port_id": lonely_port["id"]}}), 404,
        "ExternalGatewayForFloatingIPNotFound")
    msg = h.error(member.post("/v2.0/floatingips", {"floatingip": {
        "floating_network_id": topology["sub"]["network_id"]}}), 400, "BadRequest")
    assert msg == (f"Bad floatingip request: Network {topology['sub']['network_id']} is not a "
                   f"valid external network.")
    h.error(member.post("/v2.0/floatingips", {"floatingip": {
        "floating_network_id": h.ZERO_UUID}}), 404, "NetworkNotFound")
    msg = h.error(member.post("/v2.0/floatingips", {"floatingip": {
        "floating_network_id": net["id"], "fixed_ip_address": "10.0.0.7"}}), 400, "BadRequest")
    assert msg == ("Bad floatingip request: fixed_ip_address cannot be specified without a "
                   "port_id.")
    msg = h.error(member.post("/v2.0/floatingips", {"floatingip": {
        "floating_network_id": net["id"], "floating_ip_address": "172.31.0.9"}}), 403,
        "PolicyNotAuthorized")
    assert "create_floatingip:floating_ip_address" in msg
    # another project's port does not exist for the caller
    h.error(other.post("/v2.0/floatingips", {"floatingip": {
        "floating_network_id": net["id"], "port_id": port["id"]}}), 404, "PortNotFound")
    msg = h.error(member.post("/v2.0/floatingips", {"floatingip": {
        "floating_network_id": net["id"], "port_id": port["id"],
        "fixed_ip_address": "10.99.99.99"}}), 400, "BadRequest")
    assert msg == (f"Bad floatingip request: Port {port['id']} does not have fixed ip "
                   f"10.99.99.99.")
    assert member.get("/v2.0/floatingips")[1]["floatingips"] == []
    assert admin.get(f"/v2.0/ports?network_id={net['id']}&device_owner={FIP_OWNER}")[1][
        "ports"] == []


def test_a_port_with_two_ipv4_addresses_needs_fixed_ip_address(member, topology):
    net, sub = topology["net"], topology["sub"]
    base = sub["cidr"].rsplit(".", 1)[0]
    # Two addresses the topology's port (allocated at random) does not hold.
    taken = {ip["ip_address"] for ip in topology["port"]["fixed_ips"]}
    first, second = [a for a in (f"{base}.{n}" for n in range(50, 53)) if a not in taken][:2]
    port = h.port(member, sub["network_id"], fixed_ips=[{"ip_address": first},
                                                        {"ip_address": second}])
    msg = h.error(member.post("/v2.0/floatingips", {"floatingip": {
        "floating_network_id": net["id"], "port_id": port["id"]}}), 400, "BadRequest")
    assert "has multiple fixed IPv4 addresses" in msg
    fip = l3.floatingip(member, net["id"], port_id=port["id"], fixed_ip_address=first)
    assert fip["fixed_ip_address"] == first
    status, body = member.put(f"/v2.0/floatingips/{fip['id']}", {"floatingip": {
        "port_id": port["id"], "fixed_ip_address": second}})
    assert status == 200 and body["floatingip"]["fixed_ip_address"] == second
    # the associated address cannot be taken off the port
    msg = h.error(member.put(f"/v2.0/ports/{port['id']}", {"port": {
        "fixed_ips": [{"ip_address": first}]}}), 400, "BadRequest")
    assert "because its original fixed_ip has been associated to a floating ip" in msg


def test_deleting_the_port_disassociates(member, topology):
    net, sub = topology["net"], topology["sub"]
    port = h.port(member, sub["network_id"])
    fip = l3.floatingip(member, net["id"], port_id=port["id"])
    assert member.delete(f"/v2.0/ports/{port['id']}")[0] == 204
    got = member.get(f"/v2.0/floatingips/{fip['id']}")[1]["floatingip"]
    assert (got["port_id"], got["fixed_ip_address"], got["router_id"]) == (None, None, None)
    assert got["revision_number"] == fip["revision_number"] + 1


def test_what_a_floating_ip_keeps_in_place(member, topology):
    net, sub, r, port = topology["net"], topology["sub"], topology["router"], topology["port"]
    fip = l3.floatingip(member, net["id"], port_id=port["id"])
    msg = h.error(l3.remove_interface(member, r["id"], subnet_id=sub["id"]), 409,
                  "RouterInterfaceInUseByFloatingIP")
    assert msg == (f"Router interface for subnet {sub['id']} on router {r['id']} cannot be "
                   f"deleted, as it is required by one or more floating IPs.")
    msg = h.error(member.put(f"/v2.0/routers/{r['id']}", {"router": {
        "external_gateway_info": None}}), 409, "RouterExternalGatewayInUseByFloatingIp")
    assert msg == (f"Gateway cannot be updated for router {r['id']}, since a gateway to "
                   f"external network {net['id']} is required by one or more floating IPs.")
    assert member.get(f"/v2.0/routers/{r['id']}")[1]["router"]["external_gateway_info"]
    assert member.put(f"/v2.0/floatingips/{fip['id']}", {"floatingip": {
        "port_id": None}})[0] == 200
    assert l3.remove_interface(member, r["id"], subnet_id=sub["id"])[0] == 200


def test_projects_see_their_own_floating_ips_admins_all(admin, member, other, topology):
    net = topology["net"]
    mine = l3.floatingip(member, net["id"])
    theirs = l3.floatingip(other, net["id"])
    admins = l3.floatingip(admin, net["id"])
    assert [f["id"] for f in member.get("/v2.0/floatingips")[1]["floatingips"]] == [mine["id"]]
    h.error(other.get(f"/v2.0/floatingips/{mine['id']}"), 404, "FloatingIPNotFound")
    h.error(other.delete(f"/v2.0/floatingips/{mine['id']}"), 404, "FloatingIPNotFound")
    h.error(l3.reader_of(member).delete(f"/v2.0/floatingips/{mine['id']}"), 403,
            "PolicyNotAuthorized")
    listed = {f["id"] for f in admin.get(
        f"/v2.0/floatingips?floating_network_id={net['id']}")[1]["floatingips"]}
    assert {mine["id"], theirs["id"], admins["id"]} <= listed
    # admin creates one for a project, with the address it wants
    project = member.session.headers["X-Project-Id"]
    taken = {ip["ip_address"] for p in admin.get(f"/v2.0/ports?network_id={net['id']}")[1][
        "ports"] for ip in p["fixed_ips"]}
    wanted = next(a for a in (topology["ext_sub"]["cidr"].replace("0/24", str(n))
                              for n in range(200, 254)) if a not in taken)
    made = l3.floatingip(admin, net["id"], project_id=project, port_id=topology["port"]["id"],
                         floating_ip_address=wanted)
    assert made["project_id"] == project and made["floating_ip_address"] == wanted
    # that address is taken on the external network now
    h.error(admin.post("/v2.0/ports", {"port": {"network_id": net["id"], "fixed_ips": [
        {"ip_address": wanted}]}}), 409, "IpAddressAlreadyAllocated")


def test_external_network_deletion_takes_unassociated_floating_ips(admin, member):
    net, _ = l3.external_network(admin)
    fip = l3.floatingip(admin, net["id"])
    assert admin.delete(f"/v2.0/networks/{net['id']}")[0] == 204
    h.error(admin.get(f"/v2.0/floatingips/{fip['id']}"), 404, "FloatingIPNotFound")


def test_floating_ip_quota(admin, member, topology):
    project = member.session.headers["X-Project-Id"]
    assert admin.put(f"/v2.0/quotas/{project}", {"quota": {"floatingip": 1}})[0] == 200
    l3.floatingip(member, topology["net"]["id"])
    h.error(member.post("/v2.0/floatingips", {"floatingip": {
        "floating_network_id": topology["net"]["id"]}}), 409, "OverQuota")
    assert len(member.get("/v2.0/floatingips")[1]["floatingips"]) == 1
    assert len(admin.get(f"/v2.0/ports?network_id={topology['net']['id']}"
                         f"&device_owner={FIP_OWNER}")[1]["ports"]) == 1


def test_floating_ip_tags_and_description_update(member, topology):
    fip = l3.floatingip(member, topology["net"]["id"], tags=["x"])
    assert fip["tags"] == ["x"]
    status, body = member.put(f"/v2.0/floatingips/{fip['id']}", {"floatingip": {
        "description": "new"}})
    assert status == 200 and body["floatingip"]["description"] == "new"
    assert member.put(f"/v2.0/floatingips/{fip['id']}/tags/y")[0] == 201
    assert member.get(f"/v2.0/floatingips/{fip['id']}")[1]["floatingip"]["tags"] == ["x", "y"]


def test_blank_update_clears_association(member, topology):
    """neutron-tempest-plugin's ``test_blank_update_clears_association``:
    ``{"floatingip": {}}`` disassociates, as upstream; an update naming
    anything else leaves the association alone."""
    port = topology["port"]
    fip = l3.floatingip(member, topology["net"]["id"], port_id=port["id"])
    status, body = member.put(f"/v2.0/floatingips/{fip['id']}", {"floatingip": {
        "description": "d"}})
    assert status == 200 and body["floatingip"]["port_id"] == port["id"]
    status, body = member.put(f"/v2.0/floatingips/{fip['id']}", {"floatingip": {}})
    assert status == 200, body
    got = body["floatingip"]
    assert (got["port_id"], got["fixed_ip_address"], got["router_id"],
            got["port_details"]) == (None, None, None, None)
    assert got["description"] == "d"
    assert member.get(f"/v2.0/floatingips/{fip['id']}")[1]["floatingip"]["port_id"] is None
    status, body = member.put(f"/v2.0/floatingips/{fip['id']}", {"floatingip": {}})
    assert status == 200 and body["floatingip"]["port_id"] is None


def test_floatingip_pools_answer_under_either_spelling(admin, member):
    """``/v2.0/floatingip-pools`` (the tempest plugin's path) and
    ``/v2.0/floatingip_pools``: upstream's router takes both spellings of
    every collection."""
    net, sub = l3.external_network(admin)
    for path in ("/v2.0/floatingip-pools", "/v2.0/floatingip_pools"):
        status, body = member.get(path)
        assert status == 200, body
        pools = [p for p in body["floatingip_pools"] if p["network_id"] == net["id"]]
        assert [(p["subnet_id"], p["cidr"]) for p in pools] == [(sub["id"], sub["cidr"])]
    assert member.get("/v2.0/security_groups")[0] == 200
    assert admin.get("/v2.0/rbac_policies")[0] == 200
    assert member.get("/v2.0/qos/rule_types")[0] == 200

"""Routers over the API: CRUD, policy, the external gateway.

Expectations observed on upstream Neutron 29 (the anchor): a router's
gateway port belongs to no project and is invisible to members; setting
``enable_snat`` or ``external_fixed_ips`` is admin-only; a network that is
not external is a 400 and one that does not exist a 404.
"""
from __future__ import annotations

from tests.api import _helpers as h
from tests.l3 import _l3 as l3

GW = "network:router_gateway"


def test_extensions_listed_with_upstream_descriptors(admin):
    body = admin.get("/v2.0/extensions")[1]
    ext = {e["alias"]: e for e in body["extensions"]}
    assert ext["router"]["name"] == "Neutron L3 Router"
    assert ext["router"]["updated"] == "2012-07-20T10:00:00-00:00"
    assert ext["ext-gw-mode"]["name"] == "Neutron L3 Configurable external gateway mode"
    assert ext["extraroute"]["updated"] == "2013-02-01T10:00:00-00:00"
    assert ext["extraroute-atomic"]["updated"] == "2019-07-10T00:00:00+00:00"
    # the session server loads the flavors plugin, which brings routers' flavors
    assert ext["l3-flavors"]["name"] == "Router Flavor Extension"
    assert ext["router_availability_zone"]["name"] == "Router Availability Zone"
    assert ext["fip-port-details"]["updated"] == "2018-04-09T10:00:00-00:00"
    assert ext["floatingip-pools"]["name"] == "Floating IP Pools Extension"


def test_member_creates_shows_lists_updates_and_deletes_a_router(member, other):
    r = l3.router(member, admin_state_up=False, description="d", tags=["a"])
    assert r["status"] == "ACTIVE" and r["admin_state_up"] is False
    assert r["external_gateway_info"] is None and r["routes"] == [] and r["tags"] == ["a"]
    assert r["revision_number"] == 1 and r["project_id"] == r["tenant_id"]
    for absent in ("distributed", "ha", "gw_port_id", "enable_snat"):
        assert absent not in r
    assert r["availability_zone_hints"] == [] and r["availability_zones"] == []
    assert r["flavor_id"] is None  # ``l3-flavors``: the session server loads ``flavors``
    assert member.get(f"/v2.0/routers/{r['id']}")[1]["router"] == r
    assert r["id"] in [x["id"] for x in member.get("/v2.0/routers")[1]["routers"]]
    assert r["id"] in [x["id"] for x in member.get(
        "/v2.0/routers?admin_state_up=False")[1]["routers"]]
    status, body = member.put(f"/v2.0/routers/{r['id']}", {"router": {
        "name": "new", "admin_state_up": True}})
    assert status == 200, body
    assert body["router"]["name"] == "new" and body["router"]["admin_state_up"] is True
    assert body["router"]["revision_number"] == 2
    # another project sees nothing
    assert r["id"] not in [x["id"] for x in other.get("/v2.0/routers")[1]["routers"]]
    h.error(other.get(f"/v2.0/routers/{r['id']}"), 404, "RouterNotFound")
    h.error(other.put(f"/v2.0/routers/{r['id']}", {"router": {"name": "x"}}), 404,
            "RouterNotFound")
    h.error(other.delete(f"/v2.0/routers/{r['id']}"), 404, "RouterNotFound")
    assert member.delete(f"/v2.0/routers/{r['id']}")[0] == 204
    h.error(member.get(f"/v2.0/routers/{r['id']}"), 404, "RouterNotFound")


def test_reader_reads_but_cannot_write(member):
    r = l3.router(member)
    reader = l3.reader_of(member)
    assert reader.get(f"/v2.0/routers/{r['id']}")[0] == 200
    h.error(reader.post("/v2.0/routers", {"router": {"name": "x"}}), 403, "PolicyNotAuthorized")
    h.error(reader.put(f"/v2.0/routers/{r['id']}", {"router": {"name": "x"}}), 403,
            "PolicyNotAuthorized")
    h.error(reader.delete(f"/v2.0/routers/{r['id']}"), 403, "PolicyNotAuthorized")


def test_admin_creates_a_router_for_another_project(admin, member):
    project = member.session.headers["X-Project-Id"]
    r = l3.router(admin, project_id=project)
    assert r["project_id"] == project
    assert member.get(f"/v2.0/routers/{r['id']}")[0] == 200


def test_non_existent_or_malformed_ids_are_404(member):
    h.error(member.get("/v2.0/routers/not-a-uuid"), 404, "RouterNotFound")
    h.error(member.put(f"/v2.0/routers/{h.ZERO_UUID}", {"router": {"name": "x"}}), 404,
            "RouterNotFound")
    h.error(member.delete(f"/v2.0/routers/{h.ZERO_UUID}"), 404, "RouterNotFound")


def test_routes_cannot_be_given_on_create(member):
    h.error(member.post("/v2.0/routers", {"router": {"routes": []}}), 400, "HTTPBadRequest")


def test_gateway_port_is_made_for_the_router_without_a_project(admin, member):
    net, sub = l3.external_network(admin, v6=True)
    r = l3.router(member, external_gateway_info={"network_id": net["id"]})
    info = r["external_gateway_info"]
    assert info["network_id"] == net["id"] and info["enable_snat"] is True
    # an address of each IP version, IPv4 first
    assert [ip["subnet_id"] for ip in info["external_fixed_ips"]] == \
        [sub["id"]] + [s for s in net["subnets"] if s != sub["id"]]
    assert r["revision_number"] == 2
    ports = admin.get(f"/v2.0/ports?device_id={r['id']}")[1]["ports"]
    assert [(p["device_owner"], p["project_id"], p["network_id"]) for p in ports] == \
        [(GW, "", net["id"])]
    assert {ip["ip_address"] for ip in ports[0]["fixed_ips"]} == \
        {ip["ip_address"] for ip in info["external_fixed_ips"]}
    # members do not see it, and nobody deletes it through the ports API
    assert member.get(f"/v2.0/ports?device_id={r['id']}")[1]["ports"] == []
    msg = h.error(admin.delete(f"/v2.0/ports/{ports[0]['id']}"), 409, "ServicePortInUse")
    assert msg == (f"Port {ports[0]['id']} cannot be deleted directly via the port API: "
                   f"has device owner {GW}.")
    # the router takes its gateway port with it
    assert member.delete(f"/v2.0/routers/{r['id']}")[0] == 204
    assert admin.get(f"/v2.0/ports?device_id={r['id']}")[1]["ports"] == []


def test_gateway_must_be_an_existing_external_network(admin, member):
    r = l3.router(member)
    private = h.network(member)
    msg = h.error(member.put(f"/v2.0/routers/{r['id']}", {"router": {
        "external_gateway_info": {"network_id": private["id"]}}}), 400, "BadRequest")
    assert msg == f"Bad router request: Network {private['id']} is not an external network."
    h.error(member.put(f"/v2.0/routers/{r['id']}", {"router": {
        "external_gateway_info": {"network_id": r["id"]}}}), 404, "NetworkNotFound")
    h.error(member.post("/v2.0/routers", {"router": {
        "external_gateway_info": {"network_id": private["id"]}}}), 400, "BadRequest")
    # nothing was left behind by the refused create
    assert [x["id"] for x in member.get("/v2.0/routers")[1]["routers"]] == [r["id"]]


def test_a_bulk_create_with_a_refused_router_leaves_no_router_behind(member):
    private = h.network(member)
    before = [x["id"] for x in member.get("/v2.0/routers")[1]["routers"]]
    h.error(member.post("/v2.0/routers", {"routers": [
        {"name": h.unique("bulk")},
        {"name": h.unique("bulk"), "external_gateway_info": {"network_id": private["id"]}}]}),
        400, "BadRequest")
    # the first one, made before the second was refused, is gone again
    assert [x["id"] for x in member.get("/v2.0/routers")[1]["routers"]] == before


def test_gateway_info_shape_is_validated(admin, member):
    net, _ = l3.external_network(admin)
    r = l3.router(member)
    msg = h.error(admin.put(f"/v2.0/routers/{r['id']}", {"router": {
        "external_gateway_info": {"enable_snat": False}}}), 400, "HTTPBadRequest")
    assert "Validation of dictionary's keys failed" in msg
    msg = h.error(admin.put(f"/v2.0/routers/{r['id']}", {"router": {
        "external_gateway_info": {"network_id": net["id"], "foo": 1}}}), 400, "HTTPBadRequest")
    assert msg == "Invalid input for external_gateway_info. Reason: Unexpected keys supplied: foo."


def test_snat_and_fixed_ips_of_the_gateway_are_admin_only(admin, member):
    net, sub = l3.external_network(admin)
    r = l3.router(member)
    for key, value in (("enable_snat", True), ("external_fixed_ips", [])):
        msg = h.error(member.put(f"/v2.0/routers/{r['id']}", {"router": {
            "external_gateway_info": {"network_id": net["id"], key: value}}}), 403,
            "PolicyNotAuthorized")
        assert f"rule:update_router:external_gateway_info:{key}" in msg
    h.error(member.post("/v2.0/routers", {"router": {"external_gateway_info": {
        "network_id": net["id"], "enable_snat": False}}}), 403, "PolicyNotAuthorized")
    status, body = admin.put(f"/v2.0/routers/{r['id']}", {"router": {
        "external_gateway_info": {"network_id": net["id"], "enable_snat": False}}})
    assert status == 200, body
    assert body["router"]["external_gateway_info"]["enable_snat"] is False
    # the network alone keeps the mode
    status, body = member.put(f"/v2.0/routers/{r['id']}", {"router": {
        "external_gateway_info": {"network_id": net["id"]}}})
    assert body["router"]["external_gateway_info"]["enable_snat"] is False


def test_admin_chooses_the_gateway_address(admin):
    net, sub = l3.external_network(admin)
    wanted = {"subnet_id": sub["id"], "ip_address": sub["cidr"].replace("0/24", "77")}
    r = l3.router(admin, external_gateway_info={"network_id": net["id"],
                                                "external_fixed_ips": [wanted]})
    assert r["external_gateway_info"]["external_fixed_ips"] == [wanted]
    other_ip = {"subnet_id": sub["id"], "ip_address": sub["cidr"].replace("0/24", "78")}
    status, body = admin.put(f"/v2.0/routers/{r['id']}", {"router": {"external_gateway_info": {
        "network_id": net["id"], "external_fixed_ips": [other_ip]}}})
    assert status == 200, body
    assert body["router"]["external_gateway_info"]["external_fixed_ips"] == [other_ip]
    # the subnet's gateway address is refused
    msg = h.error(admin.put(f"/v2.0/routers/{r['id']}", {"router": {"external_gateway_info": {
        "network_id": net["id"], "external_fixed_ips": [
            {"subnet_id": sub["id"], "ip_address": sub["gateway_ip"]}]}}}), 400, "BadRequest")
    assert msg == (f"Bad router request: External IP {sub['gateway_ip']} is the same as "
                   f"the gateway IP.")


def test_clearing_or_moving_the_gateway_replaces_its_port(admin, member):
    net1, _ = l3.external_network(admin)
    net2, _ = l3.external_network(admin)
    r = l3.router(member, external_gateway_info={"network_id": net1["id"]})
    first = admin.get(f"/v2.0/ports?device_id={r['id']}")[1]["ports"][0]
    status, body = member.put(f"/v2.0/routers/{r['id']}", {"router": {
        "external_gateway_info": {"network_id": net2["id"]}}})
    assert status == 200 and body["router"]["external_gateway_info"]["network_id"] == net2["id"]
    ports = admin.get(f"/v2.0/ports?device_id={r['id']}")[1]["ports"]
    assert [p["network_id"] for p in ports] == [net2["id"]] and ports[0]["id"] != first["id"]
    status, body = member.put(f"/v2.0/routers/{r['id']}", {"router": {
        "external_gateway_info": {}}})
    assert status == 200 and body["router"]["external_gateway_info"] is None
    assert admin.get(f"/v2.0/ports?device_id={r['id']}")[1]["ports"] == []
    status, body = member.put(f"/v2.0/routers/{r['id']}", {"router": {
        "external_gateway_info": None}})
    assert status == 200 and body["router"]["external_gateway_info"] is None


def test_router_quota_and_quota_keys(admin, member):
    project = member.session.headers["X-Project-Id"]
    limits = admin.get(f"/v2.0/quotas/{project}/default")[1]["quota"]
    assert limits["router"] == 10 and limits["floatingip"] == 50
    assert limits["router_route"] == 30
    assert admin.put(f"/v2.0/quotas/{project}", {"quota": {"router": 1}})[0] == 200
    l3.router(member)
    msg = h.error(member.post("/v2.0/routers", {"router": {"name": "x"}}), 409, "OverQuota")
    assert "router" in msg
    assert len(member.get("/v2.0/routers")[1]["routers"]) == 1
    details = member.get(f"/v2.0/quotas/{project}/details")
    assert details[0] in (200, 403)
    used = admin.get(f"/v2.0/quotas/{project}/details")[1]["quota"]
    assert used["router"]["used"] == 1 and used["router_route"]["used"] == 0


def test_router_tags(member):
    r = l3.router(member)
    assert member.put(f"/v2.0/routers/{r['id']}/tags/blue")[0] == 201
    assert member.get(f"/v2.0/routers/{r['id']}")[1]["router"]["tags"] == ["blue"]
    assert r["id"] in [x["id"] for x in member.get("/v2.0/routers?tags=blue")[1]["routers"]]

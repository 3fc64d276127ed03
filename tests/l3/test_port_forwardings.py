"""Floating IP port forwardings (``floating-ip-port-forwarding`` and its
``-description``, ``-port-ranges``, ``-detail`` and ``expose-port-forwarding-in-fip``),
as observed on upstream Neutron 29."""
from __future__ import annotations

import pytest

from tests.api import _helpers as h
from tests.l3 import _l3 as l3

ALIASES = ("floating-ip-port-forwarding", "floating-ip-port-forwarding-description",
           "floating-ip-port-forwarding-detail", "floating-ip-port-forwarding-port-ranges",
           "expose-port-forwarding-in-fip")


@pytest.fixture
def topo(admin, member):
    """A floating IP of ``member`` and a port behind a router gatewayed on its network."""
    net, _ = l3.external_network(admin)
    r = l3.router(member, external_gateway_info={"network_id": net["id"]})
    sub = l3.private_subnet(member)
    l3.add_interface(member, r["id"], subnet_id=sub["id"])
    port = h.port(member, sub["network_id"])
    fip = l3.floatingip(member, net["id"])
    return {"net": net, "router": r, "sub": sub, "port": port, "fip": fip,
            "ip": port["fixed_ips"][0]["ip_address"],
            "url": f"/v2.0/floatingips/{fip['id']}/port_forwardings"}


def pf_body(topo, **attrs):
    body = {"protocol": "tcp", "internal_port_id": topo["port"]["id"],
            "internal_ip_address": topo["ip"], "internal_port": 22, "external_port": 2222}
    body.update(attrs)
    return {"port_forwarding": {k: v for k, v in body.items() if v is not None}}


def create(client, topo, **attrs):
    return h.created(client.post(topo["url"], pf_body(topo, **attrs)), "port_forwarding")


def test_extensions_are_listed(admin):
    shown = {e["alias"]: e for e in admin.get("/v2.0/extensions")[1]["extensions"]}
    for alias in ALIASES:
        assert alias in shown
    assert shown["floating-ip-port-forwarding"]["name"] == "Floating IP Port Forwarding"


def test_create_single_port_and_show_in_fip(member, topo):
    pf = create(member, topo, description="ssh")
    assert pf == {"id": pf["id"], "external_port": 2222, "external_port_range": "2222:2222",
                  "protocol": "tcp", "internal_port_id": topo["port"]["id"],
                  "internal_ip_address": topo["ip"], "internal_port": 22,
                  "internal_port_range": "22:22", "description": "ssh"}
    assert member.get(f"{topo['url']}/{pf['id']}") == (200, {"port_forwarding": pf})
    fip = member.get(f"/v2.0/floatingips/{topo['fip']['id']}")[1]["floatingip"]
    assert fip["router_id"] == topo["router"]["id"] and fip["port_id"] is None
    assert fip["port_forwardings"] == [{
        "id": pf["id"], "protocol": "tcp", "internal_ip_address": topo["ip"],
        "internal_port_id": topo["port"]["id"], "internal_port": 22, "external_port": 2222}]


def test_port_ranges_show_no_single_port_when_read(member, topo):
    pf = create(member, topo, protocol="udp", internal_port=None, external_port=None,
                internal_port_range="100:110", external_port_range="1100:1110")
    assert pf["external_port"] is None and pf["internal_port"] is None
    shown = member.get(f"{topo['url']}/{pf['id']}")[1]["port_forwarding"]
    assert "external_port" not in shown and "internal_port" not in shown
    assert shown["external_port_range"] == "1100:1110"
    assert shown["internal_port_range"] == "100:110" and shown["description"] == ""
    fip = member.get(f"/v2.0/floatingips/{topo['fip']['id']}")[1]["floatingip"]
    assert fip["port_forwardings"] == [{
        "id": pf["id"], "protocol": "udp", "internal_ip_address": topo["ip"],
        "internal_port_id": topo["port"]["id"]}]
    # 1-N: one internal port behind a range of external ones.
    one_to_n = create(member, topo, internal_port=7000, external_port=None,
                      external_port_range="7000:7010")
    assert one_to_n["internal_port"] == 7000


def test_collisions_and_bad_ranges(member, topo):
    create(member, topo)
    msg = h.error(member.post(topo["url"], pf_body(topo, internal_port=23)), 400, "BadRequest")
    assert msg == ("Bad port_forwarding request: There is a port collision with the "
                   "external_port_range. The following ranges collide: 2222:2222 and "
                   "2222:2222.")
    # The same external port with another protocol is fine.
    create(member, topo, protocol="udp")
    msg = h.error(member.post(topo["url"], pf_body(
        topo, protocol="sctp", internal_port=None, external_port=None,
        internal_port_range="100:110", external_port_range="1100:1105")), 400, "BadRequest")
    assert msg == ("Bad port_forwarding request: Invalid ranges of internal and/or external "
                   "ports. The relation between internal and external ports must be N-N "
                   "or 1-N.")
    msg = h.error(member.post(topo["url"], pf_body(
        topo, external_port=None, external_port_range="5050:5040")), 400, "HTTPBadRequest")
    assert msg == ("Invalid input for external_port_range. Reason: First port in a port "
                   "range must be lower than the second port.")
    msg = h.error(member.post(topo["url"], pf_body(
        topo, internal_port=None, internal_port_range="a:b")), 400, "HTTPBadRequest")
    assert msg == "Invalid input for internal_port_range. Reason: Invalid port: a."
    msg = h.error(member.post(topo["url"], pf_body(topo, internal_port=0)), 400,
                  "HTTPBadRequest")
    assert msg == ("Invalid input for internal_port. Reason: '0' is too small - must be at "
                   "least '1'.")
    assert len(member.get(topo["url"])[1]["port_forwardings"]) == 2


def test_protocol_and_required_attributes(member, topo):
    msg = h.error(member.post(topo["url"], pf_body(topo, protocol="xyz")), 400, "InvalidInput")
    assert msg == ("Invalid input for operation: IP protocol 'xyz' is not supported. Only "
                   "protocol names and their integer representation (0 to 255) are "
                   "supported.")
    msg = h.error(member.post(topo["url"], pf_body(topo, protocol="UDP")), 400,
                  "HTTPBadRequest")
    assert msg == "Invalid input for protocol. Reason: UDP is not in valid_values."
    body = pf_body(topo)
    del body["port_forwarding"]["internal_ip_address"]
    msg = h.error(member.post(topo["url"], body), 400, "HTTPBadRequest")
    assert msg == "Failed to parse request. Required attribute 'internal_ip_address' not specified"


def test_internal_ip_must_be_a_fixed_ip_of_the_port(member, topo):
    msg = h.error(member.post(topo["url"], pf_body(topo, internal_ip_address="10.250.0.250")),
                  400, "BadRequest")
    assert msg.startswith("Bad port_forwarding request: Requested internal IP address "
                          "10.250.0.250 is not suitable for internal neutron port "
                          f"{topo['port']['id']}, as its fixed_ips are [{{'subnet_id': ")
    pf = create(member, topo)
    msg = h.error(member.put(f"{topo['url']}/{pf['id']}", {"port_forwarding": {
        "internal_ip_address": "10.250.0.251"}}), 400, "BadRequest")
    assert msg.startswith("Bad port_forwarding request: The internal IP does not correspond "
                          "to an address on the internal port, which has fixed_ips [")


def test_unreachable_subnet_is_refused(member, topo):
    lonely = l3.private_subnet(member)
    port = h.port(member, lonely["network_id"])
    msg = h.error(member.post(topo["url"], pf_body(
        topo, internal_port_id=port["id"], internal_ip_address=port["fixed_ips"][0][
            "ip_address"])), 400, "BadRequest")
    assert msg == (f"Bad port_forwarding request: External network {topo['net']['id']} is "
                   f"not reachable from subnet {lonely['id']}. Cannot set Port forwarding "
                   f"for port {port['id']} with Floating IP {topo['fip']['id']}.")
    assert member.get(f"/v2.0/floatingips/{topo['fip']['id']}")[1]["floatingip"][
        "router_id"] is None


def test_fip_with_forwardings_cannot_be_associated_nor_deleted(member, topo):
    create(member, topo)
    fid = topo["fip"]["id"]
    other_port = h.port(member, topo["sub"]["network_id"])
    msg = h.error(member.put(f"/v2.0/floatingips/{fid}", {"floatingip": {
        "port_id": other_port["id"]}}), 409, "FipInUseByPortForwarding")
    assert msg == f"Floating IP {fid} in use by Port Forwarding resources."
    h.error(member.delete(f"/v2.0/floatingips/{fid}"), 409, "FipInUseByPortForwarding")
    # Other updates are fine.
    assert member.put(f"/v2.0/floatingips/{fid}", {"floatingip": {"description": "x"}})[0] \
        == 200


def test_associated_fip_and_bound_port_refuse_forwardings(member, topo):
    bound = l3.floatingip(member, topo["net"]["id"], port_id=topo["port"]["id"])
    msg = h.error(member.post(topo["url"], pf_body(topo)), 409, "PortHasBindingFloatingIP")
    assert msg == (f"Cannot create port forwarding to floating IP "
                   f"{bound['floating_ip_address']} ({bound['id']}) with port "
                   f"{topo['port']['id']} using fixed IP {topo['ip']}, as that port already "
                   f"has a binding floating IP.")
    second = h.port(member, topo["sub"]["network_id"])
    url = f"/v2.0/floatingips/{bound['id']}/port_forwardings"
    status, body = member.post(url, {"port_forwarding": {
        "protocol": "tcp", "internal_port_id": second["id"], "internal_port": 22,
        "internal_ip_address": second["fixed_ips"][0]["ip_address"], "external_port": 22}})
    h.error((status, body), 409, "FloatingIPPortAlreadyAssociated")


def test_update_and_delete(member, topo):
    pf = create(member, topo)
    status, body = member.put(f"{topo['url']}/{pf['id']}", {"port_forwarding": {
        "external_port": 2223, "description": "e"}})
    assert status == 200, body
    assert body["port_forwarding"]["external_port_range"] == "2223:2223"
    assert body["port_forwarding"]["description"] == "e"
    status, body = member.put(f"{topo['url']}/{pf['id']}", {"port_forwarding": {
        "external_port_range": "3000:3001"}})
    assert status == 200, body
    shown = member.get(f"{topo['url']}/{pf['id']}")[1]["port_forwarding"]
    assert shown["external_port_range"] == "3000:3001" and "external_port" not in shown
    assert member.delete(f"{topo['url']}/{pf['id']}")[0] == 204
    msg = h.error(member.get(f"{topo['url']}/{pf['id']}"), 404, "PortForwardingNotFound")
    assert msg == f"Port Forwarding {pf['id']} could not be found."
    # The last forwarding gone, the floating IP lets go of the router and can go.
    fip = member.get(f"/v2.0/floatingips/{topo['fip']['id']}")[1]["floatingip"]
    assert fip["router_id"] is None and fip["port_forwardings"] == []
    assert member.delete(f"/v2.0/floatingips/{topo['fip']['id']}")[0] == 204


def test_list_filters_fields_and_sorting(member, topo):
    a = create(member, topo, description="d")
    b = create(member, topo, protocol="udp", internal_port=53, external_port=53)
    url = topo["url"]
    assert [p["id"] for p in member.get(f"{url}?external_port=2222")[1][
        "port_forwardings"]] == [a["id"]]
    assert [p["id"] for p in member.get(f"{url}?protocol=udp")[1]["port_forwardings"]] \
        == [b["id"]]
    assert [p["id"] for p in member.get(f"{url}?description=d")[1]["port_forwardings"]] \
        == [a["id"]]
    assert [p["id"] for p in member.get(f"{url}?sort_key=external_port&sort_dir=asc")[1][
        "port_forwardings"]] == [b["id"], a["id"]]
    assert member.get(f"{url}?fields=protocol")[1]["port_forwardings"] in (
        [{"protocol": "tcp"}, {"protocol": "udp"}], [{"protocol": "udp"}, {"protocol": "tcp"}])
    msg = h.error(member.get(f"{url}?internal_ip_address=10.0.0.1"), 400, "HTTPBadRequest")
    assert msg == "['internal_ip_address'] is invalid attribute for filtering"


def test_other_project_reader_and_admin(admin, member, other, topo):
    pf = create(member, topo)
    fid = topo["fip"]["id"]
    for result in (other.get(topo["url"]), other.get(f"{topo['url']}/{pf['id']}"),
                   other.delete(f"{topo['url']}/{pf['id']}")):
        msg = h.error(result, 404, "FloatingIPNotFound")
        assert msg == f"Floating IP {fid} could not be found"
    # A create is checked against the floating IP's owner, seen or not (as
    # upstream: 403); one under a floating IP that does not exist is 404.
    msg = h.error(other.post(topo["url"], pf_body(topo, external_port=1)), 403,
                  "PolicyNotAuthorized")
    assert msg == "rule:create_floatingip_port_forwarding is disallowed by policy"
    h.error(other.post(f"/v2.0/floatingips/{h.ZERO_UUID}/port_forwardings",
                       pf_body(topo, external_port=1)), 404, "FloatingIPNotFound")
    reader = l3.reader_of(member)
    assert [p["id"] for p in reader.get(topo["url"])[1]["port_forwardings"]] == [pf["id"]]
    msg = h.error(reader.post(topo["url"], pf_body(topo, external_port=1)), 403,
                  "PolicyNotAuthorized")
    assert msg == "rule:create_floatingip_port_forwarding is disallowed by policy"
    h.error(reader.delete(f"{topo['url']}/{pf['id']}"), 403, "PolicyNotAuthorized")
    assert admin.get(f"{topo['url']}/{pf['id']}")[1]["port_forwarding"]["id"] == pf["id"]
    created = create(admin, topo, external_port=2300, internal_port=2300)
    assert created["internal_port"] == 2300
    assert len(member.get(topo["url"])[1]["port_forwardings"]) == 2


def test_deleting_the_internal_port_deletes_its_forwardings(member, topo):
    create(member, topo)
    assert member.delete(f"/v2.0/ports/{topo['port']['id']}")[0] == 204
    assert member.get(topo["url"])[1]["port_forwardings"] == []
    fip = member.get(f"/v2.0/floatingips/{topo['fip']['id']}")[1]["floatingip"]
    assert fip["router_id"] is None and fip["port_forwardings"] == []


def test_a_port_deleted_releases_only_the_floating_ips_left_without_forwardings(member, topo):
    """The port is forwarded from two floating IPs; the first also forwards
    to another port, so it keeps its router; the second lets go of it. Both
    change, so both revisions advance."""
    other = h.port(member, topo["sub"]["network_id"])
    second = l3.floatingip(member, topo["net"]["id"])
    second_url = f"/v2.0/floatingips/{second['id']}/port_forwardings"
    create(member, topo)
    create(member, topo, internal_port_id=other["id"],
           internal_ip_address=other["fixed_ips"][0]["ip_address"], external_port=2223)
    h.created(member.post(second_url, pf_body(topo, internal_port=23)), "port_forwarding")
    before = {fip["id"]: member.get(f"/v2.0/floatingips/{fip['id']}")[1]["floatingip"]
              for fip in (topo["fip"], second)}

    assert member.delete(f"/v2.0/ports/{topo['port']['id']}")[0] == 204
    kept = member.get(f"/v2.0/floatingips/{topo['fip']['id']}")[1]["floatingip"]
    released = member.get(f"/v2.0/floatingips/{second['id']}")[1]["floatingip"]
    assert kept["router_id"] == topo["router"]["id"]
    assert [pf["internal_port_id"] for pf in kept["port_forwardings"]] == [other["id"]]
    assert released["router_id"] is None and released["port_forwardings"] == []
    for fip in (kept, released):
        assert fip["revision_number"] > before[fip["id"]]["revision_number"]


def test_removing_the_fixed_ip_deletes_its_forwardings(member, topo):
    create(member, topo)
    status, body = member.put(f"/v2.0/ports/{topo['port']['id']}", {"port": {
        "fixed_ips": [{"subnet_id": topo["sub"]["id"]}]}})
    assert status == 200, body
    assert member.get(topo["url"])[1]["port_forwardings"] == []


def test_fip_port_details(member, topo):
    fip = l3.floatingip(member, topo["net"]["id"], port_id=topo["port"]["id"])
    port = topo["port"]
    assert fip["port_details"] == {
        "name": port["name"], "network_id": port["network_id"],
        "mac_address": port["mac_address"], "admin_state_up": True, "status": port["status"],
        "device_id": port["device_id"], "device_owner": port["device_owner"]}
    assert fip["port_forwardings"] == []
    assert topo["fip"]["port_details"] is None
    listed = {f["id"]: f for f in member.get("/v2.0/floatingips")[1]["floatingips"]}
    assert listed[fip["id"]]["port_details"] == fip["port_details"]

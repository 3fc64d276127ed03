"""Router interfaces: adding and removing them, and what they protect.

Messages and codes as observed on upstream Neutron 29.
"""
from __future__ import annotations

from tests.api import _helpers as h
from tests.l3 import _l3 as l3

IF = "network:router_interface"


def test_add_by_subnet_makes_a_port_on_the_gateway_address(member):
    r = l3.router(member)
    sub = l3.private_subnet(member)
    info = l3.add_interface(member, r["id"], subnet_id=sub["id"])
    assert set(info) == {"id", "project_id", "port_id", "network_id", "subnet_id", "subnet_ids"}
    assert info["id"] == r["id"] and info["subnet_id"] == sub["id"]
    assert info["subnet_ids"] == [sub["id"]] and info["network_id"] == sub["network_id"]
    port = member.get(f"/v2.0/ports/{info['port_id']}")[1]["port"]
    assert port["device_id"] == r["id"] and port["device_owner"] == IF
    assert port["fixed_ips"] == [{"subnet_id": sub["id"], "ip_address": sub["gateway_ip"]}]
    assert port["project_id"] == r["project_id"]
    # tempest's test_port_list_filter_by_router_id
    listed = member.get(f"/v2.0/ports?device_id={r['id']}")[1]["ports"]
    assert [p["id"] for p in listed] == [info["port_id"]]
    assert member.get(f"/v2.0/routers/{r['id']}")[1]["router"]["revision_number"] == 2


def test_add_refusals(member, other):
    r = l3.router(member)
    sub = l3.private_subnet(member, "10.201.0.0/24")
    l3.add_interface(member, r["id"], subnet_id=sub["id"])
    url = f"/v2.0/routers/{r['id']}/add_router_interface"
    cases = [
        ({"subnet_id": sub["id"], "port_id": sub["id"]}, 400, "BadRequest",
         "Bad router request: Cannot specify both subnet-id and port-id."),
        ({}, 400, "BadRequest",
         "Bad router request: Either subnet_id or port_id must be specified."),
        ({"subnet_id": "abc"}, 400, "BadRequest", "Bad router request: 'abc' is not a valid UUID."),
        ({"subnet_id": sub["id"]}, 400, "BadRequest",
         f"Bad router request: Router already has a port on subnet {sub['id']}."),
        ({"subnet_id": h.ZERO_UUID}, 404, "SubnetNotFound", None),
        ({"port_id": h.ZERO_UUID}, 404, "PortNotFound", None),
    ]
    for body, code, kind, message in cases:
        msg = h.error(member.put(url, body), code, kind)
        if message:
            assert msg == message
    overlapping = l3.private_subnet(member, "10.201.0.128/25")
    msg = h.error(member.put(url, {"subnet_id": overlapping["id"]}), 400, "BadRequest")
    assert msg == (f"Bad router request: Cidr 10.201.0.128/25 of subnet {overlapping['id']} "
                   f"overlaps with cidr 10.201.0.0/24 of subnet {sub['id']}.")
    no_gw = l3.private_subnet(member, gateway_ip=None)
    msg = h.error(member.put(url, {"subnet_id": no_gw["id"]}), 400, "BadRequest")
    assert msg == "Bad router request: Subnet for router interface must have a gateway IP."
    # another project's subnet does not exist for the caller; its router neither
    foreign = l3.private_subnet(other)
    h.error(member.put(url, {"subnet_id": foreign["id"]}), 404, "SubnetNotFound")
    h.error(other.put(url, {"subnet_id": foreign["id"]}), 404, "RouterNotFound")
    h.error(l3.reader_of(member).put(url, {"subnet_id": overlapping["id"]}), 403,
            "PolicyNotAuthorized")
    # nothing half-made: one interface port, one revision bump
    assert len(member.get(f"/v2.0/ports?device_id={r['id']}")[1]["ports"]) == 1
    assert member.get(f"/v2.0/routers/{r['id']}")[1]["router"]["revision_number"] == 2


def test_add_by_port(member):
    r = l3.router(member)
    sub = l3.private_subnet(member)
    used = h.port(member, sub["network_id"], device_id="vm-1")
    msg = h.error(l3.remove_interface(member, r["id"], port_id=used["id"]), 404,
                  "RouterInterfaceNotFound")
    assert msg == f"Router {r['id']} does not have an interface with id {used['id']}"
    msg = h.error(member.put(f"/v2.0/routers/{r['id']}/add_router_interface",
                             {"port_id": used["id"]}), 409, "PortInUse")
    assert msg == (f"Unable to complete operation on port {used['id']} for network "
                   f"{sub['network_id']}. Port already has an attached device vm-1.")
    bare = h.port(member, sub["network_id"], fixed_ips=[])
    msg = h.error(member.put(f"/v2.0/routers/{r['id']}/add_router_interface",
                             {"port_id": bare["id"]}), 400, "BadRequest")
    assert msg == "Bad router request: Router port must have at least one fixed IP."
    free = h.port(member, sub["network_id"])
    info = l3.add_interface(member, r["id"], port_id=free["id"])
    assert info["port_id"] == free["id"] and info["subnet_ids"] == [sub["id"]]
    port = member.get(f"/v2.0/ports/{free['id']}")[1]["port"]
    assert port["device_id"] == r["id"] and port["device_owner"] == IF
    # removing the interface deletes the port, as upstream
    status, body = l3.remove_interface(member, r["id"], port_id=free["id"],
                                       subnet_id=sub["id"])
    assert status == 200, body
    h.error(member.get(f"/v2.0/ports/{free['id']}"), 404, "PortNotFound")


def test_a_port_with_two_ipv4_subnets_is_refused(member):
    r = l3.router(member)
    net = h.network(member)
    s1 = h.subnet(member, net["id"], "10.202.1.0/24")
    s2 = h.subnet(member, net["id"], "10.202.2.0/24")
    port = h.port(member, net["id"], fixed_ips=[{"subnet_id": s1["id"]},
                                                 {"subnet_id": s2["id"]}])
    msg = h.error(member.put(f"/v2.0/routers/{r['id']}/add_router_interface",
                             {"port_id": port["id"]}), 400, "BadRequest")
    assert msg == "Bad router request: Cannot have multiple IPv4 subnets on router port."
    assert member.get(f"/v2.0/ports/{port['id']}")[1]["port"]["device_id"] == ""


def test_interfaces_keep_ports_subnets_networks_and_the_router(member):
    r = l3.router(member)
    sub = l3.private_subnet(member)
    info = l3.add_interface(member, r["id"], subnet_id=sub["id"])
    msg = h.error(member.delete(f"/v2.0/ports/{info['port_id']}"), 409, "ServicePortInUse")
    assert msg == (f"Port {info['port_id']} cannot be deleted directly via the port API: "
                   f"has device owner {IF}.")
    h.error(member.delete(f"/v2.0/subnets/{sub['id']}"), 409, "SubnetInUse")
    h.error(member.delete(f"/v2.0/networks/{sub['network_id']}"), 409, "NetworkInUse")
    msg = h.error(member.delete(f"/v2.0/routers/{r['id']}"), 409, "RouterInUse")
    assert msg == f"Router {r['id']} has ports still attached: {info['port_id']}"
    status, body = l3.remove_interface(member, r["id"], subnet_id=sub["id"])
    assert status == 200, body
    assert body["port_id"] == info["port_id"] and body["subnet_ids"] == [sub["id"]]
    h.error(member.get(f"/v2.0/ports/{info['port_id']}"), 404, "PortNotFound")
    assert member.delete(f"/v2.0/routers/{r['id']}")[0] == 204
    assert member.delete(f"/v2.0/networks/{sub['network_id']}")[0] == 204


def test_remove_refusals(member):
    r = l3.router(member)
    sub = l3.private_subnet(member)
    other_sub = l3.private_subnet(member)
    info = l3.add_interface(member, r["id"], subnet_id=sub["id"])
    msg = h.error(l3.remove_interface(member, r["id"], subnet_id=other_sub["id"]), 404,
                  "RouterInterfaceNotFoundForSubnet")
    assert msg == f"Router {r['id']} has no interface on subnet {other_sub['id']}"
    msg = h.error(l3.remove_interface(member, r["id"], port_id=info["port_id"],
                                      subnet_id=other_sub["id"]), 400, "SubnetMismatchForPort")
    assert msg == (f"Subnet on port {info['port_id']} does not match the requested subnet "
                   f"{other_sub['id']}.")
    h.error(l3.remove_interface(member, r["id"]), 400, "BadRequest")
    assert len(member.get(f"/v2.0/ports?device_id={r['id']}")[1]["ports"]) == 1


def test_ipv6_subnets_of_one_network_share_one_port(member):
    r = l3.router(member)
    net = h.network(member)
    s1 = h.subnet(member, net["id"], "2001:db8:a1::/64", ip_version=6)
    s2 = h.subnet(member, net["id"], "2001:db8:a2::/64", ip_version=6)
    first = l3.add_interface(member, r["id"], subnet_id=s1["id"])
    second = l3.add_interface(member, r["id"], subnet_id=s2["id"])
    assert second["port_id"] == first["port_id"] and second["subnet_ids"] == [s2["id"]]
    port = member.get(f"/v2.0/ports/{first['port_id']}")[1]["port"]
    assert sorted(i["subnet_id"] for i in port["fixed_ips"]) == sorted([s1["id"], s2["id"]])
    # removing one prefix keeps the port for the other
    assert l3.remove_interface(member, r["id"], subnet_id=s1["id"])[0] == 200
    port = member.get(f"/v2.0/ports/{first['port_id']}")[1]["port"]
    assert [i["subnet_id"] for i in port["fixed_ips"]] == [s2["id"]]
    assert l3.remove_interface(member, r["id"], subnet_id=s2["id"])[0] == 200
    h.error(member.get(f"/v2.0/ports/{first['port_id']}"), 404, "PortNotFound")


def test_member_updates_the_interface_ports_fixed_ips(member):
    """tempest test_router_interface_port_update_with_fixed_ip"""
    r = l3.router(member)
    sub = l3.private_subnet(member)
    info = l3.add_interface(member, r["id"], subnet_id=sub["id"])
    status, body = member.put(f"/v2.0/ports/{info['port_id']}", {"port": {
        "fixed_ips": [{"subnet_id": sub["id"]}]}})
    assert status == 200, body
    assert body["port"]["fixed_ips"][0]["subnet_id"] == sub["id"]


def test_interface_overlapping_the_gateway_network_is_refused(admin, member):
    net, ext_sub = l3.external_network(admin)
    r = l3.router(member, external_gateway_info={"network_id": net["id"]})
    clash = l3.private_subnet(member, ext_sub["cidr"])
    h.error(member.put(f"/v2.0/routers/{r['id']}/add_router_interface",
                       {"subnet_id": clash["id"]}), 400, "BadRequest")


def test_admin_adds_another_projects_subnet_to_its_router(admin, member):
    r = l3.router(member)
    sub = l3.private_subnet(member)
    info = l3.add_interface(admin, r["id"], subnet_id=sub["id"])
    assert info["project_id"] == r["project_id"]
    assert l3.remove_interface(admin, r["id"], port_id=info["port_id"])[0] == 200


def test_ipv6_subnet_waiting_for_an_external_routers_advertisements_is_refused(member):
    """Only ``ipv6_address_mode`` set: another router advertises the prefix, so
    this router (whose radvd would advertise itself there too) may not join."""
    r = l3.router(member)
    net = h.network(member)
    external_ra = h.subnet(member, net["id"], "2001:db8:b1::/64", ipv6_address_mode="slaac")
    url = f"/v2.0/routers/{r['id']}/add_router_interface"
    msg = h.error(member.put(url, {"subnet_id": external_ra["id"]}), 400, "BadRequest")
    # upstream's message ends its sentence and BadRequest adds a full stop: two
    assert msg == (f"Bad router request: IPv6 subnet {external_ra['id']} configured to "
                   "receive RAs from an external router cannot be added to Neutron Router..")
    assert member.get(f"/v2.0/ports?device_id={r['id']}")[1]["ports"] == []
    net2 = h.network(member)
    ours = h.subnet(member, net2["id"], "2001:db8:b2::/64", ipv6_address_mode="slaac",
                    ipv6_ra_mode="slaac")
    assert l3.add_interface(member, r["id"], subnet_id=ours["id"])["subnet_id"] == ours["id"]


def test_gateway_held_by_a_router_interface_cannot_move_or_go_409_gateway_ip_in_use(member,
                                                                                   admin):
    """Upstream's test_router_interface_update_and_remove_gateway_ip."""
    sub = l3.private_subnet(member, "10.202.0.0/24",
                            allocation_pools=[{"start": "10.202.0.100", "end": "10.202.0.104"}])
    url = f"/v2.0/subnets/{sub['id']}"
    # no router port yet: the gateway may move
    status, body = member.put(url, {"subnet": {"gateway_ip": "10.202.0.2"}})
    assert status == 200 and body["subnet"]["gateway_ip"] == "10.202.0.2", body
    r = l3.router(member)
    info = l3.add_interface(member, r["id"], subnet_id=sub["id"])
    expected = (f"Current gateway ip 10.202.0.2 already in use by port {info['port_id']}. "
                "Unable to update.")
    for client in (member, admin):
        for gateway in ("10.202.0.3", None):
            msg = h.error(client.put(url, {"subnet": {"gateway_ip": gateway}}), 409,
                          "GatewayIpInUse")
            assert msg == expected
    assert member.get(url)[1]["subnet"]["gateway_ip"] == "10.202.0.2"
    # naming the same gateway again changes nothing and is not refused
    status, body = member.put(url, {"subnet": {"gateway_ip": "10.202.0.2", "name": "same"}})
    assert status == 200, body
    # once the interface is gone the gateway is free to move again
    assert l3.remove_interface(member, r["id"], subnet_id=sub["id"])[0] == 200
    status, body = member.put(url, {"subnet": {"gateway_ip": None}})
    assert status == 200 and body["subnet"]["gateway_ip"] is None, body

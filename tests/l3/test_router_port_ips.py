"""``l3-port-ip-change-not-allowed``: a router interface port keeps its IPv4
addresses whoever asks, as upstream Neutron 29 answers."""
from __future__ import annotations

import uuid

import pytest

from tests.api import _helpers as h
from tests.l3 import _l3 as l3


@pytest.fixture
def iface(member):
    sub = l3.private_subnet(member)
    router = l3.router(member)
    info = l3.add_interface(member, router["id"], subnet_id=sub["id"])
    port = member.get(f"/v2.0/ports/{info['port_id']}")[1]["port"]
    return {"sub": sub, "router": router, "port": port, "url": f"/v2.0/ports/{port['id']}"}


def _moved(iface, address):
    return {"port": {"fixed_ips": [{"subnet_id": iface["sub"]["id"], "ip_address": address}]}}


def test_alias_is_listed(admin):
    aliases = {e["alias"] for e in admin.get("/v2.0/extensions")[1]["extensions"]}
    assert "l3-port-ip-change-not-allowed" in aliases


def test_router_interface_ipv4_change_is_refused_for_owner_and_admin(admin, member, other,
                                                                    iface):
    prefix = iface["sub"]["cidr"].rsplit(".", 1)[0]
    expected = f"Bad ports request: IP updates for port {iface['port']['id']} are not allowed."
    for client in (member, admin):
        assert h.error(client.put(iface["url"], _moved(iface, f"{prefix}.5")), 400,
                       "BadRequest") == expected
    # dropping the address is a change too
    assert h.error(admin.put(iface["url"], {"port": {"fixed_ips": []}}), 400,
                   "BadRequest") == expected
    # another project does not see the port at all
    h.error(other.put(iface["url"], _moved(iface, f"{prefix}.5")), 404, "PortNotFound")
    # nothing changed, and the address is still free
    assert member.get(iface["url"])[1]["port"]["fixed_ips"] == iface["port"]["fixed_ips"]
    free = h.port(member, iface["sub"]["network_id"], fixed_ips=[
        {"subnet_id": iface["sub"]["id"], "ip_address": f"{prefix}.5"}])
    assert free["fixed_ips"][0]["ip_address"] == f"{prefix}.5"


def test_same_addresses_and_other_attributes_may_be_updated(member, iface):
    status, body = member.put(iface["url"], {"port": {
        "fixed_ips": iface["port"]["fixed_ips"], "name": "kept"}})
    assert status == 200, body
    assert body["port"]["name"] == "kept"


def test_a_port_claiming_to_be_an_interface_of_no_router_names_a_missing_router(admin,
                                                                                 member):
    """As upstream: its fixed IPs cannot be updated, the router is not found."""
    sub = l3.private_subnet(member)
    prefix = sub["cidr"].rsplit(".", 1)[0]
    router_id = str(uuid.uuid4())
    port = h.port(admin, sub["network_id"], device_owner="network:router_interface",
                  device_id=router_id, project_id=sub["project_id"])
    msg = h.error(admin.put(f"/v2.0/ports/{port['id']}", {"port": {"fixed_ips": [
        {"subnet_id": sub["id"], "ip_address": f"{prefix}.77"}]}}), 404, "RouterNotFound")
    assert msg == f"Router {router_id} could not be found"
    status, body = admin.put(f"/v2.0/ports/{port['id']}", {"port": {"name": "n"}})
    assert status == 200, body


def test_router_gateway_and_ordinary_ports_may_change(admin, member):
    ext, ext_sub = l3.external_network(admin)
    router = l3.router(member, external_gateway_info={"network_id": ext["id"]})
    prefix = ext_sub["cidr"].rsplit(".", 1)[0]
    status, body = admin.put(f"/v2.0/routers/{router['id']}", {"router": {
        "external_gateway_info": {"network_id": ext["id"], "external_fixed_ips": [
            {"subnet_id": ext_sub["id"], "ip_address": f"{prefix}.99"}]}}})
    assert status == 200, body
    sub = l3.private_subnet(member)
    port = h.port(member, sub["network_id"])
    sub_prefix = sub["cidr"].rsplit(".", 1)[0]
    status, body = member.put(f"/v2.0/ports/{port['id']}", {"port": {"fixed_ips": [
        {"subnet_id": sub["id"], "ip_address": f"{sub_prefix}.66"}]}})
    assert status == 200, body


def test_ipv6_prefixes_of_an_interface_still_come_and_go(member):
    net = h.network(member)
    a = h.subnet(member, net["id"], "2001:db8:7::/64", ip_version=6, ipv6_ra_mode="slaac",
                 ipv6_address_mode="slaac")
    b = h.subnet(member, net["id"], "2001:db8:8::/64", ip_version=6, ipv6_ra_mode="slaac",
                 ipv6_address_mode="slaac")
    router = l3.router(member)
    first = l3.add_interface(member, router["id"], subnet_id=a["id"])
    second = l3.add_interface(member, router["id"], subnet_id=b["id"])
    assert first["port_id"] == second["port_id"]
    status, body = l3.remove_interface(member, router["id"], subnet_id=b["id"])
    assert status == 200, body

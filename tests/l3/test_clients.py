"""Routers and floating IPs driven end to end by openstacksdk and the
``openstack`` CLI (no Keystone: ``--os-auth-type none``)."""
from __future__ import annotations

import uuid

import pytest

from tests.clients.module_fixtures import cli, conn  # noqa: F401 - the fixtures

pytestmark = pytest.mark.clients


@pytest.fixture
def name() -> str:
    return f"l3-{uuid.uuid4().hex[:8]}"


def test_cli_router_gateway_interface_route_and_floating_ip(cli, name):
    cli.json("network", "create", f"{name}-ext", "--external")
    cli.json("subnet", "create", f"{name}-ext-sub", "--network", f"{name}-ext",
             "--subnet-range", "172.30.5.0/24")
    cli.json("network", "create", f"{name}-int")
    sub = cli.json("subnet", "create", f"{name}-sub", "--network", f"{name}-int",
                   "--subnet-range", "10.55.0.0/24")
    router = cli.json("router", "create", name)
    assert router["name"] == name and router["status"] == "ACTIVE"
    cli.run("router", "set", name, "--external-gateway", f"{name}-ext")
    shown = cli.json("router", "show", name)
    assert shown["external_gateway_info"]["network_id"] == \
        cli.json("network", "show", f"{name}-ext")["id"]
    cli.run("router", "add", "subnet", name, f"{name}-sub")
    ports = cli.json("port", "list", "--router", name, "--long")
    assert any(p["Fixed IP Addresses"][0]["ip_address"] == "10.55.0.1" for p in ports
               if p["Fixed IP Addresses"])
    cli.run("router", "add", "route", name, "--route",
            "destination=192.168.9.0/24,gateway=10.55.0.9")
    assert cli.json("router", "show", name)["routes"] == [
        {"destination": "192.168.9.0/24", "nexthop": "10.55.0.9"}]
    vm = cli.json("port", "create", f"{name}-vm", "--network", f"{name}-int")
    fip = cli.json("floating", "ip", "create", f"{name}-ext")
    assert fip["status"] == "DOWN" and fip["port_id"] is None
    cli.run("floating", "ip", "set", fip["id"], "--port", vm["id"])
    shown = cli.json("floating", "ip", "show", fip["id"])
    assert shown["port_id"] == vm["id"] and shown["router_id"] == router["id"]
    assert shown["fixed_ip_address"] == vm["fixed_ips"][0]["ip_address"]
    cli.run("floating", "ip", "unset", "--port", fip["id"])
    assert cli.json("floating", "ip", "show", fip["id"])["port_id"] is None
    cli.run("floating", "ip", "delete", fip["id"])
    cli.run("router", "remove", "route", name, "--route",
            "destination=192.168.9.0/24,gateway=10.55.0.9")
    cli.run("router", "remove", "subnet", name, f"{name}-sub")
    cli.run("router", "unset", "--external-gateway", name)
    assert cli.json("router", "show", name)["external_gateway_info"] in (None, {}, "")
    cli.run("router", "delete", name)
    cli.run("port", "delete", vm["id"])
    cli.run("subnet", "delete", sub["id"])
    cli.run("network", "delete", f"{name}-int", f"{name}-ext")


def test_sdk_router_and_floating_ip(conn, name):
    net = conn.network
    ext = net.create_network(name=f"{name}-ext", is_router_external=True)
    net.create_subnet(network_id=ext.id, ip_version=4, cidr="172.30.6.0/24")
    internal = net.create_network(name=f"{name}-int")
    sub = net.create_subnet(network_id=internal.id, ip_version=4, cidr="10.56.0.0/24")
    router = net.create_router(name=name, external_gateway_info={"network_id": ext.id})
    assert router.external_gateway_info["network_id"] == ext.id
    assert router.external_gateway_info["enable_snat"] is True
    info = net.add_interface_to_router(router, subnet=sub.id)
    assert info["subnet_id"] == sub.id
    assert [p.id for p in net.ports(device_id=router.id, device_owner="network:router_interface")] \
        == [info["port_id"]]
    net.add_extra_routes_to_router(router, {"router": {"routes": [
        {"destination": "192.168.8.0/24", "nexthop": "10.56.0.8"}]}})
    assert net.get_router(router.id).routes == [
        {"destination": "192.168.8.0/24", "nexthop": "10.56.0.8"}]
    net.remove_extra_routes_from_router(router, {"router": {"routes": [
        {"destination": "192.168.8.0/24", "nexthop": "10.56.0.8"}]}})
    port = net.create_port(network_id=internal.id)
    fip = net.create_ip(floating_network_id=ext.id, port_id=port.id)
    assert fip.router_id == router.id and fip.port_id == port.id
    assert [f.id for f in net.ips(port_id=port.id)] == [fip.id]
    fip = net.update_ip(fip, port_id=None)
    assert fip.port_id is None
    net.delete_ip(fip)
    net.remove_interface_from_router(router, subnet=sub.id)
    net.update_router(router, external_gateway_info={})
    net.delete_router(router)
    net.delete_port(port)
    net.delete_network(internal)
    net.delete_network(ext)
    assert net.find_router(name) is None


def _forwarding_topology(cli, name, octet):
    cli.json("network", "create", f"{name}-ext", "--external")
    cli.json("subnet", "create", f"{name}-ext-sub", "--network", f"{name}-ext",
             "--subnet-range", f"172.30.{octet}.0/24")
    cli.json("network", "create", f"{name}-int")
    cli.json("subnet", "create", f"{name}-sub", "--network", f"{name}-int",
             "--subnet-range", f"10.{octet}.0.0/24")
    cli.json("router", "create", name)
    cli.run("router", "set", name, "--external-gateway", f"{name}-ext")
    cli.run("router", "add", "subnet", name, f"{name}-sub")
    vm = cli.json("port", "create", f"{name}-vm", "--network", f"{name}-int")
    fip = cli.json("floating", "ip", "create", f"{name}-ext")
    return vm, fip


def test_cli_floating_ip_port_forwarding(cli, name):
    vm, fip = _forwarding_topology(cli, name, 57)
    ip = vm["fixed_ips"][0]["ip_address"]
    pf = cli.json("floating", "ip", "port", "forwarding", "create", fip["id"],
                  "--internal-ip-address", ip, "--port", vm["id"],
                  "--internal-protocol-port", "22", "--external-protocol-port", "2222",
                  "--protocol", "tcp", "--description", "ssh")
    assert pf["internal_port"] == 22 and pf["external_port"] == 2222
    assert pf["description"] == "ssh"
    ranged = cli.json("floating", "ip", "port", "forwarding", "create", fip["id"],
                      "--internal-ip-address", ip, "--port", vm["id"],
                      "--internal-protocol-port", "100:110",
                      "--external-protocol-port", "1100:1110", "--protocol", "udp")
    assert ranged["external_port_range"] == "1100:1110"
    listed = cli.json("floating", "ip", "port", "forwarding", "list", fip["id"])
    assert sorted(p["ID"] for p in listed) == sorted([pf["id"], ranged["id"]])
    cli.run("floating", "ip", "port", "forwarding", "set", fip["id"], pf["id"],
            "--external-protocol-port", "2223")
    shown = cli.json("floating", "ip", "port", "forwarding", "show", fip["id"], pf["id"])
    assert shown["external_port"] == 2223
    assert len(cli.json("floating", "ip", "show", fip["id"])["port_forwardings"]) == 2
    cli.run("floating", "ip", "port", "forwarding", "delete", fip["id"], pf["id"],
            ranged["id"])
    assert cli.json("floating", "ip", "port", "forwarding", "list", fip["id"]) == []
    cli.run("floating", "ip", "delete", fip["id"])
    cli.run("router", "remove", "subnet", name, f"{name}-sub")
    cli.run("router", "delete", name)
    cli.run("port", "delete", vm["id"])
    cli.run("network", "delete", f"{name}-int", f"{name}-ext")


def test_sdk_port_forwarding(conn, name):
    net = conn.network
    ext = net.create_network(name=f"{name}-ext", is_router_external=True)
    net.create_subnet(network_id=ext.id, ip_version=4, cidr="172.30.58.0/24")
    internal = net.create_network(name=f"{name}-int")
    sub = net.create_subnet(network_id=internal.id, ip_version=4, cidr="10.58.0.0/24")
    router = net.create_router(name=name, external_gateway_info={"network_id": ext.id})
    net.add_interface_to_router(router, subnet=sub.id)
    port = net.create_port(network_id=internal.id)
    fip = net.create_ip(floating_network_id=ext.id)
    pf = net.create_port_forwarding(
        floatingip_id=fip.id, protocol="tcp", internal_port_id=port.id,
        internal_ip_address=port.fixed_ips[0]["ip_address"], internal_port=80,
        external_port=8080)
    assert pf.external_port == 8080 and pf.internal_port_id == port.id
    assert [p.id for p in net.port_forwardings(fip.id)] == [pf.id]
    pf = net.update_port_forwarding(pf, fip.id, description="web")
    assert net.get_port_forwarding(pf, fip.id).description == "web"
    assert net.get_ip(fip.id).port_forwardings[0]["id"] == pf.id
    net.delete_port_forwarding(pf, fip.id)
    assert list(net.port_forwardings(fip.id)) == []
    net.delete_ip(fip)
    net.remove_interface_from_router(router, subnet=sub.id)
    net.delete_router(router)
    net.delete_port(port)
    net.delete_network(internal)
    net.delete_network(ext)

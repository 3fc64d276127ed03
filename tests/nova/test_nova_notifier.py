"""The compute service hears about its instances' ports: plugged/unplugged
as agents report them (from the RPC process), network-changed on address
and floating IP changes, network-vif-deleted on delete (from API workers),
batched, and retried when the compute API fails."""
from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest

from neutrino.agents.rpc import PluginApi
from neutrino.service import make_conf
from tests.conftest import Client, Server
from tests.nova.fake_compute import FakeCompute
from tests.rpc.bus import OvsAgent, bus
from tests.rpc.conftest import vhost  # noqa: F401 - the fixture, reused
from tests.waiting import wait_for

ML2 = ("[ml2]\ntype_drivers = flat,vlan,vxlan\ntenant_network_types = vxlan\n"
       "mechanism_drivers = openvswitch\n[ml2_type_vxlan]\nvni_ranges = 700:800\n")


@pytest.fixture(scope="module")
def compute() -> Iterator[FakeCompute]:
    fake = FakeCompute()
    yield fake
    fake.stop()


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, vhost: str,  # noqa: F811
        compute: FakeCompute) -> Iterator[Server]:
    server = Server(tmp_path_factory.mktemp("nova"), extra=(
        f"transport_url = {bus(vhost)}\nservice_plugins = router\n"
        f"send_events_interval = 1\n{ML2}\n[nova]\nendpoint_override = {compute.url}\n"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def admin(srv: Server) -> Client:
    return Client(srv.url, roles="admin")


@pytest.fixture
def host(vhost: str, tmp_path: Path) -> Iterator[tuple[str, PluginApi]]:  # noqa: F811
    name = f"host-{uuid.uuid4().hex[:6]}"
    conf_file = tmp_path / "agent.conf"
    conf_file.write_text(f"[DEFAULT]\nhost = {name}\ntransport_url = {bus(vhost)}\n")
    conf = make_conf(["--config-file", str(conf_file)])
    agent = OvsAgent(conf)
    agent.register()
    api = PluginApi(conf, agent_id=f"ovs-{name}", host=name)
    yield name, api
    api.close()
    agent.stop()


def network(admin: Client, **extra: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    status, body = admin.post("/v2.0/networks", {"network": {"name": "nova", **extra}})
    assert status == 201, body
    net = body["network"]
    cidr = "203.0.113.0/24" if extra.get("router:external") else "10.20.0.0/24"
    status, body = admin.post("/v2.0/subnets", {"subnet": {
        "network_id": net["id"], "ip_version": 4, "cidr": cidr}})
    assert status == 201, body
    return net, body["subnet"]


def instance_port(admin: Client, net: dict[str, Any], **extra: Any) -> dict[str, Any]:
    status, body = admin.post("/v2.0/ports", {"port": {
        "network_id": net["id"], "device_owner": "compute:nova",
        "device_id": str(uuid.uuid4()), **extra}})
    assert status == 201, body
    return body["port"]


def event(port: dict[str, Any], name: str, status: str | None = None) -> dict[str, Any]:
    out = {"server_uuid": port["device_id"], "name": name, "tag": port["id"]}
    if status:
        out["status"] = status
    return out


def test_plugged_when_the_agent_reports_the_device_up_and_unplugged_when_down(
        admin: Client, compute: FakeCompute, host: tuple[str, PluginApi]) -> None:
    name, api = host
    net, _ = network(admin)
    port = instance_port(admin, net, **{"binding:host_id": name})
    api.get_device_details(port["id"])
    api.update_device_up(port["id"])
    plugged = event(port, "network-vif-plugged", "completed")
    assert wait_for(lambda: plugged in compute.events), compute.events
    api.update_device_down(port["id"])
    unplugged = event(port, "network-vif-unplugged", "completed")
    assert wait_for(lambda: unplugged in compute.events), compute.events
    assert compute.headers[-1]["X-OpenStack-Nova-API-Version"] == "2.1"


def test_fixed_ip_change_and_delete_of_an_instance_port(
        admin: Client, compute: FakeCompute) -> None:
    net, subnet = network(admin)
    port = instance_port(admin, net)
    other = admin.post("/v2.0/ports", {"port": {"network_id": net["id"],
                                                 "device_owner": "network:dhcp"}})[1]["port"]
    status, body = admin.put(f"/v2.0/ports/{port['id']}", {"port": {"fixed_ips": [
        {"subnet_id": subnet["id"], "ip_address": "10.20.0.50"}]}})
    assert status == 200, body
    assert wait_for(lambda: event(port, "network-changed") in compute.events), compute.events
    assert admin.delete(f"/v2.0/ports/{other['id']}")[0] == 204
    assert admin.delete(f"/v2.0/ports/{port['id']}")[0] == 204
    assert wait_for(lambda: event(port, "network-vif-deleted") in compute.events)
    # the network's own ports are no instance's: nothing about them
    assert not [e for e in compute.events if e["tag"] == other["id"]]


def test_floating_ip_association_and_disassociation_refresh_the_instance(
        admin: Client, compute: FakeCompute) -> None:
    ext, _ = network(admin, **{"router:external": True})
    net, subnet = network(admin)
    status, body = admin.post("/v2.0/routers", {"router": {
        "name": "nova", "external_gateway_info": {"network_id": ext["id"]}}})
    assert status == 201, body
    router = body["router"]["id"]
    status, body = admin.put(f"/v2.0/routers/{router}/add_router_interface",
                             {"subnet_id": subnet["id"]})
    assert status == 200, body
    port = instance_port(admin, net)
    status, body = admin.post("/v2.0/floatingips", {"floatingip": {
        "floating_network_id": ext["id"], "port_id": port["id"]}})
    assert status == 201, body
    fip = body["floatingip"]["id"]
    changed = event(port, "network-changed")
    assert wait_for(lambda: compute.events.count(changed) == 1), compute.events
    status, body = admin.put(f"/v2.0/floatingips/{fip}", {"floatingip": {"port_id": None}})
    assert status == 200, body
    assert wait_for(lambda: compute.events.count(changed) == 2), compute.events
    status, body = admin.put(f"/v2.0/floatingips/{fip}", {"floatingip": {
        "description": "no news"}})
    assert status == 200, body
    assert admin.delete(f"/v2.0/floatingips/{fip}")[0] == 204
    marker = instance_port(admin, net)
    assert admin.delete(f"/v2.0/ports/{marker['id']}")[0] == 204
    assert wait_for(lambda: event(marker, "network-vif-deleted") in compute.events)
    assert compute.events.count(changed) == 2


def test_events_the_compute_api_failed_to_take_are_sent_again(
        admin: Client, compute: FakeCompute) -> None:
    net, _ = network(admin)
    port = instance_port(admin, net)
    compute.failures = 1
    refused = compute.refused
    assert admin.delete(f"/v2.0/ports/{port['id']}")[0] == 204
    assert wait_for(lambda: event(port, "network-vif-deleted") in compute.events), compute.events
    assert compute.refused == refused + 1

"""``dvr`` on the server, as agents see it over the bus: where a distributed
router is hosted (its SNAT part on a ``dvr_snat`` agent, the rest on every
``dvr`` host with an instance on its subnets), what ``sync_routers`` gives
those hosts (SNAT ports, floating IPs' hosts, the host's floating IP agent
gateway port, permanent neighbours), the per-host DVR MACs, and upstream's
refusals of binding routers to agents by hand."""
from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any, Iterator

import oslo_messaging
import pytest

from neutrino.rpc.transport import rpc_transport
from tests.api import _helpers as h
from tests.conftest import Client, Server
from tests.l3 import _l3
from tests.l3agent.conftest import agent_conf, agent_id, hosts_of, start_server

DIST = "network:router_interface_distributed"
SNAT = "network:router_centralized_snat"
FG = "network:floatingip_agent_gateway"


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, vhost: str) -> Iterator[Server]:
    server = start_server(tmp_path_factory.mktemp("dvrrpc"), vhost,
                          "router_auto_schedule = true\n")
    yield server
    server.stop()


pytestmark = pytest.mark.usefixtures("only_this_tests_agents")


def _project(client: Client) -> str:
    return str(client.session.headers["X-Project-Id"])


def _vm(admin: Client, subnet: dict[str, Any], host: str, project: str) -> dict[str, Any]:
    return h.created(admin.post("/v2.0/ports", {"port": {
        "network_id": subnet["network_id"], "device_owner": "compute:nova",
        "project_id": project,
        "device_id": uuid.uuid4().hex, "binding:host_id": host}}), "port")


def _distributed(admin: Client, member: Client) -> dict[str, Any]:
    ext, _ = _l3.external_network(admin)
    sub = _l3.private_subnet(member)
    router = _l3.router(admin, project_id=_project(member), distributed=True,
                        external_gateway_info={"network_id": ext["id"]})
    _l3.add_interface(member, router["id"], subnet_id=sub["id"])
    return {"ext": ext, "sub": sub, "router": router}


def test_the_snat_part_goes_to_a_dvr_snat_agent_only(admin, member, l3_agents):
    l3_agents(mode="legacy")
    dvr = l3_agents(mode="dvr")
    snat = l3_agents(mode="dvr_snat")
    topo = _distributed(admin, member)
    assert hosts_of(admin, topo["router"]["id"]) == [snat.host]
    # and a centralized router never on the dvr agent
    legacy = _l3.router(member)
    _l3.add_interface(member, legacy["id"], subnet_id=_l3.private_subnet(member)["id"])
    assert dvr.host not in hosts_of(admin, legacy["id"])


def test_a_dvr_host_gets_the_router_once_an_instance_is_bound_there(admin, member, l3_agents):
    compute = l3_agents(mode="dvr")
    snat = l3_agents(mode="dvr_snat")
    topo = _distributed(admin, member)
    rid = topo["router"]["id"]
    assert compute.call("sync_routers", host=compute.host) == []
    vm = _vm(admin, topo["sub"], compute.host, _project(member))
    assert compute.recorder.wait_for("routers_updated", {"routers": [rid]})
    fip = _l3.floatingip(member, topo["ext"]["id"], port_id=vm["id"])

    [router] = compute.call("sync_routers", host=compute.host)
    assert router["id"] == rid and router["distributed"] is True
    assert router["gw_port_host"] == snat.host
    assert [p["device_owner"] for p in router["_interfaces"]] == [DIST]
    [twin] = router["_snat_router_interfaces"]
    assert twin["device_owner"] == SNAT
    assert {"ip_address": vm["fixed_ips"][0]["ip_address"], "mac_address": vm["mac_address"],
            "subnet_id": topo["sub"]["id"]} in router["_arp_entries"]
    assert twin["fixed_ips"][0]["ip_address"] in [e["ip_address"] for e in router["_arp_entries"]]
    [synced] = router["_floatingips"]
    assert synced["id"] == fip["id"] and synced["host"] == compute.host
    [gateway] = router["_floatingip_agent_interfaces"]
    assert gateway["device_owner"] == FG and gateway["network_id"] == topo["ext"]["id"]
    assert gateway["binding:host_id"] == compute.host
    assert gateway["device_id"] == agent_id(admin, compute.host)
    # asked again: the same gateway port, not another
    again = compute.call("sync_routers", host=compute.host)[0]
    assert again["_floatingip_agent_interfaces"][0]["id"] == gateway["id"]
    # the SNAT host has no floating IP of its own here: no gateway port for it
    [central] = snat.call("sync_routers", host=snat.host, router_ids=[rid])
    assert central["_floatingip_agent_interfaces"] == []
    assert central["gw_port"]["binding:host_id"] == snat.host

    # the project sees the ports on its network (the distributed port and the
    # SNAT twin, as the network's owner), not the gateway ports on the external one
    owners = sorted(p["device_owner"] for p in member.get(
        f"/v2.0/ports?device_id={rid}")[1]["ports"])
    assert owners == [SNAT, DIST]
    assert member.get(f"/v2.0/ports?device_owner={FG}")[1]["ports"] == []
    other = Client(member.url, uuid.uuid4().hex, roles="member,reader")
    assert other.get(f"/v2.0/routers/{rid}")[0] == 404


def test_each_host_has_its_own_dvr_mac(srv: Server, vhost: str, tmp_path: Path) -> None:
    transport = rpc_transport(agent_conf(tmp_path, vhost, "cmp-0"))
    try:
        client = oslo_messaging.get_rpc_client(
            transport, oslo_messaging.Target(topic="q-plugin", version="1.1")).prepare(timeout=30)
        one = client.call({}, "get_dvr_mac_address_by_host", host="cmp-1")
        two = client.call({}, "get_dvr_mac_address_by_host", host="cmp-2")
        assert one["host"] == "cmp-1" and one["mac_address"].startswith("fa:16:3f:")
        assert two["mac_address"] != one["mac_address"]
        assert client.call({}, "get_dvr_mac_address_by_host", host="cmp-1") == one
        listed = client.call({}, "get_dvr_mac_address_list")
        assert one in listed and two in listed
    finally:
        transport.cleanup()


def test_binding_routers_to_agents_by_hand_refuses_mismatches(admin, member, l3_agents):
    legacy, dvr = l3_agents(mode="legacy"), l3_agents(mode="dvr")
    legacy_id, dvr_id = agent_id(admin, legacy.host), agent_id(admin, dvr.host)
    centralized = _l3.router(member)
    distributed = _l3.router(admin, project_id=_project(member), distributed=True)
    status, body = admin.post(f"/v2.0/agents/{dvr_id}/l3-routers",
                              {"router_id": centralized["id"]})
    assert status == 409 and body["NeutronError"]["type"] == "RouterL3AgentMismatch"
    assert body["NeutronError"]["message"] == (
        f"Cannot host centralized router {centralized['id']} on dvr L3 agent {dvr_id}.")
    status, body = admin.post(f"/v2.0/agents/{legacy_id}/l3-routers",
                              {"router_id": distributed["id"]})
    assert status == 409 and body["NeutronError"]["type"] == "RouterL3AgentMismatch"
    assert body["NeutronError"]["message"] == (
        f"Cannot host distributed router {distributed['id']} on legacy L3 agent {legacy_id}.")
    status, body = admin.post(f"/v2.0/agents/{dvr_id}/l3-routers",
                              {"router_id": distributed["id"]})
    assert status == 409 and body["NeutronError"]["type"] == "DVRL3CannotAssignToDvrAgent"
    assert hosts_of(admin, distributed["id"]) == []
    # the owner may not bind at all (admin only, as upstream's policy)
    status, _ = member.post(f"/v2.0/agents/{legacy_id}/l3-routers",
                            {"router_id": centralized["id"]})
    assert status in (403, 404)


def test_agents_that_no_longer_fit_let_the_router_go(admin, member, l3_agents):
    legacy, snat = l3_agents(mode="legacy"), l3_agents(mode="dvr_snat")
    topo = _distributed(admin, member)
    rid = topo["router"]["id"]
    assert hosts_of(admin, rid) == [snat.host]
    # without its gateway, a distributed router has no SNAT part to host
    assert admin.put(f"/v2.0/routers/{rid}",
                     {"router": {"external_gateway_info": {}}})[0] == 200
    assert hosts_of(admin, rid) == []
    assert snat.recorder.wait_for("router_removed_from_agent", {"payload": {"router_id": rid}})
    # a centralized router made distributed (while down) leaves its legacy agent
    central = _l3.router(admin, project_id=_project(member), distributed=False,
                         external_gateway_info={"network_id": topo["ext"]["id"]})
    admin.post(f"/v2.0/agents/{agent_id(admin, legacy.host)}/l3-routers",
               {"router_id": central["id"]})
    hosted = hosts_of(admin, central["id"])
    assert hosted and set(hosted) <= {legacy.host, snat.host}
    assert admin.put(f"/v2.0/routers/{central['id']}",
                     {"router": {"admin_state_up": False}})[0] == 200
    assert admin.put(f"/v2.0/routers/{central['id']}",
                     {"router": {"distributed": True}})[0] == 200
    assert hosts_of(admin, central["id"]) in ([], [snat.host])
    assert legacy.host not in hosts_of(admin, central["id"])


def test_a_hosts_agent_gateway_port_goes_with_its_last_floating_ip(admin, member, l3_agents):
    compute = l3_agents(mode="dvr")
    l3_agents(mode="dvr_snat")
    topo = _distributed(admin, member)
    rid = topo["router"]["id"]
    vm = _vm(admin, topo["sub"], compute.host, _project(member))
    fip = _l3.floatingip(member, topo["ext"]["id"], port_id=vm["id"])
    [router] = compute.call("sync_routers", host=compute.host, router_ids=[rid])
    [gateway] = router["_floatingip_agent_interfaces"]
    assert member.put(f"/v2.0/floatingips/{fip['id']}",
                      {"floatingip": {"port_id": None}})[0] == 200
    [router] = compute.call("sync_routers", host=compute.host, router_ids=[rid])
    assert router["_floatingip_agent_interfaces"] == []
    assert admin.get(f"/v2.0/ports/{gateway['id']}")[0] == 404

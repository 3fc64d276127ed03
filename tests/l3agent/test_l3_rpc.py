"""What L3 agents call on ``q-l3-plugin``: their routers in upstream's sync
shape, router ids, the external network, and floating IP statuses."""
from __future__ import annotations

import uuid
from typing import Any, Iterator

import pytest

from tests.agent_notify.recorder import RecordingAgent
from tests.api import _helpers as h
from tests.conftest import Client, Server
from tests.l3 import _l3
from tests.l3agent.conftest import agent_id, forget_agents, hosts_of, start_server
from tests.waiting import wait_for


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, vhost: str) -> Iterator[Server]:
    server = start_server(tmp_path_factory.mktemp("l3rpc"), vhost,
                          "router_auto_schedule = true\n")
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def only_this_tests_agents(srv: Server) -> Iterator[None]:
    """Each test sees only the L3 agents it made, and no external network
    of another test's."""
    yield
    admin = forget_agents(srv)
    for net in admin.get("/v2.0/networks?router:external=true")[1]["networks"]:
        for fip in admin.get(f"/v2.0/floatingips?floating_network_id={net['id']}")[1][
                "floatingips"]:
            admin.delete(f"/v2.0/floatingips/{fip['id']}")
        for router in admin.get("/v2.0/routers")[1]["routers"]:
            if (router["external_gateway_info"] or {}).get("network_id") == net["id"]:
                admin.put(f"/v2.0/routers/{router['id']}",
                          {"router": {"external_gateway_info": None}})
        admin.delete(f"/v2.0/networks/{net['id']}")


def topology(admin: Client, member: Client) -> dict[str, Any]:
    """A router with a gateway, an interface, and a floating IP of a VM port."""
    ext, ext_sub = _l3.external_network(admin)
    sub = _l3.private_subnet(member)
    router = _l3.router(member, external_gateway_info={"network_id": ext["id"]})
    _l3.add_interface(member, router["id"], subnet_id=sub["id"])
    vm = h.created(member.post("/v2.0/ports", {"port": {
        "network_id": sub["network_id"], "device_owner": "compute:nova"}}), "port")
    fip = _l3.floatingip(member, ext["id"], port_id=vm["id"])
    return {"ext": ext, "ext_sub": ext_sub, "sub": sub, "router": router, "vm": vm, "fip": fip}


def test_sync_routers_returns_the_hosts_routers_as_upstream(admin, member, l3_agents):
    agent = l3_agents()
    topo = topology(admin, member)
    rid = topo["router"]["id"]
    assert hosts_of(admin, rid) == [agent.host]

    routers = agent.call("sync_routers", host=agent.host)
    assert [r["id"] for r in routers] == [rid]
    router = routers[0]
    assert router["external_gateway_info"]["network_id"] == topo["ext"]["id"]
    assert router["enable_snat"] is True and router["gw_port_id"] == router["gw_port"]["id"]
    gw = router["gw_port"]
    assert gw["network_id"] == topo["ext"]["id"]
    assert [s["id"] for s in gw["subnets"]] == [topo["ext_sub"]["id"]]
    assert gw["subnets"][0]["cidr"] == topo["ext_sub"]["cidr"]
    assert gw["fixed_ips"][0]["prefixlen"] == 24 and gw["mtu"] == topo["ext"]["mtu"]
    [iface] = router["_interfaces"]
    assert iface["device_owner"] == "network:router_interface"
    assert iface["fixed_ips"][0]["ip_address"] == topo["sub"]["gateway_ip"]
    assert iface["subnets"][0]["gateway_ip"] == topo["sub"]["gateway_ip"]
    assert iface["extra_subnets"] == []
    [fip] = router["_floatingips"]
    assert fip["id"] == topo["fip"]["id"] and fip["port_id"] == topo["vm"]["id"]
    assert fip["fixed_ip_address"] == topo["vm"]["fixed_ips"][0]["ip_address"]
    assert router["routes"] == []
    assert "_conntrack_helpers" not in router  # without the conntrack helper plugin

    # The router's ports are now bound to the agent's host.
    for port_id in (gw["id"], iface["id"]):
        port = admin.get(f"/v2.0/ports/{port_id}")[1]["port"]
        assert port["binding:host_id"] == agent.host

    assert agent.call("sync_routers", host=agent.host, router_ids=[rid])[0]["id"] == rid
    assert agent.call("sync_routers", host=agent.host, router_ids=[str(uuid.uuid4())]) == []
    assert agent.call("get_router_ids", host=agent.host) == [rid]
    assert agent.call("get_external_network_id") == topo["ext"]["id"]


def test_the_sync_that_binds_a_routers_ports_tells_the_l2_agents_with_their_segments(
        admin, member, l3_agents, vhost, tmp_path):
    agent = l3_agents()
    l2 = RecordingAgent(vhost, tmp_path, agent.host, "192.0.2.7")  # the host's L2 agent
    try:
        l2.start()
        topo = topology(admin, member)
        [router] = agent.call("sync_routers", host=agent.host,
                              router_ids=[topo["router"]["id"]])
        ports = {router["gw_port"]["id"]: topo["ext"], router["_interfaces"][0]["id"]:
                 admin.get(f"/v2.0/networks/{topo['sub']['network_id']}")[1]["network"]}

        def told() -> dict[str, Any]:
            return {c["port"]["id"]: c for c in l2.of("port_update") if c["port"]["id"] in ports}
        assert wait_for(lambda: len(told()) == 2), l2.calls
        for port_id, call in told().items():
            assert call["port"]["binding:host_id"] == agent.host
            assert call["port"]["binding:vif_type"] == "ovs"
            assert call["network_type"] == ports[port_id]["provider:network_type"]
            assert call["segmentation_id"] == ports[port_id]["provider:segmentation_id"]
    finally:
        l2.stop()


def test_an_agent_that_comes_up_takes_unhosted_routers(admin, member, l3_agents):
    router = _l3.router(member)
    _l3.add_interface(member, router["id"], subnet_id=_l3.private_subnet(member)["id"])
    assert hosts_of(admin, router["id"]) == []  # no agent yet
    agent = l3_agents()
    assert router["id"] in agent.call("get_router_ids", host=agent.host)
    assert hosts_of(admin, router["id"]) == [agent.host]


def test_a_disabled_agent_syncs_nothing(admin, member, l3_agents):
    agent = l3_agents()
    router = _l3.router(member)
    _l3.add_interface(member, router["id"], subnet_id=_l3.private_subnet(member)["id"])
    assert admin.put(f"/v2.0/agents/{agent_id(admin, agent.host)}",
                     {"agent": {"admin_state_up": False}})[0] == 200
    assert agent.call("sync_routers", host=agent.host) == []
    assert agent.call("sync_routers", host="no-such-host") == []


def test_floating_ip_status_follows_the_agent(admin, member, l3_agents):
    agent = l3_agents()
    topo = topology(admin, member)
    fip_id, rid = topo["fip"]["id"], topo["router"]["id"]
    assert topo["fip"]["status"] == "DOWN"
    before = member.get(f"/v2.0/floatingips/{fip_id}")[1]["floatingip"]["revision_number"]
    agent.call("update_floatingip_statuses", router_id=rid, fip_statuses={fip_id: "ACTIVE"})
    fip = member.get(f"/v2.0/floatingips/{fip_id}")[1]["floatingip"]
    assert fip["status"] == "ACTIVE" and fip["revision_number"] > before
    agent.call("update_floatingip_statuses", router_id=rid,
               fip_statuses={fip_id: "ERROR", str(uuid.uuid4()): "ACTIVE"})
    assert member.get(f"/v2.0/floatingips/{fip_id}")[1]["floatingip"]["status"] == "ERROR"
    agent.call("update_floatingip_statuses", router_id=rid, fip_statuses={fip_id: "DOWN"})
    assert member.get(f"/v2.0/floatingips/{fip_id}")[1]["floatingip"]["status"] == "DOWN"


def test_floating_ip_changes_reach_the_hosting_agent(admin, member, l3_agents):
    agent = l3_agents()
    topo = topology(admin, member)
    rid = topo["router"]["id"]
    agent.recorder.calls.clear()
    assert member.put(f"/v2.0/floatingips/{topo['fip']['id']}",
                      {"floatingip": {"port_id": None}})[0] == 200
    assert agent.recorder.wait_for("routers_updated", {"routers": [rid]})
    agent.recorder.calls.clear()
    assert member.delete(f"/v2.0/floatingips/{topo['fip']['id']}")[0] == 204
    # Unassociated: no router to tell.
    assert member.put(f"/v2.0/routers/{rid}/remove_router_interface",
                      {"subnet_id": topo["sub"]["id"]})[0] == 200
    assert agent.recorder.wait_for("routers_updated", {"routers": [rid]})


def test_deleting_a_port_with_a_floating_ip_tells_the_router_agent(admin, member, l3_agents):
    agent = l3_agents()
    topo = topology(admin, member)
    agent.recorder.calls.clear()
    assert admin.delete(f"/v2.0/ports/{topo['vm']['id']}")[0] == 204
    assert agent.recorder.wait_for("routers_updated", {"routers": [topo["router"]["id"]]})
    fip = member.get(f"/v2.0/floatingips/{topo['fip']['id']}")[1]["floatingip"]
    assert fip["port_id"] is None and fip["router_id"] is None

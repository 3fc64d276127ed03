"""The server tells L2 agents what changed, over fanouts, once committed:
port and network updates and deletes, and security group changes; and how
many messages it puts on the bus for that (a fleet of agents multiplies them).

Ordering without clocks: a fanout queue delivers in order, so once a
sentinel ``port_update`` sent last has arrived, every earlier one has too."""
from __future__ import annotations

import time
import uuid
from typing import Any, Callable

from tests.agent_notify.recorder import RecordingAgent
from tests.conftest import Client
from tests.waiting import wait_for

UPDATES = 6
REPORTS = 20


def network(admin: Client, **extra: Any) -> dict[str, Any]:
    status, body = admin.post("/v2.0/networks", {"network": {"name": "l2n", **extra}})
    assert status == 201, body
    net = body["network"]
    status, body = admin.post("/v2.0/subnets", {"subnet": {
        "network_id": net["id"], "ip_version": 4, "cidr": "10.9.0.0/24"}})
    assert status == 201, body
    return net


def port(admin: Client, net: dict[str, Any], **extra: Any) -> dict[str, Any]:
    status, body = admin.post("/v2.0/ports", {"port": {"network_id": net["id"], **extra}})
    assert status == 201, body
    return body["port"]


def test_updating_a_bound_port_fans_out_port_update_with_its_segment(
        admin: Client, agents: Callable[..., RecordingAgent]) -> None:
    agent = agents()
    net = network(admin)
    p = port(admin, net, **{"binding:host_id": agent.host})
    status, body = admin.put(f"/v2.0/ports/{p['id']}", {"port": {"admin_state_up": False}})
    assert status == 200, body
    got = wait_for(lambda: [c for c in agent.of("port_update") if c["port"]["id"] == p["id"]])
    assert got, agent.calls
    call = got[-1]
    assert call["port"]["admin_state_up"] is False
    assert call["network_type"] == "vxlan" and 500 <= call["segmentation_id"] <= 600
    assert call["physical_network"] is None


def test_an_unbound_port_gets_no_port_update_and_a_deleted_port_a_port_delete(
        admin: Client, agents: Callable[..., RecordingAgent]) -> None:
    agent = agents()
    net = network(admin)
    p = port(admin, net)
    assert admin.put(f"/v2.0/ports/{p['id']}", {"port": {"admin_state_up": False}})[0] == 200
    assert admin.delete(f"/v2.0/ports/{p['id']}")[0] == 204
    assert wait_for(lambda: {"port_id": p["id"]} in agent.of("port_delete")), agent.calls
    time.sleep(0.5)
    assert not [c for c in agent.of("port_update") if c["port"]["id"] == p["id"]]


def test_a_name_change_is_not_news_for_agents(
        admin: Client, agents: Callable[..., RecordingAgent]) -> None:
    agent = agents()
    net = network(admin)
    p = port(admin, net, **{"binding:host_id": agent.host})
    assert admin.put(f"/v2.0/ports/{p['id']}", {"port": {"name": "renamed"}})[0] == 200
    assert admin.put(f"/v2.0/ports/{p['id']}", {"port": {"admin_state_up": False}})[0] == 200
    got = wait_for(lambda: [c for c in agent.of("port_update") if c["port"]["id"] == p["id"]])
    time.sleep(0.5)
    got = [c for c in agent.of("port_update") if c["port"]["id"] == p["id"]]
    assert [c["port"]["admin_state_up"] for c in got] == [False]


def test_network_mtu_change_and_delete_reach_agents(
        admin: Client, agents: Callable[..., RecordingAgent]) -> None:
    agent = agents()
    net = network(admin)
    status, body = admin.put(f"/v2.0/networks/{net['id']}", {"network": {"mtu": 1400}})
    assert status == 200, body
    got = wait_for(lambda: [c for c in agent.of("network_update")
                        if c["network"]["id"] == net["id"]])
    assert got and got[0]["network"]["mtu"] == 1400
    assert admin.delete(f"/v2.0/networks/{net['id']}")[0] == 204
    assert wait_for(lambda: {"network_id": net["id"]} in agent.of("network_delete"))


def test_rule_changes_fan_out_rule_updated_for_the_group(
        admin: Client, agents: Callable[..., RecordingAgent]) -> None:
    agent = agents()
    status, body = admin.post("/v2.0/security-groups", {"security_group": {"name": "l2n"}})
    assert status == 201, body
    sg = body["security_group"]["id"]
    status, body = admin.post("/v2.0/security-group-rules", {"security_group_rule": {
        "security_group_id": sg, "direction": "ingress", "protocol": "tcp",
        "port_range_min": 22, "port_range_max": 22}})
    assert status == 201, body
    assert wait_for(lambda: agent.of("security_groups_rule_updated").count(
        {"security_groups": [sg]}) == 1), agent.calls
    rule = body["security_group_rule"]["id"]
    assert admin.delete(f"/v2.0/security-group-rules/{rule}")[0] == 204
    assert wait_for(lambda: agent.of("security_groups_rule_updated").count(
        {"security_groups": [sg]}) == 2), agent.calls


def test_ports_joining_and_leaving_groups_fan_out_member_updated(
        admin: Client, agents: Callable[..., RecordingAgent]) -> None:
    agent = agents()
    groups = []
    for name in ("a", "b"):
        status, body = admin.post("/v2.0/security-groups", {"security_group": {"name": name}})
        assert status == 201, body
        groups.append(body["security_group"]["id"])
    net = network(admin)
    p = port(admin, net, security_groups=[groups[0]])
    member = agent.of  # shorthand
    assert wait_for(lambda: {"security_groups": [groups[0]]} in member(
        "security_groups_member_updated")), agent.calls
    assert admin.put(f"/v2.0/ports/{p['id']}",
                     {"port": {"security_groups": [groups[1]]}})[0] == 200
    assert wait_for(lambda: {"security_groups": sorted(groups)} in member(
        "security_groups_member_updated")), agent.calls
    dhcp = port(admin, net, device_owner="network:dhcp")
    assert admin.delete(f"/v2.0/ports/{dhcp['id']}")[0] == 204
    assert admin.delete(f"/v2.0/ports/{p['id']}")[0] == 204
    assert wait_for(lambda: member("security_groups_member_updated").count(
        {"security_groups": [groups[1]]}) == 1), agent.calls
    assert wait_for(lambda: {"port_id": dhcp["id"]} in agent.of("port_delete"))
    # the network's own ports are in no group: no member updates for them
    assert {"security_groups": []} not in member("security_groups_member_updated")



def flush(admin: Client, agents: list[RecordingAgent], sentinel: dict[str, Any]) -> None:
    """Set ``sentinel`` down and wait until every agent has its port_update."""
    assert admin.put(f"/v2.0/ports/{sentinel['id']}",
                     {"port": {"admin_state_up": False}})[0] == 200
    for agent in agents:
        assert wait_for(lambda: [c for c in agent.of("port_update")
                             if c["port"]["id"] == sentinel["id"]]), agent.calls


def test_a_port_update_is_one_fanout_message_whatever_the_number_of_agents(
        admin: Client, agents: Callable[..., RecordingAgent]) -> None:
    hosts = [agents(tunneling_ip=f"192.0.2.{n}") for n in (11, 12, 13)]
    net = network(admin)
    p = port(admin, net, **{"binding:host_id": hosts[0].host})
    sentinel = port(admin, net, **{"binding:host_id": hosts[0].host})
    for agent in hosts:
        agent.calls.clear()
    for n in range(UPDATES):
        assert admin.put(f"/v2.0/ports/{p['id']}",
                         {"port": {"admin_state_up": n % 2 == 1}})[0] == 200
    flush(admin, hosts, sentinel)
    for agent in hosts:
        # casts of the ports' creation (security group members, l2pop) may still
        # be arriving after calls.clear(); count what the updates sent
        updates = [c for m, c in agent.calls if m == "port_update" and c["port"]["id"] == p["id"]]
        assert len(updates) == UPDATES, agent.calls


def test_state_reports_put_nothing_on_the_bus_for_other_agents(
        admin: Client, agents: Callable[..., RecordingAgent]) -> None:
    listener, reporter = agents(tunneling_ip="192.0.2.21"), agents(tunneling_ip="192.0.2.22")
    net = network(admin)
    sentinel = port(admin, net, **{"binding:host_id": listener.host})
    # the port's creation casts its group's member update: let it land first
    assert wait_for(lambda: listener.of("security_groups_member_updated")), listener.calls
    listener.calls.clear()
    answers = {reporter.report_state() for _ in range(REPORTS)}
    assert answers == {"alive"}
    flush(admin, [listener], sentinel)
    assert [m for m, c in listener.calls if c.get("port", {}).get("id") != sentinel["id"]] == []


def test_activating_a_binding_tells_the_old_host_to_let_go_and_the_new_one_to_take_over(
        admin: Client, agents: Callable[..., RecordingAgent]) -> None:
    """A live migration's last step (``binding-extended``): the agents are
    told, over their fanouts, which host now holds the port."""
    source, target = agents(), agents(tunneling_ip="192.0.2.2")
    nova = Client(admin.url, uuid.uuid4().hex, "service,admin")  # the compute service
    net = network(admin)
    p = port(admin, net, device_owner="compute:nova", device_id=str(uuid.uuid4()),
             **{"binding:host_id": source.host})
    status, body = nova.post(f"/v2.0/ports/{p['id']}/bindings",
                             {"binding": {"host": target.host}})
    assert status == 201, body
    assert body["binding"]["status"] == "INACTIVE"
    status, body = nova.put(f"/v2.0/ports/{p['id']}/bindings/{target.host}/activate", {})
    assert status == 200, body
    for agent in (source, target):  # two fanouts: their messages may come in either order
        assert wait_for(lambda: agent.of("binding_activate") and agent.of("binding_deactivate"),
                        30), agent.calls
        assert agent.of("binding_activate") == [{"port_id": p["id"], "host": target.host}]
        assert agent.of("binding_deactivate") == [
            {"port_id": p["id"], "host": source.host, "network_id": net["id"]}]

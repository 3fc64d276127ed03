"""l2population: tunnel endpoints and MAC/IPs pushed to agents as ports go
ACTIVE, DOWN, move, change addresses or are deleted."""
from __future__ import annotations

from typing import Any, Callable

from tests.agent_notify.recorder import RecordingAgent
from tests.agent_notify.test_agent_notifier import network, port
from tests.conftest import Client
from tests.waiting import wait_for

FLOOD = ["00:00:00:00:00:00", "0.0.0.0"]


def activate(agent: RecordingAgent, port_id: str) -> None:
    assert agent.api is not None
    agent.api.get_device_details(port_id)
    agent.api.update_device_up(port_id)


def entries(p: dict[str, Any]) -> list[list[str]]:
    return [[p["mac_address"], ip["ip_address"]] for ip in p["fixed_ips"]]


def fdb(net: dict[str, Any], ports: dict[str, Any]) -> dict[str, Any]:
    return {"fdb_entries": {net["id"]: {"segment_id": net["provider:segmentation_id"],
                                        "network_type": "vxlan", "ports": ports}}}


def test_active_ports_are_announced_and_a_new_host_learns_the_others(
        admin: Client, agents: Callable[..., RecordingAgent]) -> None:
    h1 = agents(tunneling_ip="192.0.2.11")
    net = network(admin)
    a = port(admin, net, **{"binding:host_id": h1.host})
    activate(h1, a["id"])
    first = fdb(net, {"192.0.2.11": [FLOOD, *entries(a)]})
    assert wait_for(lambda: first in h1.of("add_fdb_entries")), h1.calls
    h2 = agents(tunneling_ip="192.0.2.12")
    b = port(admin, net, **{"binding:host_id": h2.host})
    activate(h2, b["id"])
    second = fdb(net, {"192.0.2.12": [FLOOD, *entries(b)]})
    assert wait_for(lambda: second in h1.of("add_fdb_entries")), h1.calls
    # only the new host is told the endpoints it did not know
    assert wait_for(lambda: first in h2.of("add_fdb_entries")), h2.calls
    assert h1.of("add_fdb_entries").count(first) == 1
    # a second port on a host with one already: just its addresses
    c = port(admin, net, **{"binding:host_id": h1.host})
    d = port(admin, net, **{"binding:host_id": h1.host})
    activate(h1, c["id"])
    activate(h1, d["id"])
    third = fdb(net, {"192.0.2.11": entries(d)})
    assert wait_for(lambda: third in h2.of("add_fdb_entries")), h2.calls


def test_down_ip_change_and_delete_remove_or_update_entries(
        admin: Client, agents: Callable[..., RecordingAgent]) -> None:
    h1, h2 = agents(tunneling_ip="192.0.2.21"), agents(tunneling_ip="192.0.2.22")
    net = network(admin)
    a = port(admin, net, **{"binding:host_id": h1.host})
    b = port(admin, net, **{"binding:host_id": h2.host})
    activate(h1, a["id"])
    activate(h2, b["id"])
    assert h2.api is not None
    h2.api.update_device_down(b["id"])
    gone = fdb(net, {"192.0.2.22": [FLOOD, *entries(b)]})
    assert wait_for(lambda: gone in h1.of("remove_fdb_entries")), h1.calls
    status, body = admin.put(f"/v2.0/ports/{a['id']}", {"port": {"fixed_ips": [
        {"subnet_id": a["fixed_ips"][0]["subnet_id"], "ip_address": "10.9.0.77"}]}})
    assert status == 200, body
    change = {"fdb_entries": {"chg_ip": {net["id"]: {"192.0.2.21": {
        "before": entries(a), "after": [[a["mac_address"], "10.9.0.77"]]}}}}}
    assert wait_for(lambda: change in h2.of("update_fdb_entries")), h2.calls
    assert admin.delete(f"/v2.0/ports/{a['id']}")[0] == 204
    removed = fdb(net, {"192.0.2.21": [FLOOD, [a["mac_address"], "10.9.0.77"]]})
    assert wait_for(lambda: removed in h2.of("remove_fdb_entries")), h2.calls


def test_a_port_moving_away_is_removed_from_its_old_host(
        admin: Client, agents: Callable[..., RecordingAgent]) -> None:
    h1, h2 = agents(tunneling_ip="192.0.2.31"), agents(tunneling_ip="192.0.2.32")
    net = network(admin)
    a = port(admin, net, **{"binding:host_id": h1.host})
    activate(h1, a["id"])
    status, body = admin.put(f"/v2.0/ports/{a['id']}", {"port": {"binding:host_id": h2.host}})
    assert status == 200, body
    moved = fdb(net, {"192.0.2.31": [FLOOD, *entries(a)]})
    assert wait_for(lambda: moved in h2.of("remove_fdb_entries")), h2.calls


def test_a_restarted_agent_asking_refresh_tunnels_gets_the_full_entries_again(
        admin: Client, agents: Callable[..., RecordingAgent]) -> None:
    h1, h2 = agents(tunneling_ip="192.0.2.41"), agents(tunneling_ip="192.0.2.42")
    net = network(admin)
    a = port(admin, net, **{"binding:host_id": h1.host})
    b = port(admin, net, **{"binding:host_id": h2.host})
    c = port(admin, net, **{"binding:host_id": h2.host})
    for agent, p in ((h1, a), (h2, b), (h2, c)):
        activate(agent, p["id"])
    full = fdb(net, {"192.0.2.41": [FLOOD, *entries(a)]})
    # Every agent hears each of the three ports announced (h2 its own too),
    # and h2 is sent the full entries for its first port and again for its
    # second (two may go ACTIVE at once: l2pop.port_up). Wait for all five,
    # or one still on its way would count as the refresh's.
    assert wait_for(lambda: len(h2.of("add_fdb_entries")) == 5), h2.calls
    assert full in h2.of("add_fdb_entries")
    assert h2.api is not None
    # already ACTIVE: without refresh_tunnels nothing is sent again
    h2.api.update_device_list([b["id"], c["id"]], [])
    before = len(h2.of("add_fdb_entries"))
    sent = h2.of("add_fdb_entries").count(full)
    h2.api.update_device_list([b["id"], c["id"]], [], refresh_tunnels=True)
    assert wait_for(lambda: h2.of("add_fdb_entries").count(full) == sent + 1), h2.calls
    assert len(h2.of("add_fdb_entries")) == before + 1  # once per network, not per port

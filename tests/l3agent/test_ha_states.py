"""``l3-ha`` with L3 agents over RabbitMQ: an HA router on several agents,
an HA port per agent, and the states the agents report
(``update_ha_routers_states``) shown per agent in ``/routers/{id}/l3-agents``."""
from __future__ import annotations

from typing import Any, Iterator

import pytest

from tests.conftest import Client, Server
from tests.l3 import _l3
from tests.l3agent.conftest import agent_id, start_server

HA_PORT = "network:router_ha_interface"


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, vhost: str) -> Iterator[Server]:
    server = start_server(tmp_path_factory.mktemp("l3ha"), vhost,
                          "router_auto_schedule = true\nmax_l3_agents_per_router = 2\n")
    yield server
    server.stop()


pytestmark = pytest.mark.usefixtures("only_this_tests_agents")


def ha_network(admin: Client) -> dict[str, Any] | None:
    name = f"HA network project {admin.session.headers['X-Project-Id']}"
    nets = [n for n in admin.get("/v2.0/networks")[1]["networks"] if n["name"] == name]
    return nets[0] if nets else None


def ha_ports(admin: Client, router_id: str) -> list[dict[str, Any]]:
    return admin.get(f"/v2.0/ports?device_id={router_id}&device_owner={HA_PORT}")[1]["ports"]


def states(admin: Client, router_id: str) -> dict[str, Any]:
    status, body = admin.get(f"/v2.0/routers/{router_id}/l3-agents")
    assert status == 200, body
    return {a["host"]: a.get("ha_state", "absent") for a in body["agents"]}


def test_ha_router_gets_an_ha_port_per_agent_and_their_states(admin, l3_agents):
    agents = [l3_agents() for _ in range(3)]
    router = _l3.router(admin, ha=True)
    sub = _l3.private_subnet(admin)
    _l3.add_interface(admin, router["id"], subnet_id=sub["id"])
    hosting = states(admin, router["id"])
    # max_l3_agents_per_router = 2 of the three, each standby until told.
    assert list(hosting.values()) == ["standby", "standby"]
    net = ha_network(admin)
    assert net is not None
    ports = ha_ports(admin, router["id"])
    assert len(ports) == 2
    assert {p["network_id"] for p in ports} == {net["id"]}
    assert {p["project_id"] for p in ports} == {""}
    assert {p["name"] for p in ports} == {
        f"HA port project {admin.session.headers['X-Project-Id']}"}
    # An agent reports its VRRP state; the API shows it for that agent only.
    first, second = sorted(hosting)
    agent = next(a for a in agents if a.host == first)
    agent.call("update_ha_routers_states", host=first, states={router["id"]: "active"})
    assert states(admin, router["id"]) == {first: "active", second: "standby"}
    # An agent taken off the router loses its HA port.
    assert admin.delete(f"/v2.0/agents/{agent_id(admin, first)}/l3-routers/"
                        f"{router['id']}")[0] == 204
    assert states(admin, router["id"]) == {second: "standby"}
    assert len(ha_ports(admin, router["id"])) == 1
    # Deleting the router takes its HA ports and the project's HA network.
    assert _l3.remove_interface(admin, router["id"], subnet_id=sub["id"])[0] == 200
    assert admin.delete(f"/v2.0/routers/{router['id']}")[0] == 204
    assert ha_ports(admin, router["id"]) == []
    assert ha_network(admin) is None


def test_legacy_routers_show_no_ha_state(admin, l3_agents):
    l3_agents()
    router = _l3.router(admin, ha=False)
    sub = _l3.private_subnet(admin)
    _l3.add_interface(admin, router["id"], subnet_id=sub["id"])
    assert list(states(admin, router["id"]).values()) == ["absent"]
    assert ha_ports(admin, router["id"]) == []


def test_ha_router_sync_data_gives_each_host_its_ha_port_and_ports_follow_the_active(
        admin, l3_agents):
    agents = [l3_agents() for _ in range(2)]
    router = _l3.router(admin, ha=True)
    sub = _l3.private_subnet(admin)
    iface = _l3.add_interface(admin, router["id"], subnet_id=sub["id"])
    ports = {p["id"]: p for p in ha_ports(admin, router["id"])}
    synced = {a.host: a.call("sync_routers", host=a.host, router_ids=[router["id"]])[0]
              for a in agents}
    for host, data in synced.items():
        assert data["ha"] is True and 1 <= data["ha_vr_id"] <= 255
        assert data["_ha_interface"]["id"] in ports  # the agent's own HA port...
        assert data["_ha_interface"]["binding:host_id"] == host  # ...bound to its host
        assert data["_ha_state"] == "standby"
        assert [p["id"] for p in data["_interfaces"]] == [iface["port_id"]]
    assert len({d["_ha_interface"]["id"] for d in synced.values()}) == 2
    assert len({d["ha_vr_id"] for d in synced.values()}) == 1
    # the interface port is bound where the router is active
    first, second = sorted(synced)
    agent = next(a for a in agents if a.host == second)
    agent.call("update_ha_routers_states", host=second, states={router["id"]: "active"})
    port = admin.get(f"/v2.0/ports/{iface['port_id']}")[1]["port"]
    assert port["binding:host_id"] == second


def test_vrrp_ids_are_unique_on_the_ha_network_and_kept_when_another_router_goes(
        admin, l3_agents):
    agent = l3_agents()
    routers = [_l3.router(admin, ha=True) for _ in range(3)]
    for r in routers:
        _l3.add_interface(admin, r["id"], subnet_id=_l3.private_subnet(admin)["id"])

    def vr_ids():
        mine = {r["id"] for r in routers}  # earlier tests' routers come to this agent too
        return {r["id"]: r["ha_vr_id"] for r in agent.call("sync_routers", host=agent.host)
                if r["id"] in mine}
    before = vr_ids()
    assert sorted(before.values()) == [1, 2, 3]
    first = min(before, key=before.get)
    for port in admin.get(f"/v2.0/ports?device_id={first}&device_owner="
                          "network:ha_router_replicated_interface")[1]["ports"]:
        _l3.remove_interface(admin, first, port_id=port["id"])
    assert admin.delete(f"/v2.0/routers/{first}")[0] == 204
    after = vr_ids()
    assert after == {k: v for k, v in before.items() if k != first}

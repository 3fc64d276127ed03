"""The DHCP agent's loop against a recording fake of the server's DHCP RPC
(the server side is on branch ``dhcp``, not merged here yet) and an
in-memory driver that records what the host would hold."""
from __future__ import annotations

import copy
import uuid
from pathlib import Path
from typing import Any

import oslo_messaging
import pytest

from neutrino.agents.dhcp.agent import CREATE_CHUNK, DhcpAgent, Notifications
from neutrino.resources.dhcp import dhcp_device_id
from neutrino.service import make_conf

HOST = "dhcp-host-1"


class FakeServer:
    """The server's DHCP RPC answers from an in-memory set of networks."""

    def __init__(self) -> None:
        self.networks: dict[str, dict[str, Any]] = {}
        self.calls: list[tuple[str, Any]] = []
        self.fail_create = 0
        self.bulk = True  # False: a server without create_dhcp_ports (upstream's)

    def add_network(self, cidrs: tuple[str, ...] = ("10.0.0.0/24",), dhcp: bool = True,
                    ports: int = 1) -> dict[str, Any]:
        net_id = str(uuid.uuid4())
        subnets = [{"id": str(uuid.uuid4()), "network_id": net_id, "cidr": c, "ip_version": 4,
                    "enable_dhcp": dhcp, "gateway_ip": c.replace("0/24", "1"),
                    "dns_nameservers": [], "host_routes": []} for c in cidrs]
        net = {"id": net_id, "project_id": "p1", "mtu": 1450, "subnets": subnets, "ports": []}
        self.networks[net_id] = net
        for i in range(ports):
            self.add_port(net_id, "compute:nova", f"{10 + i}")
        return net

    def add_port(self, net_id: str, owner: str, last: str, **kw: Any) -> dict[str, Any]:
        net = self.networks[net_id]
        sub = net["subnets"][0]
        port = {"id": str(uuid.uuid4()), "network_id": net_id, "device_owner": owner,
                "device_id": kw.pop("device_id", "vm"),
                "mac_address": f"fa:16:3e:00:00:{int(last):02x}",
                "fixed_ips": [{"subnet_id": sub["id"],
                               "ip_address": sub["cidr"].replace("0/24", last)}], **kw}
        net["ports"].append(port)
        return port

    def get_active_networks_info(self, enable_dhcp_filter: bool = True) -> list[dict[str, Any]]:
        self.calls.append(("get_active_networks_info", None))
        return copy.deepcopy(list(self.networks.values()))

    def get_network_info(self, network_id: str) -> dict[str, Any] | None:
        self.calls.append(("get_network_info", network_id))
        return copy.deepcopy(self.networks.get(network_id))

    def create_dhcp_port(self, port: dict[str, Any]) -> dict[str, Any] | None:
        self.calls.append(("create_dhcp_port", copy.deepcopy(port)))
        if self.fail_create:
            self.fail_create -= 1
            raise RuntimeError("MessagingTimeout")
        wanted = port["port"]
        created = self.add_port(wanted["network_id"], "network:dhcp", "2",
                                device_id=wanted["device_id"])
        return copy.deepcopy(created)

    def create_dhcp_ports(self, ports: list[dict[str, Any]]) -> list[dict[str, Any] | None]:
        """As neutrino's server: None for a port that could not be made."""
        if not self.bulk:
            raise oslo_messaging.RemoteError("NoSuchMethod", "create_dhcp_ports")
        self.calls.append(("create_dhcp_ports", copy.deepcopy(ports)))
        out: list[dict[str, Any] | None] = []
        for port in ports:
            if self.fail_create:
                self.fail_create -= 1
                out.append(None)
                continue
            created = self.add_port(port["port"]["network_id"], "network:dhcp", "2",
                                    device_id=port["port"]["device_id"])
            out.append(copy.deepcopy(created))
        return out

    def update_dhcp_port(self, port_id: str, port: dict[str, Any]) -> dict[str, Any] | None:
        self.calls.append(("update_dhcp_port", (port_id, copy.deepcopy(port))))
        for net in self.networks.values():
            for p in net["ports"]:
                if p["id"] == port_id:
                    p.update({k: v for k, v in port["port"].items() if k != "network_id"})
                    return copy.deepcopy(p)
        return None

    def release_dhcp_port(self, network_id: str, device_id: str) -> None:
        self.calls.append(("release_dhcp_port", (network_id, device_id)))

    def dhcp_ready_on_ports(self, port_ids: list[str]) -> None:
        self.calls.append(("dhcp_ready_on_ports", sorted(port_ids)))

    def called(self, method: str) -> list[Any]:
        return [args for name, args in self.calls if name == method]


class FakeDriver:
    """What the host holds, per network: the last network and port enabled."""

    DEV_NAME_PREFIX = "tap"

    def __init__(self, existing: tuple[str, ...] = ()) -> None:
        self.served: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
            n: ({}, {}) for n in existing}
        self.disabled: list[tuple[str, str | None]] = []

    def existing(self) -> list[str]:
        return sorted(self.served)

    def device_name(self, port: dict[str, Any]) -> str:
        return ("tap" + port["id"])[:14]

    def enable(self, network: dict[str, Any], port: dict[str, Any]) -> None:
        self.served[network["id"]] = (network, port)

    def disable(self, network_id: str, device_name: str | None = None) -> None:
        self.served.pop(network_id, None)
        self.disabled.append((network_id, device_name))


@pytest.fixture
def server() -> FakeServer:
    return FakeServer()


def agent_for(tmp_path: Path, server: FakeServer, driver: FakeDriver) -> DhcpAgent:
    conf_file = tmp_path / "dhcp_agent.ini"
    conf_file.write_text(f"[DEFAULT]\nhost = {HOST}\nstate_path = {tmp_path}\n")
    return DhcpAgent(make_conf(["--config-file", str(conf_file)]), server,
                     driver=driver)  # type: ignore[arg-type]


def test_full_sync_creates_this_hosts_dhcp_port_serves_and_reports_ports_ready(
        tmp_path: Path, server: FakeServer) -> None:
    net = server.add_network(ports=2)
    driver = FakeDriver()
    agent = agent_for(tmp_path, server, driver)
    agent.step()
    sub = net["subnets"][0]["id"]
    assert server.called("create_dhcp_ports") == [[{"port": {
        "name": "", "admin_state_up": True, "network_id": net["id"], "project_id": "p1",
        "device_id": dhcp_device_id(net["id"], HOST), "device_owner": "network:dhcp",
        "fixed_ips": [{"subnet_id": sub}]}}]]
    served, port = driver.served[net["id"]]
    assert port["device_owner"] == "network:dhcp"
    assert sorted(p["id"] for p in served["ports"]) == sorted(
        p["id"] for p in server.networks[net["id"]]["ports"])  # incl. the new DHCP port
    assert server.called("dhcp_ready_on_ports") == [
        sorted(p["id"] for p in server.networks[net["id"]]["ports"])]
    assert agent.configurations() == {
        "dhcp_driver": "neutron.agent.linux.dhcp.Dnsmasq", "dhcp_lease_duration": 86400,
        "log_agent_heartbeats": False, "networks": 1, "subnets": 1, "ports": 3}
    assert (agent.agent_type, agent.binary, agent.topic) == (
        "DHCP agent", "neutron-dhcp-agent", "dhcp_agent")


def test_device_id_is_upstreams_host_uuid5_form() -> None:
    assert dhcp_device_id("net1", "compute-1.example.org") == (
        f"dhcp{uuid.uuid5(uuid.NAMESPACE_DNS, 'compute-1')}-net1")


def test_an_existing_dhcp_port_is_reused_and_a_reserved_one_taken_over(
        tmp_path: Path, server: FakeServer) -> None:
    mine = server.add_network()
    own = server.add_port(mine["id"], "network:dhcp", "2",
                          device_id=dhcp_device_id(mine["id"], HOST))
    spare = server.add_network()
    reserved = server.add_port(spare["id"], "network:dhcp", "3", device_id="reserved_dhcp_port")
    driver = FakeDriver()
    agent_for(tmp_path, server, driver).step()
    assert server.called("create_dhcp_port") == []
    assert driver.served[mine["id"]][1]["id"] == own["id"]
    assert server.called("update_dhcp_port") == [(reserved["id"], {"port": {
        "network_id": spare["id"], "device_id": dhcp_device_id(spare["id"], HOST)}})]
    assert driver.served[spare["id"]][1]["id"] == reserved["id"]


def test_a_dhcp_port_missing_a_new_subnet_gets_an_address_there(
        tmp_path: Path, server: FakeServer) -> None:
    net = server.add_network(cidrs=("10.0.0.0/24", "10.1.0.0/24"))
    own = server.add_port(net["id"], "network:dhcp", "2",
                          device_id=dhcp_device_id(net["id"], HOST))
    before = copy.deepcopy(own)
    agent_for(tmp_path, server, FakeDriver()).step()
    (port_id, body), = server.called("update_dhcp_port")
    assert port_id == own["id"]
    assert body["port"]["fixed_ips"] == before["fixed_ips"] + [
        {"subnet_id": net["subnets"][1]["id"]}]


def test_full_sync_removes_networks_this_host_no_longer_serves(
        tmp_path: Path, server: FakeServer) -> None:
    kept = server.add_network()
    driver = FakeDriver(existing=("gone-net",))
    agent_for(tmp_path, server, driver).step()
    assert driver.disabled == [("gone-net", None)]
    assert list(driver.served) == [kept["id"]]


def test_notifications_mark_dirty_and_the_loop_resyncs_only_those_networks(
        tmp_path: Path, server: FakeServer) -> None:
    a, b = server.add_network(), server.add_network()
    driver = FakeDriver()
    agent = agent_for(tmp_path, server, driver)
    agent.step()
    server.calls.clear()
    new = server.add_port(a["id"], "compute:nova", "20")
    endpoint = Notifications(agent)
    endpoint.port_create_end({}, {"port": new, "priority": 5})
    agent.step()
    assert server.called("get_network_info") == [a["id"]]
    assert server.called("get_active_networks_info") == []
    assert new["id"] in [p["id"] for p in driver.served[a["id"]][0]["ports"]]
    assert server.called("dhcp_ready_on_ports") == [[new["id"]]]  # only the new one
    assert server.called("create_dhcp_ports") == []
    endpoint.network_delete_end({}, {"network_id": b["id"], "priority": 2})
    agent.step()
    assert b["id"] not in driver.served and driver.disabled[-1][0] == b["id"]
    assert server.called("get_network_info") == [a["id"]]  # deletion needs no question
    endpoint.network_delete_end({}, {"network_id": "not-mine"})
    agent.step()
    assert driver.disabled[-1][0] == b["id"]  # not served here: nothing to do


def test_notification_payloads_name_their_network() -> None:
    seen: list[str | None] = []

    class Rec:
        def mark_dirty(self, network_id: str | None, deleted: bool = False,
                       port: dict[str, Any] | None = None) -> None:
            seen.append(network_id)

    ep = Notifications(Rec())  # type: ignore[arg-type]
    ep.network_create_end({}, {"network": {"id": "n1"}})
    ep.network_update_end({}, {"network": {"id": "n2"}})
    ep.subnet_create_end({}, {"subnet": {"id": "s", "network_id": "n3"}})
    ep.subnet_delete_end({}, {"subnet_id": "s", "network_id": "n4"})
    ep.port_update_end({}, {"port": {"id": "p", "network_id": "n5"}})
    ep.port_delete_end({}, {"port_id": "p", "network_id": "n6", "fixed_ips": []})
    assert seen == ["n1", "n2", "n3", "n4", "n5", "n6"]
    with pytest.raises(AttributeError):
        ep.something_else_end


def test_a_network_whose_subnets_all_stop_dhcp_is_disabled_and_its_port_released(
        tmp_path: Path, server: FakeServer) -> None:
    net = server.add_network()
    driver = FakeDriver()
    agent = agent_for(tmp_path, server, driver)
    agent.step()
    port = driver.served[net["id"]][1]
    server.networks[net["id"]]["subnets"][0]["enable_dhcp"] = False
    subnet = server.networks[net["id"]]["subnets"][0]
    Notifications(agent).subnet_update_end({}, {"subnet": subnet})
    agent.step()
    assert driver.disabled == [(net["id"], ("tap" + port["id"])[:14])]
    assert server.called("release_dhcp_port") == [(net["id"], dhcp_device_id(net["id"], HOST))]
    assert agent.configurations()["networks"] == 0


def test_a_failing_network_is_retried_and_does_not_stop_the_others(
        tmp_path: Path, server: FakeServer) -> None:
    first, second = sorted([server.add_network(), server.add_network()], key=lambda n: n["id"])
    server.fail_create = 1  # the first network's port creation times out once
    driver = FakeDriver()
    agent = agent_for(tmp_path, server, driver)
    agent.step()
    assert list(driver.served) == [second["id"]]
    assert agent.retry_failed() is True
    agent.step()
    assert sorted(driver.served) == sorted([first["id"], second["id"]])
    assert agent.retry_failed() is False


def test_a_server_that_does_not_answer_the_full_sync_gets_asked_again(
        tmp_path: Path, server: FakeServer) -> None:
    server.add_network()
    calls = {"n": 0}
    real = server.get_active_networks_info

    def flaky(enable_dhcp_filter: bool = True) -> list[dict[str, Any]]:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("MessagingTimeout")
        return real()
    server.get_active_networks_info = flaky  # type: ignore[method-assign]
    driver = FakeDriver()
    agent = agent_for(tmp_path, server, driver)
    agent.step()
    assert driver.served == {}
    assert agent.retry_failed() is True
    agent.step()
    assert len(driver.served) == 1


def test_the_first_answered_state_report_brings_a_full_sync(
        tmp_path: Path, server: FakeServer) -> None:
    """The server schedules networks left without an agent to the agents that
    sync once they exist: a sync that ran before the first report was
    answered is done again after it, as upstream's agent syncs then."""
    driver = FakeDriver()
    agent = agent_for(tmp_path, server, driver)
    agent.step()  # before the server knows the agent: nothing for it yet
    net = server.add_network()  # what the server schedules once it does
    agent.first_reported()
    agent.step()
    assert server.called("get_active_networks_info") == [None, None]
    assert net["id"] in driver.served


def test_a_sync_of_many_networks_costs_the_server_a_few_calls_not_a_few_per_network(
        tmp_path: Path, server: FakeServer) -> None:
    """Issue 37: one question, one call for every missing DHCP port (a chunk
    of ``CREATE_CHUNK``), one report of the ports made ready; a restarted
    agent with everything in place asks once and reports once."""
    nets = [server.add_network(ports=3) for _ in range(CREATE_CHUNK + 10)]
    agent = agent_for(tmp_path, server, FakeDriver())
    agent.step()
    assert sorted(name for name, _ in server.calls) == sorted(
        ["get_active_networks_info", "create_dhcp_ports", "create_dhcp_ports",
         "dhcp_ready_on_ports"])
    assert [len(c) for c in server.called("create_dhcp_ports")] == [CREATE_CHUNK, 10]
    assert len(server.called("dhcp_ready_on_ports")[0]) == len(nets) * 4

    server.calls.clear()
    restarted = agent_for(tmp_path, server, FakeDriver(existing=tuple(n["id"] for n in nets)))
    restarted.step()
    assert [name for name, _ in server.calls] == [
        "get_active_networks_info", "dhcp_ready_on_ports"]


def test_notifications_of_ports_served_as_they_are_cost_no_question(
        tmp_path: Path, server: FakeServer) -> None:
    """The casts of the agent's own DHCP ports (created by its sync) and of
    changes DHCP does not show (a name) come back; they fetch nothing."""
    a, b = server.add_network(), server.add_network()
    agent = agent_for(tmp_path, server, FakeDriver())
    agent.step()
    server.calls.clear()
    endpoint = Notifications(agent)
    for net in (a, b):
        own = agent.dhcp_ports[net["id"]]
        endpoint.port_create_end({}, {"port": copy.deepcopy(own)})
        endpoint.port_update_end({}, {"port": dict(copy.deepcopy(own), name="renamed")})
    agent.step()
    assert server.calls == []
    moved = dict(copy.deepcopy(a["ports"][0]), mac_address="fa:16:3e:00:00:99")
    endpoint.port_update_end({}, {"port": moved})
    agent.step()
    assert server.called("get_network_info") == [a["id"]]


def test_a_server_without_create_dhcp_ports_gets_one_create_dhcp_port_a_network(
        tmp_path: Path, server: FakeServer) -> None:
    """Upstream's server has no bulk call: the agent falls back to its
    per-network one, once told, and keeps to it."""
    server.bulk = False
    nets = [server.add_network() for _ in range(3)]
    driver = FakeDriver()
    agent = agent_for(tmp_path, server, driver)
    agent.step()
    assert sorted(driver.served) == sorted(n["id"] for n in nets)
    assert len(server.called("create_dhcp_port")) == 3

"""The haproxy provider through the Octavia API, with a load-balancer agent
over RabbitMQ whose host is in memory: load balancers go ACTIVE when the
agent has applied them, its health reports show in the API, and what
haproxy cannot do is refused for the owner, another project and an admin
alike, nothing written."""
from __future__ import annotations

import threading
import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest

from neutrino.agents.loadbalancer.agent import LoadBalancerAgent
from neutrino.agents.loadbalancer.memory_host import MemoryLbHost
from neutrino.agents.loadbalancer.rpc import LoadBalancerPluginApi
from tests.conftest import Client, Server, with_plugin
from tests.lbhaproxy import certs
from tests.lbhaproxy.test_health import HEADER, row
from tests.rpc.bus import agent_conf, bus
from tests.rpc.conftest import vhost  # noqa: F401 - a RabbitMQ vhost for this module
from tests.waiting import wait_for

LB = "/load-balancer/v2/lbaas"
HOST = "lb-host-api"
UNSUPPORTED = "Provider 'haproxy' does not support a requested option: "


class Cloud:
    def __init__(self, server: Server, lb_host: MemoryLbHost, store: Path) -> None:
        self.server, self.lb_host, self.store = server, lb_host, store

    def client(self, project: str, roles: str = "member,reader") -> Client:
        return Client(self.server.url, project=project, roles=roles)


@pytest.fixture(scope="module")
def cloud(tmp_path_factory: pytest.TempPathFactory, vhost: str  # noqa: F811
          ) -> Iterator[Cloud]:
    tmp = tmp_path_factory.mktemp("lb-api")
    store = tmp / "certificates"
    store.mkdir()
    extra = with_plugin("octavia")
    extra = (f"transport_url = {bus(vhost)}\n{extra}"
             "[octavia]\nenabled_provider_drivers = haproxy:haproxy,noop_driver:noop\n"
             "default_provider_driver = haproxy\n"
             f"[certificates]\nstorage_path = {store}\n")
    server = Server(tmp, extra=extra).start()
    conf = agent_conf(tmp, vhost, HOST, "periodic_interval = 1\n[AGENT]\nreport_interval = 1\n"
                      f"[haproxy]\nstats_interval = 0.5\nloadbalancer_state_path = {tmp}/lbaas\n")
    lb_host = MemoryLbHost()
    agent = LoadBalancerAgent(conf, LoadBalancerPluginApi(conf, HOST), lb_host)
    thread = threading.Thread(target=agent.run, daemon=True)
    try:
        agent.register()
        thread.start()
        yield Cloud(server, lb_host, store)
    finally:
        agent.stop()
        thread.join(30)
        server.stop()


@pytest.fixture
def project() -> str:
    return uuid.uuid4().hex


@pytest.fixture
def owner(cloud: Cloud, project: str) -> Client:
    return cloud.client(project)


@pytest.fixture
def other(cloud: Cloud) -> Client:
    return cloud.client(uuid.uuid4().hex)


@pytest.fixture
def admin(cloud: Cloud) -> Client:
    return cloud.client(uuid.uuid4().hex, "admin,member,reader")


def _active(client: Client, path: str, key: str) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        status, body = client.get(path)
        assert status == 200, body
        assert body[key]["provisioning_status"] != "ERROR", body
        return body[key] if body[key]["provisioning_status"] == "ACTIVE" else None
    found = wait_for(done, 30)
    assert found, client.get(path)
    return found  # type: ignore[no-any-return]


def _lb(client: Client) -> dict[str, Any]:
    status, net = client.post("/v2.0/networks", {"network": {"name": "lbnet"}})
    assert status == 201, net
    status, sub = client.post("/v2.0/subnets", {"subnet": {
        "network_id": net["network"]["id"], "cidr": "10.30.0.0/24", "ip_version": 4}})
    assert status == 201, sub
    status, body = client.post(f"{LB}/loadbalancers", {"loadbalancer": {
        "name": "web", "vip_subnet_id": sub["subnet"]["id"]}})
    assert status == 201, body
    return _active(client, f"{LB}/loadbalancers/{body['loadbalancer']['id']}", "loadbalancer")


def _create(client: Client, path: str, key: str, body: dict[str, Any], lb_id: str
            ) -> dict[str, Any]:
    status, made = client.post(f"{LB}/{path}", {key: body})
    assert status == 201, made
    _active(client, f"{LB}/loadbalancers/{lb_id}", "loadbalancer")
    return made[key]  # type: ignore[no-any-return]


def _count(client: Client, path: str, key: str) -> int:
    status, body = client.get(f"{LB}/{path}")
    assert status == 200, body
    return len(body[key])


def test_a_load_balancer_goes_active_on_the_agents_host(cloud: Cloud, owner: Client) -> None:
    lb = _lb(owner)
    assert lb["provider"] == "haproxy"
    assert lb["id"] in cloud.lb_host.deployed
    status, port = Client(cloud.server.url, roles="admin").get(
        f"/v2.0/ports/{lb['vip_port_id']}")
    assert port["port"]["binding:host_id"] == HOST
    deployment = cloud.lb_host.deployed[lb["id"]]
    assert deployment.addresses == (f"{lb['vip_address']}/24",)
    assert deployment.mac_address == port["port"]["mac_address"]


def test_the_agents_health_and_counters_show_in_the_api(cloud: Cloud, owner: Client) -> None:
    lb = _lb(owner)
    listener = _create(owner, "listeners", "listener", {
        "protocol": "HTTP", "protocol_port": 80, "loadbalancer_id": lb["id"]}, lb["id"])
    pool = _create(owner, "pools", "pool", {
        "protocol": "HTTP", "lb_algorithm": "ROUND_ROBIN", "listener_id": listener["id"]},
        lb["id"])
    member = _create(owner, f"pools/{pool['id']}/members", "member", {
        "address": "10.30.0.50", "protocol_port": 80}, lb["id"])
    _create(owner, "healthmonitors", "healthmonitor", {
        "pool_id": pool["id"], "type": "HTTP", "delay": 1, "timeout": 1, "max_retries": 1},
        lb["id"])
    assert f"server {member['id']} 10.30.0.50:80" in cloud.lb_host.deployed[lb["id"]].config
    back = f"{pool['id']}:{listener['id']}"
    cloud.lb_host.stat_text[lb["id"]] = (
        HEADER + row(listener["id"], "FRONTEND", "OPEN", scur=1, stot=9, bin=10, bout=20)
        + row(back, member["id"], "DOWN") + row(back, "BACKEND", "DOWN"))

    def shown(path: str, key: str, want: str) -> bool:
        return bool(owner.get(f"{LB}/{path}")[1][key]["operating_status"] == want)
    assert wait_for(lambda: shown(f"pools/{pool['id']}/members/{member['id']}", "member",
                                  "ERROR"), 20)
    assert shown(f"pools/{pool['id']}", "pool", "ERROR")
    assert shown(f"loadbalancers/{lb['id']}", "loadbalancer", "DEGRADED")
    assert shown(f"listeners/{listener['id']}", "listener", "ONLINE")
    stats = owner.get(f"{LB}/loadbalancers/{lb['id']}/stats")[1]["stats"]
    assert stats == {"bytes_in": 10, "bytes_out": 20, "active_connections": 1,
                     "total_connections": 9, "request_errors": 0}


@pytest.mark.parametrize("who", ["owner", "admin"])
def test_what_haproxy_cannot_do_is_501_and_nothing_is_written(
        request: pytest.FixtureRequest, owner: Client, other: Client, who: str) -> None:
    lb = _lb(owner)
    client: Client = request.getfixturevalue(who)
    status, body = client.post(f"{LB}/pools", {"pool": {
        "protocol": "HTTP", "lb_algorithm": "SOURCE_IP_PORT", "loadbalancer_id": lb["id"]}})
    assert status == 501, body
    assert body["faultstring"] == (
        UNSUPPORTED + "haproxy provider does not support SOURCE_IP_PORT algorithm.")
    assert _count(owner, f"listeners?loadbalancer_id={lb['id']}", "listeners") == 0
    assert _count(owner, f"pools?loadbalancer_id={lb['id']}", "pools") == 0
    _active(owner, f"{LB}/loadbalancers/{lb['id']}", "loadbalancer")  # not left pending
    # another project does not even see the load balancer
    status, body = other.post(f"{LB}/pools", {"pool": {
        "protocol": "HTTP", "lb_algorithm": "SOURCE_IP_PORT", "loadbalancer_id": lb["id"]}})
    assert status in (403, 404), body


def test_a_udp_listener_pool_and_monitor_are_realised_by_the_agent(
        cloud: Cloud, owner: Client) -> None:
    lb = _lb(owner)
    listener = _create(owner, "listeners", "listener", {
        "protocol": "UDP", "protocol_port": 53, "loadbalancer_id": lb["id"]}, lb["id"])
    pool = _create(owner, "pools", "pool", {
        "protocol": "UDP", "lb_algorithm": "SOURCE_IP", "listener_id": listener["id"],
        "session_persistence": {"type": "SOURCE_IP", "persistence_timeout": 60}}, lb["id"])
    member = _create(owner, f"pools/{pool['id']}/members", "member", {
        "address": "10.30.0.53", "protocol_port": 5353}, lb["id"])
    _create(owner, "healthmonitors", "healthmonitor", {
        "pool_id": pool["id"], "type": "UDP-CONNECT", "delay": 1, "timeout": 1,
        "max_retries": 1, "max_retries_down": 1}, lb["id"])
    deployment = cloud.lb_host.deployed[lb["id"]]
    assert "udp dport 53" in deployment.udp and "dnat ip to 10.30.0.53:5353" in deployment.udp
    assert listener["id"] not in deployment.config
    checked = [c for c in cloud.lb_host.probed if c.member_id == member["id"]]
    assert wait_for(lambda: [c for c in cloud.lb_host.probed if c.member_id == member["id"]],
                    10), checked

    def shown(path: str, key: str, want: str) -> bool:
        return bool(owner.get(f"{LB}/{path}")[1][key]["operating_status"] == want)
    assert wait_for(lambda: shown(f"pools/{pool['id']}/members/{member['id']}", "member",
                                  "ONLINE"), 20)
    assert wait_for(lambda: shown(f"listeners/{listener['id']}", "listener", "ONLINE"), 20)
    cloud.lb_host.failing.add(member["id"])
    try:
        assert wait_for(lambda: shown(f"pools/{pool['id']}/members/{member['id']}", "member",
                                      "ERROR"), 20)
        assert shown(f"pools/{pool['id']}", "pool", "ERROR")
        assert "10.30.0.53" not in cloud.lb_host.deployed[lb["id"]].udp
    finally:
        cloud.lb_host.failing.discard(member["id"])


def test_a_tls_listener_needs_a_certificate_the_store_has(cloud: Cloud, owner: Client,
                                                         admin: Client) -> None:
    lb = _lb(owner)
    ref = f"http://kms.example/v1/containers/{uuid.uuid4()}"
    tls = {"protocol": "TERMINATED_HTTPS", "protocol_port": 443, "loadbalancer_id": lb["id"],
           "default_tls_container_ref": ref}
    for client in (owner, admin):
        status, body = client.post(f"{LB}/listeners", {"listener": tls})
        assert status == 400, body
        assert body["faultstring"] == f"Could not retrieve certificate: ['{ref}']"
    assert _count(owner, f"listeners?loadbalancer_id={lb['id']}", "listeners") == 0
    certs.store(cloud.store, ref.rsplit("/", 1)[1], "www.example.com")
    listener = _create(owner, "listeners", "listener", tls, lb["id"])
    deployment = cloud.lb_host.deployed[lb["id"]]
    files = dict(deployment.files)
    pem = files[f"certs/{listener['id']}/default.pem"]
    assert "BEGIN CERTIFICATE" in pem and "PRIVATE KEY" in pem
    assert f"bind {lb['vip_address']}:443 ssl crt" in deployment.config


def test_flavors_of_a_topology_haproxy_cannot_do_are_refused(admin: Client,
                                                             owner: Client) -> None:
    body = {"flavorprofile": {"name": "aa", "provider_name": "haproxy",
                              "flavor_data": '{"loadbalancer_topology": "ACTIVE_ACTIVE"}'}}
    status, answer = admin.post(f"{LB}/flavorprofiles", body)
    assert status == 501, answer
    assert "ACTIVE_ACTIVE" in answer["faultstring"]
    status, answer = owner.post(f"{LB}/flavorprofiles", body)
    assert status == 403, answer
    body["flavorprofile"]["flavor_data"] = '{"loadbalancer_topology": "ACTIVE_STANDBY"}'
    status, answer = admin.post(f"{LB}/flavorprofiles", body)
    assert status == 201, answer


def test_availability_zone_profiles_take_compute_zone_only(admin: Client,
                                                           owner: Client) -> None:
    body = {"availability_zone_profile": {
        "name": "az", "provider_name": "haproxy",
        "availability_zone_data": '{"compute_zone": "az1", "management_network": "n"}'}}
    status, answer = admin.post(f"{LB}/availabilityzoneprofiles", body)
    assert status == 501, answer
    assert answer["faultstring"] == (
        UNSUPPORTED + "Unsupported availability zone metadata: management_network")
    status, answer = owner.post(f"{LB}/availabilityzoneprofiles", body)
    assert status == 403, answer
    body["availability_zone_profile"]["availability_zone_data"] = '{"compute_zone": "az1"}'
    status, answer = admin.post(f"{LB}/availabilityzoneprofiles", body)
    assert status == 201, answer
    status, answer = admin.get(f"{LB}/providers/haproxy/availability_zone_capabilities")
    assert status == 200, answer
    assert [c["name"] for c in answer["availability_zone_capabilities"]] == ["compute_zone"]


def test_deleting_tears_down_on_the_agent_and_frees_the_vip(cloud: Cloud,
                                                            owner: Client) -> None:
    lb = _lb(owner)
    status, body = owner.delete(f"{LB}/loadbalancers/{lb['id']}")
    assert status == 204, body
    assert wait_for(lambda: owner.get(f"{LB}/loadbalancers/{lb['id']}")[0] == 404, 30)
    assert lb["id"] not in cloud.lb_host.deployed
    neutron = Client(cloud.server.url, roles="admin")
    assert wait_for(lambda: neutron.get(f"/v2.0/ports/{lb['vip_port_id']}")[0] == 404, 10)


def test_a_failover_rebuilds_on_the_agent(cloud: Cloud, owner: Client, admin: Client) -> None:
    lb = _lb(owner)
    status, body = owner.put(f"{LB}/loadbalancers/{lb['id']}/failover")
    assert status == 403, body
    status, body = admin.put(f"{LB}/loadbalancers/{lb['id']}/failover")
    assert status == 202, body
    _active(owner, f"{LB}/loadbalancers/{lb['id']}", "loadbalancer")
    log = [op for op, i in cloud.lb_host.log if i == lb["id"]]
    assert log[-2:] == ["teardown", "build"]


def _ingress(neutron: Client, group_id: str) -> set[tuple[Any, ...]]:
    rules = neutron.get(f"/v2.0/security-group-rules?security_group_id={group_id}"
                        "&direction=ingress")[1]["security_group_rules"]
    return {(r["protocol"], r["port_range_min"], r["remote_ip_prefix"]) for r in rules}


def test_the_vip_gets_a_security_group_opening_the_listeners_ports(cloud: Cloud,
                                                                   owner: Client) -> None:
    lb = _lb(owner)
    neutron = Client(cloud.server.url, roles="admin")
    _create(owner, "listeners", "listener", {
        "protocol": "HTTP", "protocol_port": 80, "loadbalancer_id": lb["id"]}, lb["id"])
    _create(owner, "listeners", "listener", {
        "protocol": "TCP", "protocol_port": 5432, "loadbalancer_id": lb["id"],
        "allowed_cidrs": ["192.0.2.0/24"]}, lb["id"])
    _create(owner, "listeners", "listener", {
        "protocol": "UDP", "protocol_port": 53, "loadbalancer_id": lb["id"]}, lb["id"])
    _create(owner, "listeners", "listener", {
        "protocol": "SCTP", "protocol_port": 38412, "loadbalancer_id": lb["id"]}, lb["id"])
    groups = neutron.get(f"/v2.0/security-groups?name=lb-{lb['id']}")[1]["security_groups"]
    assert len(groups) == 1 and groups[0]["project_id"] == lb["project_id"]
    group_id = groups[0]["id"]
    assert _ingress(neutron, group_id) == {("tcp", 80, None), ("tcp", 5432, "192.0.2.0/24"),
                                           ("udp", 53, None), ("sctp", 38412, None)}
    port = neutron.get(f"/v2.0/ports/{lb['vip_port_id']}")[1]["port"]
    assert port["security_groups"] == [group_id]
    status, body = owner.delete(f"{LB}/loadbalancers/{lb['id']}?cascade=true")
    assert status == 204, body
    assert wait_for(lambda: neutron.get(f"/v2.0/security-groups/{group_id}")[0] == 404, 30)

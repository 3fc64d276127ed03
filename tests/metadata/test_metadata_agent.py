"""The metadata agent against a real server over RabbitMQ, with the compute
metadata API as a recording HTTP server: which port a request belongs to
(by network, by router), exactly what the compute service is sent (the
instance, its project, the HMAC-SHA256 signature), and the answers for
unknown requesters, forged headers and compute service errors."""
from __future__ import annotations

import hashlib
import hmac
import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest

from neutrino.agents.metadata.agent import MetadataAgent
from tests.conftest import Client, Server
from tests.metadata.recording import Backend, ask
from tests.rpc.bus import agent_conf, bus

SECRET = "s3cr3t-Ümlaut"
ML2 = ("[ml2]\ntype_drivers = flat,vxlan\ntenant_network_types = vxlan\n"
       "mechanism_drivers = openvswitch\n[ml2_type_vxlan]\nvni_ranges = 500:600\n")


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, vhost: str) -> Iterator[Server]:
    server = Server(tmp_path_factory.mktemp("mdsrv"),
                    extra=f"transport_url = {bus(vhost)}\nservice_plugins = router\n{ML2}")
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def admin(srv: Server) -> Client:
    return Client(srv.url, roles="admin")


@pytest.fixture(scope="module")
def backend() -> Iterator[Backend]:
    b = Backend().start()
    yield b
    b.stop()


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory, vhost: str, srv: Server,
          backend: Backend) -> Iterator[MetadataAgent]:
    tmp = tmp_path_factory.mktemp("mdagent")
    conf = agent_conf(tmp, vhost, "md-host", (
        f"metadata_proxy_socket = {tmp / 'md.sock'}\nnova_metadata_host = 127.0.0.1\n"
        f"nova_metadata_port = {backend.port}\nmetadata_proxy_shared_secret = {SECRET}\n"
        "metadata_workers = 2\n[AGENT]\nreport_interval = 0\n"))
    md = MetadataAgent(conf)
    md.register()
    md.start()
    yield md
    md.stop()


@pytest.fixture(autouse=True)
def fresh(backend: Backend) -> None:
    backend.seen.clear()
    backend.status, backend.body = 200, b""


def network(admin: Client, cidr: str) -> tuple[dict[str, Any], dict[str, Any]]:
    status, net = admin.post("/v2.0/networks", {"network": {"name": f"md-{cidr}"}})
    assert status == 201, net
    status, sub = admin.post("/v2.0/subnets", {"subnet": {
        "network_id": net["network"]["id"], "ip_version": 4, "cidr": cidr}})
    assert status == 201, sub
    return net["network"], sub["subnet"]


def instance_port(admin: Client, net: dict[str, Any], project: str) -> dict[str, Any]:
    status, body = admin.post("/v2.0/ports", {"port": {
        "network_id": net["id"], "project_id": project, "device_owner": "compute:nova",
        "device_id": str(uuid.uuid4())}})
    assert status == 201, body
    return dict(body["port"])


def ip(port: dict[str, Any]) -> str:
    return str(port["fixed_ips"][0]["ip_address"])


def socket_of(agent: MetadataAgent) -> str:
    return str(agent.conf.metadata_proxy_socket)


def test_a_request_through_a_network_reaches_the_compute_service_signed(
        admin: Client, agent: MetadataAgent, backend: Backend) -> None:
    net, _ = network(admin, "10.61.0.0/24")
    port = instance_port(admin, net, "proj-a")
    status, body = ask(socket_of(agent), "/latest/meta-data/instance-id?x=1",
                       {"X-Forwarded-For": ip(port), "X-Neutron-Network-ID": net["id"]})
    assert (status, body) == (200, b"instance-id?x=1")
    [seen] = backend.seen
    assert (seen.method, seen.path) == ("GET", "/latest/meta-data/instance-id?x=1")
    expected = hmac.new(SECRET.encode(), port["device_id"].encode(), hashlib.sha256).hexdigest()
    assert {k: v for k, v in seen.headers.items() if k.startswith("X-")} == {
        "X-Forwarded-For": ip(port), "X-Instance-ID": port["device_id"],
        "X-Tenant-ID": "proj-a", "X-Instance-ID-Signature": expected}


def test_a_request_through_a_router_finds_the_instance_on_its_networks(
        admin: Client, agent: MetadataAgent, backend: Backend) -> None:
    net, sub = network(admin, "10.62.0.0/24")
    status, router = admin.post("/v2.0/routers", {"router": {"name": "md-r"}})
    assert status == 201, router
    rid = router["router"]["id"]
    status, body = admin.put(f"/v2.0/routers/{rid}/add_router_interface",
                             {"subnet_id": sub["id"]})
    assert status == 200, body
    port = instance_port(admin, net, "proj-b")
    status, body = ask(socket_of(agent), "/openstack/latest/meta_data.json",
                       {"X-Forwarded-For": ip(port), "X-Neutron-Router-ID": rid})
    assert status == 200, body
    [seen] = backend.seen
    assert seen.headers["X-Instance-ID"] == port["device_id"]
    assert seen.headers["X-Tenant-ID"] == "proj-b"
    # the same address on a network the router is not on is not this router's
    other, other_sub = network(admin, "10.62.0.0/24")
    status, stranger = admin.post("/v2.0/ports", {"port": {
        "network_id": other["id"], "device_owner": "compute:nova", "device_id": "x",
        "fixed_ips": [{"subnet_id": other_sub["id"], "ip_address": "10.62.0.250"}]}})
    assert status == 201, stranger
    backend.seen.clear()
    status, _ = ask(socket_of(agent), "/latest/meta-data/instance-id",
                    {"X-Forwarded-For": "10.62.0.250", "X-Neutron-Router-ID": rid})
    assert status == 404 and backend.seen == []


def test_an_unknown_requester_gets_404_and_the_compute_service_is_not_asked(
        admin: Client, agent: MetadataAgent, backend: Backend) -> None:
    net, _ = network(admin, "10.63.0.0/24")
    status, body = ask(socket_of(agent), "/latest/meta-data/instance-id",
                       {"X-Forwarded-For": "10.63.0.200", "X-Neutron-Network-ID": net["id"]})
    assert status == 404 and net["id"].encode() in body
    status, _ = ask(socket_of(agent), "/latest/meta-data/instance-id",
                    {"X-Forwarded-For": "10.63.0.200",
                     "X-Neutron-Router-ID": str(uuid.uuid4())})
    assert status == 404
    assert backend.seen == []


def test_a_request_naming_both_a_router_and_a_network_is_refused(
        admin: Client, agent: MetadataAgent, backend: Backend) -> None:
    net, _ = network(admin, "10.64.0.0/24")
    port = instance_port(admin, net, "proj-d")
    status, _ = ask(socket_of(agent), "/", {
        "X-Forwarded-For": ip(port), "X-Neutron-Network-ID": net["id"],
        "X-Neutron-Router-ID": str(uuid.uuid4())})
    assert status == 400 and backend.seen == []


@pytest.mark.parametrize("code", [403, 404, 409, 500, 503])
def test_compute_service_errors_are_passed_on_as_upstream_does(
        admin: Client, agent: MetadataAgent, backend: Backend, code: int) -> None:
    net, _ = network(admin, f"10.65.{code % 256}.0/24")
    port = instance_port(admin, net, "proj-e")
    backend.status, backend.body = code, b"nova says no"
    status, body = ask(socket_of(agent), "/latest/user-data",
                       {"X-Forwarded-For": ip(port), "X-Neutron-Network-ID": net["id"]})
    assert (status, body) == (code, b"nova says no")


def test_an_unexpected_compute_answer_is_500_and_an_unreachable_one_503(
        admin: Client, agent: MetadataAgent, backend: Backend, tmp_path: Path) -> None:
    net, _ = network(admin, "10.66.0.0/24")
    port = instance_port(admin, net, "proj-f")
    headers = {"X-Forwarded-For": ip(port), "X-Neutron-Network-ID": net["id"]}
    backend.status = 418
    assert ask(socket_of(agent), "/latest", headers)[0] == 500
    nova = agent._server.service.nova  # type: ignore[union-attr]
    port_before, nova.port = nova.port, 1  # nothing listens on port 1
    try:
        assert ask(socket_of(agent), "/latest", headers)[0] == 503
    finally:
        nova.port = port_before


def test_a_post_carries_its_body_to_the_compute_service(
        admin: Client, agent: MetadataAgent, backend: Backend) -> None:
    net, _ = network(admin, "10.67.0.0/24")
    port = instance_port(admin, net, "proj-g")
    status, _ = ask(socket_of(agent), "/openstack/2013-04-04/password",
                    {"X-Forwarded-For": ip(port), "X-Neutron-Network-ID": net["id"]},
                    method="POST", body=b"secret-password")
    assert status == 200
    assert backend.seen[0].method == "POST" and backend.seen[0].body == b"secret-password"


def test_the_agent_shows_in_the_agents_api(admin: Client, agent: MetadataAgent) -> None:
    status, body = admin.get("/v2.0/agents?agent_type=Metadata%20agent")
    assert status == 200
    [row] = [a for a in body["agents"] if a["host"] == "md-host"]
    assert row["binary"] == "neutron-metadata-agent" and row["alive"]
    assert row["configurations"]["metadata_proxy_socket"] == socket_of(agent)

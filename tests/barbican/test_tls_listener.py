"""TERMINATED_HTTPS listeners whose certificates are in Barbican, through
the Octavia API of a neutrino behind Keystone (``[certificates] cert_manager
= barbican_cert_manager``), with a load-balancer agent over RabbitMQ whose
host is in memory: the caller's container reaches the agent as a PEM bundle;
a reference the caller cannot share is Octavia's 400, nothing written."""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Iterator

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from neutrino.agents.loadbalancer.agent import LoadBalancerAgent
from neutrino.agents.loadbalancer.memory_host import MemoryLbHost
from neutrino.agents.loadbalancer.rpc import LoadBalancerPluginApi
from tests.barbican.conftest import Barbican, Users, authtoken
from tests.barbican.kms import Kms, p12
from tests.conftest import Client, Server, with_plugin
from tests.keystone.conftest import Identity, Keystone
from tests.lbhaproxy import certs
from tests.rpc.bus import agent_conf, bus
from tests.rpc.conftest import vhost  # noqa: F401 - a RabbitMQ vhost for this module
from tests.waiting import wait_for

pytestmark = [pytest.mark.keystone, pytest.mark.barbican]

LB = "/load-balancer/v2/lbaas"
HOST = "lb-host-barbican"


class Cloud:
    def __init__(self, server: Server, lb_host: MemoryLbHost, barbican: Barbican,
                 users: Users) -> None:
        self.server, self.lb_host, self.barbican, self.users = server, lb_host, barbican, users

    def client(self, who: Identity) -> Client:
        client = Client(self.server.url)
        client.session.headers["X-Auth-Token"] = who.token
        return client

    def kms(self, who: Identity) -> Kms:
        return Kms(self.barbican.url, who.token)


@pytest.fixture(scope="module")
def cloud(tmp_path_factory: pytest.TempPathFactory, keystone: Keystone, barbican: Barbican,
          users: Users, vhost: str) -> Iterator[Cloud]:  # noqa: F811
    tmp = tmp_path_factory.mktemp("lb-barbican")
    extra = with_plugin("octavia")
    extra = (f"transport_url = {bus(vhost)}\n{extra}"
             "[octavia]\nenabled_provider_drivers = haproxy:haproxy\n"
             "default_provider_driver = haproxy\n"
             "[certificates]\ncert_manager = barbican_cert_manager\n"
             + authtoken(keystone, users))
    server = Server(tmp, extra=extra, auth_strategy="keystone").start()
    conf = agent_conf(tmp, vhost, HOST, "periodic_interval = 1\n[AGENT]\nreport_interval = 1\n"
                      f"[haproxy]\nstats_interval = 0.5\nloadbalancer_state_path = {tmp}/lbaas\n")
    lb_host = MemoryLbHost()
    agent = LoadBalancerAgent(conf, LoadBalancerPluginApi(conf, HOST), lb_host)
    thread = threading.Thread(target=agent.run, daemon=True)
    try:
        agent.register()
        thread.start()
        yield Cloud(server, lb_host, barbican, users)
    finally:
        agent.stop()
        thread.join(30)
        server.stop()


def _active(client: Client, path: str, key: str) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        status, body = client.get(path)
        assert status == 200, body
        assert body[key]["provisioning_status"] != "ERROR", body
        return body[key] if body[key]["provisioning_status"] == "ACTIVE" else None
    found = wait_for(done, 60)
    assert found, client.get(path)
    return found  # type: ignore[no-any-return]


def _subnet(client: Client, cidr: str) -> str:
    status, net = client.post("/v2.0/networks", {"network": {"name": "tlsnet"}})
    assert status == 201, net
    status, sub = client.post("/v2.0/subnets", {"subnet": {
        "network_id": net["network"]["id"], "cidr": cidr, "ip_version": 4}})
    assert status == 201, sub
    return str(sub["subnet"]["id"])


def _lb(client: Client, cidr: str) -> dict[str, Any]:
    status, body = client.post(f"{LB}/loadbalancers", {"loadbalancer": {
        "name": "web", "vip_subnet_id": _subnet(client, cidr)}})
    assert status == 201, body
    return _active(client, f"{LB}/loadbalancers/{body['loadbalancer']['id']}", "loadbalancer")


def _pem_cert(pem: str) -> bytes:
    return x509.load_pem_x509_certificate(pem.encode()).public_bytes(serialization.Encoding.PEM)


def test_a_barbican_container_reaches_the_agent_as_the_listeners_bundle(cloud: Cloud) -> None:
    a = cloud.users.a
    owner, kms = cloud.client(a), cloud.kms(a)
    cert, key = certs.make("www.example.com")
    sni_cert, sni_key = certs.make("sni.example.com")
    ref = kms.container(certificate=kms.secret(cert), private_key=kms.secret(key))
    sni_ref = kms.secret(p12(sni_cert, sni_key))
    lb = _lb(owner, "10.31.0.0/24")
    status, made = owner.post(f"{LB}/listeners", {"listener": {
        "protocol": "TERMINATED_HTTPS", "protocol_port": 443, "loadbalancer_id": lb["id"],
        "default_tls_container_ref": ref, "sni_container_refs": [sni_ref]}})
    assert status == 201, made
    listener = made["listener"]
    _active(owner, f"{LB}/loadbalancers/{lb['id']}", "loadbalancer")
    deployment = cloud.lb_host.deployed[lb["id"]]
    files = dict(deployment.files)
    assert _pem_cert(files[f"certs/{listener['id']}/default.pem"]) == cert
    assert _pem_cert(files[f"certs/{listener['id']}/sni/0.pem"]) == sni_cert
    assert f"bind {lb['vip_address']}:443 ssl crt" in deployment.config
    assert kms.acl_users(ref) and kms.acl_users(sni_ref)  # the service user was let in


def test_a_reference_the_caller_cannot_share_is_400_and_nothing_is_written(
        cloud: Cloud) -> None:
    owner = cloud.client(cloud.users.a)
    cert, key = certs.make("b.example.com")
    theirs = cloud.kms(cloud.users.b).secret(p12(cert, key))
    lb = _lb(owner, "10.32.0.0/24")
    status, body = owner.post(f"{LB}/listeners", {"listener": {
        "protocol": "TERMINATED_HTTPS", "protocol_port": 443, "loadbalancer_id": lb["id"],
        "default_tls_container_ref": theirs}})
    assert status == 400, body
    assert body["faultstring"] == f"Could not retrieve certificate: ['{theirs}']"
    status, listed = owner.get(f"{LB}/listeners?loadbalancer_id={lb['id']}")
    assert status == 200 and listed["listeners"] == [], listed
    status, shown = owner.get(f"{LB}/loadbalancers/{lb['id']}")
    assert shown["loadbalancer"]["provisioning_status"] == "ACTIVE", shown
    assert cloud.kms(cloud.users.b).acl_users(theirs) == []


def test_a_single_call_create_with_an_unreadable_reference_makes_nothing(
        cloud: Cloud) -> None:
    owner = cloud.client(cloud.users.a)
    subnet = _subnet(owner, "10.33.0.0/24")
    missing = f"{cloud.barbican.url}/v1/containers/00000000-0000-4000-8000-000000000000"
    status, body = owner.post(f"{LB}/loadbalancers", {"loadbalancer": {
        "name": "tree", "vip_subnet_id": subnet, "listeners": [{
            "protocol": "TERMINATED_HTTPS", "protocol_port": 443,
            "default_tls_container_ref": missing}]}})
    assert status == 400, body
    assert body["faultstring"] == f"Could not retrieve certificate: ['{missing}']"
    status, lbs = owner.get(f"{LB}/loadbalancers?name=tree")
    assert status == 200 and lbs["loadbalancers"] == [], lbs
    status, ports = owner.get(f"/v2.0/ports?fixed_ips=subnet_id={subnet}")
    assert status == 200, ports
    assert [p for p in ports["ports"] if p["device_owner"] != "network:dhcp"] == []


def test_the_servers_config_takes_the_store_it_names(tmp_path: Path) -> None:
    from oslo_config import cfg

    from neutrino.conf import lb_haproxy as lb_conf
    from neutrino.plugins.lb_haproxy.barbican import BarbicanStore
    from neutrino.plugins.lb_haproxy.cert_files import FileStore
    from neutrino.plugins.lb_haproxy.provider import cert_store
    conf = cfg.ConfigOpts()
    lb_conf.register(conf)
    conf([], project="neutrino", default_config_files=[])
    assert isinstance(cert_store(conf), FileStore)  # the default: no Barbican needed
    conf.set_override("cert_manager", "barbican_cert_manager", "certificates")
    assert isinstance(cert_store(conf), BarbicanStore)


def test_a_tls_pool_with_a_ca_the_caller_cannot_share_is_400(cloud: Cloud) -> None:
    owner = cloud.client(cloud.users.a)
    ca, _ = certs.make("members-ca.example.com")
    theirs = cloud.kms(cloud.users.b).secret(ca)
    lb = _lb(owner, "10.34.0.0/24")
    status, body = owner.post(f"{LB}/pools", {"pool": {
        "protocol": "HTTP", "lb_algorithm": "ROUND_ROBIN", "loadbalancer_id": lb["id"],
        "tls_enabled": True, "ca_tls_container_ref": theirs}})
    assert status == 400, body
    assert body["faultstring"] == f"Could not retrieve certificate: ['{theirs}']"
    status, listed = owner.get(f"{LB}/pools?loadbalancer_id={lb['id']}")
    assert status == 200 and listed["pools"] == [], listed
    mine = cloud.kms(cloud.users.a).secret(ca)
    status, listener = owner.post(f"{LB}/listeners", {"listener": {
        "protocol": "HTTP", "protocol_port": 80, "loadbalancer_id": lb["id"]}})
    assert status == 201, listener
    _active(owner, f"{LB}/loadbalancers/{lb['id']}", "loadbalancer")
    status, made = owner.post(f"{LB}/pools", {"pool": {
        "protocol": "HTTP", "lb_algorithm": "ROUND_ROBIN",
        "listener_id": listener["listener"]["id"],
        "tls_enabled": True, "ca_tls_container_ref": mine}})
    assert status == 201, made
    _active(owner, f"{LB}/loadbalancers/{lb['id']}", "loadbalancer")
    files = dict(cloud.lb_host.deployed[lb["id"]].files)
    assert files[f"certs/pools/{made['pool']['id']}/ca.pem"] == ca.decode()

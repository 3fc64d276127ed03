"""openstacksdk's load_balancer proxy and python-octaviaclient
(``openstack loadbalancer ...``) drive the Octavia API end to end, with no
Keystone (a caller without identity headers is admin)."""
from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.clients.conftest import CLI
from tests.conftest import Server

pytest.importorskip("octaviaclient")


@pytest.fixture(scope="module")
def conn(lb_server: Server) -> Iterator[Any]:
    import openstack
    c = openstack.connection.Connection(
        auth_type="none", endpoint=lb_server.url, network_endpoint_override=lb_server.url,
        load_balancer_endpoint_override=lb_server.url + "/load-balancer")
    yield c
    c.close()


@pytest.fixture(scope="module")
def lb_cli(lb_server: Server, tmp_path_factory: pytest.TempPathFactory) -> Iterator[CLI]:
    home = Path(tmp_path_factory.mktemp("lb-cli"))
    c = CLI(lb_server.url + "/load-balancer", home)
    # the load-balancer API under its prefix; names of subnets and networks
    # resolved through the network API at the server's root
    (home / "clouds.yaml").write_text(
        "clouds:\n  lb:\n    auth_type: none\n    auth:\n"
        f"      endpoint: {lb_server.url}/load-balancer\n"
        f"    network_endpoint_override: {lb_server.url}\n")
    c.base = ["--os-cloud", "lb"]
    yield c
    c.close()


def _subnet(conn: Any, cidr: str) -> Any:
    net = conn.network.create_network(name=f"sdk-{uuid.uuid4().hex[:6]}")
    return conn.network.create_subnet(network_id=net.id, cidr=cidr, ip_version=4)


def test_the_sdk_builds_and_tears_down_a_load_balancer(conn):
    sub = _subnet(conn, "10.50.0.0/24")
    lb = conn.load_balancer.create_load_balancer(name="sdk-lb", vip_subnet_id=sub.id)
    lb = conn.load_balancer.wait_for_load_balancer(lb.id, interval=0.2, wait=30)
    assert lb.provisioning_status == "ACTIVE" and lb.vip_address.startswith("10.50.0.")
    listener = conn.load_balancer.create_listener(
        loadbalancer_id=lb.id, protocol="HTTP", protocol_port=80)
    conn.load_balancer.wait_for_load_balancer(lb.id, interval=0.2, wait=30)
    pool = conn.load_balancer.create_pool(listener_id=listener.id, protocol="HTTP",
                                          lb_algorithm="ROUND_ROBIN")
    conn.load_balancer.wait_for_load_balancer(lb.id, interval=0.2, wait=30)
    member = conn.load_balancer.create_member(pool, address="10.50.0.20", protocol_port=8080)
    conn.load_balancer.wait_for_load_balancer(lb.id, interval=0.2, wait=30)
    hm = conn.load_balancer.create_health_monitor(pool_id=pool.id, type="HTTP", delay=5,
                                                  timeout=3, max_retries=2)
    conn.load_balancer.wait_for_load_balancer(lb.id, interval=0.2, wait=30)
    assert [m.id for m in conn.load_balancer.members(pool)] == [member.id]
    assert conn.load_balancer.get_health_monitor(hm.id).url_path == "/"
    stats = conn.load_balancer.get_load_balancer_statistics(lb.id)
    assert stats.total_connections == 0
    conn.load_balancer.delete_load_balancer(lb.id, cascade=True)
    conn.load_balancer.wait_for_delete(lb, interval=0.2, wait=30)
    assert conn.load_balancer.find_load_balancer("sdk-lb") is None


def test_the_cli_drives_load_balancers_and_their_children(conn, lb_cli):
    sub = _subnet(conn, "10.51.0.0/24")
    lb = lb_cli.json("loadbalancer", "create", "--name", "cli-lb", "--vip-subnet-id", sub.id,
                     "--wait")
    assert lb["provisioning_status"] == "ACTIVE"
    listener = lb_cli.json("loadbalancer", "listener", "create", "--protocol", "HTTP",
                           "--protocol-port", "80", "--name", "cli-l", "--wait", lb["id"])
    pool = lb_cli.json("loadbalancer", "pool", "create", "--protocol", "HTTP",
                       "--lb-algorithm", "ROUND_ROBIN", "--listener", listener["id"], "--wait")
    lb_cli.json("loadbalancer", "member", "create", "--address", "10.51.0.9",
                "--protocol-port", "80", "--wait", pool["id"])
    policy = lb_cli.json("loadbalancer", "l7policy", "create", "--action", "REDIRECT_TO_POOL",
                         "--redirect-pool", pool["id"], "--wait", listener["id"])
    lb_cli.json("loadbalancer", "l7rule", "create", "--type", "PATH", "--compare-type",
                "STARTS_WITH", "--value", "/static", "--wait", policy["id"])
    status = json.loads(lb_cli.run("loadbalancer", "status", "show", lb["id"]).stdout)
    assert status["loadbalancer"]["listeners"][0]["pools"][0]["id"] == pool["id"]
    names = lb_cli.value("loadbalancer", "list", "-c", "name")
    assert "cli-lb" in names
    # quota set/show resolve the project through Keystone, which this server lacks
    defaults = lb_cli.json("loadbalancer", "quota", "defaults", "show")
    assert defaults["load_balancer"] == -1
    providers = lb_cli.value("loadbalancer", "provider", "list", "-c", "name")
    assert providers == ["noop_driver"]
    lb_cli.run("loadbalancer", "delete", "--cascade", "--wait", lb["id"])
    assert "cli-lb" not in lb_cli.value("loadbalancer", "list", "-c", "name")

"""FWaaS over RabbitMQ: what agents' firewall extensions get from the server
(``q-firewall-plugin``), what their status reports do, and the server's
casts on ``firewall_agent`` when a group changes."""
from __future__ import annotations

import threading
import time
import uuid
from pathlib import Path
from typing import Any, Iterator

import oslo_messaging
import pytest

from neutrino.rpc.transport import rpc_transport
from neutrino.service import make_conf
from tests.conftest import Client, Server
from tests.l3 import _l3
from tests.l3agent.conftest import bus, start_server

GROUPS = "/v2.0/fwaas/firewall_groups"


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, vhost: str) -> Iterator[Server]:
    server = start_server(tmp_path_factory.mktemp("fwrpc"), vhost, plugins="router,firewall_v2")
    yield server
    server.stop()


class Casts:
    """A firewall extension's listener: the casts it receives."""

    target = oslo_messaging.Target(version="1.0")

    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, Any]]] = []
        self.cond = threading.Condition()

    def _keep(self, method: str, group: dict[str, Any]) -> None:
        with self.cond:
            self.seen.append((method, group))
            self.cond.notify_all()

    def create_firewall_group(self, context: Any, firewall_group: Any = None,
                              **kw: Any) -> None:
        self._keep("create_firewall_group", firewall_group)

    def update_firewall_group(self, context: Any, firewall_group: Any = None,
                              **kw: Any) -> None:
        self._keep("update_firewall_group", firewall_group)

    def next(self, timeout: float = 20) -> tuple[str, dict[str, Any]]:
        deadline = time.monotonic() + timeout
        with self.cond:
            while not self.seen:
                left = deadline - time.monotonic()
                assert left > 0, "no cast"
                self.cond.wait(left)
            return self.seen.pop(0)


@pytest.fixture
def extension(tmp_path: Path, vhost: str) -> Iterator[tuple[Any, Casts]]:
    path = tmp_path / "fw.conf"
    path.write_text(f"[DEFAULT]\nhost = fw-{uuid.uuid4().hex[:6]}\n"
                    f"transport_url = {bus(vhost)}\n")
    conf = make_conf(["--config-file", str(path)])
    transport = rpc_transport(conf)
    casts = Casts()
    server = oslo_messaging.get_rpc_server(
        transport, oslo_messaging.Target(topic="firewall_agent", server=conf.host), [casts])
    server.start()
    time.sleep(0.3)  # let its consumer bind the queue
    client = oslo_messaging.get_rpc_client(
        transport, oslo_messaging.Target(topic="q-firewall-plugin", version="1.0"))
    try:
        yield client.prepare(timeout=30), casts
    finally:
        server.stop()
        server.wait()
        transport.cleanup()


def test_agents_get_a_routers_groups_with_ordered_rules_and_report_their_status(
        srv: Server, extension: tuple[Any, Casts]) -> None:
    rpc, casts = extension
    member = Client(srv.url, uuid.uuid4().hex, roles="member,reader")
    router = _l3.router(member)
    port = _l3.add_interface(member, router["id"],
                             subnet_id=_l3.private_subnet(member)["id"])["port_id"]
    rules = [member.post("/v2.0/fwaas/firewall_rules", {"firewall_rule": attrs})[1]
             ["firewall_rule"] for attrs in ({"protocol": "tcp", "destination_port": "22",
                                              "action": "allow"},
                                             {"action": "reject", "enabled": False})]
    policy = member.post("/v2.0/fwaas/firewall_policies", {"firewall_policy": {
        "firewall_rules": [r["id"] for r in rules]}})[1]["firewall_policy"]
    status, body = member.post(GROUPS, {"firewall_group": {
        "ports": [port], "ingress_firewall_policy_id": policy["id"]}})
    assert status == 201, body
    group = body["firewall_group"]
    method, cast = casts.next()
    assert (method, cast["id"], cast["add-port-ids"], cast["del-port-ids"]) == (
        "create_firewall_group", group["id"], [port], [])

    [found] = rpc.call({}, "get_firewall_groups_for_ports", port_ids=[port, "other"])
    assert (found["id"], found["ports"], found["status"]) == (group["id"], [port],
                                                             "PENDING_CREATE")
    assert [(r["id"], r["enabled"]) for r in found["ingress_rule_list"]] == [
        (rules[0]["id"], True), (rules[1]["id"], False)]
    assert found["egress_rule_list"] == []
    assert rpc.call({}, "get_firewall_groups_for_ports", port_ids=["other"]) == []

    assert rpc.call({}, "set_firewall_group_status", fwg_id=group["id"], status="ACTIVE")
    assert member.get(f"{GROUPS}/{group['id']}")[1]["firewall_group"]["status"] == "ACTIVE"
    # anything but ACTIVE, DOWN and INACTIVE is an error, as upstream
    assert not rpc.call({}, "set_firewall_group_status", fwg_id=group["id"], status="BROKEN")
    assert member.get(f"{GROUPS}/{group['id']}")[1]["firewall_group"]["status"] == "ERROR"

    # leaving its port, the group is INACTIVE at once; the agent hears of the port
    status, body = member.put(f"{GROUPS}/{group['id']}", {"firewall_group": {"ports": []}})
    assert status == 200 and body["firewall_group"]["status"] == "INACTIVE", body
    method, cast = casts.next()
    assert (method, cast["add-port-ids"], cast["del-port-ids"]) == (
        "update_firewall_group", [], [port])

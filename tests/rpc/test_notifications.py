"""Notifications of API changes, consumed from the machine's RabbitMQ."""
from __future__ import annotations

import json
import time
import uuid
from typing import Any, Iterator

import amqp
import pytest

from tests.conftest import Client, Server

QUEUE = "notifications.info"


@pytest.fixture(scope="module")
def notifying_server(tmp_path_factory: pytest.TempPathFactory, vhost: str) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("notify"),
                 extra=f"transport_url = rabbit://guest:guest@127.0.0.1:5672/{vhost}\n"
                       f"[oslo_messaging_notifications]\ndriver = messagingv2\n"
                       f"topics = notifications\n").start()
    yield srv
    srv.stop()


class Bus:
    def __init__(self, vhost: str) -> None:
        self.conn = amqp.Connection(host="127.0.0.1:5672", userid="guest", password="guest",
                                    virtual_host=vhost)
        self.conn.connect()
        self.channel = self.conn.channel()

    def drain(self, until: int, timeout: float = 30.0) -> list[dict[str, Any]]:
        """Messages in the queue, waiting (bounded) for at least ``until`` of them."""
        out: list[dict[str, Any]] = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                msg = self.channel.basic_get(QUEUE, no_ack=True)
            except amqp.exceptions.NotFound:
                self.channel = self.conn.channel()  # the queue appears with the first event
                msg = None
            if msg is None:
                if len(out) >= until:
                    return out
                time.sleep(0.1)
                continue
            envelope = json.loads(msg.body)
            out.append(json.loads(envelope["oslo.message"]))
        return out

    def close(self) -> None:
        self.conn.close()


@pytest.fixture
def bus(vhost: str, notifying_server: Server) -> Iterator[Bus]:
    b = Bus(vhost)
    b.drain(0, timeout=0.5)
    yield b
    b.close()


def _events(messages: list[dict[str, Any]], event_type: str) -> list[dict[str, Any]]:
    return [m for m in messages if m["event_type"] == event_type]


def test_create_update_delete_emit_start_and_end_events(notifying_server: Server, bus: Bus) -> None:
    client = Client(notifying_server.url, uuid.uuid4().hex, "member")
    net = client.post("/v2.0/networks", {"network": {"name": "bus"}})[1]["network"]
    client.put(f"/v2.0/networks/{net['id']}", {"network": {"name": "bus2"}})
    client.delete(f"/v2.0/networks/{net['id']}")
    messages = bus.drain(6)
    start = _events(messages, "network.create.start")[0]
    assert start["payload"] == {"network": {"name": "bus"}}
    end = _events(messages, "network.create.end")[0]
    assert end["payload"]["network"]["id"] == net["id"]
    assert end["publisher_id"].startswith("network.")
    assert end["priority"] == "INFO"
    assert _events(messages, "network.update.start")[0]["payload"]["id"] == net["id"]
    assert _events(messages, "network.update.end")[0]["payload"]["network"]["name"] == "bus2"
    assert _events(messages, "network.delete.start")[0]["payload"] == {"network_id": net["id"]}
    deleted = _events(messages, "network.delete.end")[0]["payload"]
    assert deleted["network_id"] == net["id"] and deleted["network"]["name"] == "bus2"


def test_bulk_create_emits_one_end_event_per_item(notifying_server: Server, bus: Bus) -> None:
    client = Client(notifying_server.url, uuid.uuid4().hex, "member")
    status, body = client.post("/v2.0/networks", {"networks": [{"name": "b1"}, {"name": "b2"}]})
    assert status == 201
    ids = {n["id"] for n in body["networks"]}
    messages = bus.drain(3)
    ends = _events(messages, "network.create.end")
    assert {m["payload"]["network"]["id"] for m in ends} == ids
    assert len(_events(messages, "network.create.start")) == 1


def test_a_create_the_plugin_refuses_sends_start_but_no_end(
        notifying_server: Server, bus: Bus) -> None:
    """As upstream's hooks: a request refused before the notifier hook (an
    unknown network: 404 in ownership validation) sends nothing; one the
    plugin refuses (an address already taken: 409) sends start only."""
    client = Client(notifying_server.url, uuid.uuid4().hex, "member")
    missing = str(uuid.uuid4())
    assert client.post("/v2.0/ports", {"port": {"network_id": missing}})[0] == 404
    net = client.post("/v2.0/networks", {"network": {"name": "refusing"}})[1]["network"]
    assert client.post("/v2.0/subnets", {"subnet": {
        "network_id": net["id"], "ip_version": 4, "cidr": "10.77.0.0/24"}})[0] == 201
    taken = {"network_id": net["id"], "fixed_ips": [{"ip_address": "10.77.0.50"}]}
    assert client.post("/v2.0/ports", {"port": taken})[0] == 201
    assert client.post("/v2.0/ports", {"port": taken})[0] == 409
    messages = bus.drain(7)
    starts = _events(messages, "port.create.start")
    assert [m["payload"]["port"]["network_id"] for m in starts] == [net["id"], net["id"]]
    assert len(_events(messages, "port.create.end")) == 1


def test_security_groups_and_rules_emit_their_events(notifying_server: Server, bus: Bus) -> None:
    client = Client(notifying_server.url, uuid.uuid4().hex, "member")
    sg = client.post("/v2.0/security-groups", {"security_group": {"name": "bus"}})[1]
    sg = sg["security_group"]
    rule = client.post("/v2.0/security-group-rules", {"security_group_rule": {
        "security_group_id": sg["id"], "direction": "ingress", "protocol": "tcp"}})[1]
    rule = rule["security_group_rule"]
    client.delete(f"/v2.0/security-group-rules/{rule['id']}")
    client.delete(f"/v2.0/security-groups/{sg['id']}")
    messages = bus.drain(8)
    created = _events(messages, "security_group.create.end")[0]["payload"]["security_group"]
    assert created["id"] == sg["id"] and len(created["security_group_rules"]) == 2
    assert _events(messages, "security_group_rule.create.end")[0]["payload"][
        "security_group_rule"]["id"] == rule["id"]
    assert _events(messages, "security_group_rule.delete.end")[0]["payload"][
        "security_group_rule_id"] == rule["id"]
    assert _events(messages, "security_group.delete.end")[0]["payload"][
        "security_group_id"] == sg["id"]

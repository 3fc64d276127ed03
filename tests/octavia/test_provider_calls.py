"""What a provider is handed: the call named after the change, the object
concerned, the cascade flag, the graph PENDING as the API left it."""
from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.conftest import Client, Server, with_plugin
from tests.octavia.conftest import LB, subnet, wait_active

PROVIDER = "tests.octavia.recording_provider.RecordingProvider"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def rec_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path]]:
    tmp = tmp_path_factory.mktemp("octavia-recording")
    log = tmp / "calls.jsonl"
    extra = with_plugin("octavia") + (
        f"[octavia]\nenabled_provider_drivers = {PROVIDER}:recording\n"
        f"default_provider_driver = {PROVIDER}\n")
    env = {"NEUTRINO_TEST_PROVIDER_LOG": str(log),
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    srv = Server(tmp, extra=extra, env=env).start()
    yield srv, log
    srv.stop()


def _calls(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_each_change_reaches_the_provider_with_its_object(rec_server):
    srv, log = rec_server
    owner = Client(srv.url, project=uuid.uuid4().hex, roles="member,reader")
    sub = subnet(owner)
    status, body = owner.post(f"{LB}/loadbalancers", {"loadbalancer": {"vip_subnet_id": sub["id"]}})
    assert status == 201, body
    lb_id = body["loadbalancer"]["id"]
    path = f"{LB}/loadbalancers/{lb_id}"
    wait_active(owner, path, "loadbalancer")
    status, body = owner.post(f"{LB}/listeners", {"listener": {
        "protocol": "HTTP", "protocol_port": 80, "loadbalancer_id": lb_id}})
    listener_id = body["listener"]["id"]
    wait_active(owner, path, "loadbalancer")
    status, body = owner.post(f"{LB}/pools", {"pool": {
        "protocol": "HTTP", "lb_algorithm": "ROUND_ROBIN", "loadbalancer_id": lb_id}})
    pool_id = body["pool"]["id"]
    wait_active(owner, path, "loadbalancer")
    assert owner.req("PUT", f"{LB}/pools/{pool_id}/members", {"members": [
        {"address": "10.20.0.4", "protocol_port": 80}]})[0] == 202
    wait_active(owner, path, "loadbalancer")
    assert owner.req("DELETE", f"{LB}/listeners/{listener_id}")[0] == 204
    wait_active(owner, path, "loadbalancer")
    assert owner.req("DELETE", path + "?cascade=true")[0] == 204
    calls = [(c["call"], c["args"], c["status"]) for c in _calls(log) if c["lb"] == lb_id]
    assert calls == [
        ("loadbalancer_create", [], "PENDING_CREATE"),
        ("listener_create", [listener_id], "PENDING_UPDATE"),
        ("pool_create", [pool_id], "PENDING_UPDATE"),
        ("member_batch_update", [pool_id], "PENDING_UPDATE"),
        ("listener_delete", [listener_id], "PENDING_UPDATE"),
        ("loadbalancer_delete", [True], "PENDING_DELETE"),
    ]
    assert owner.get(path)[0] == 404

"""``security-groups-default-statefulness``: ``stateful`` of groups that name none.

A server of its own: a system-wide setting changes every project's groups.
"""
from __future__ import annotations

import uuid
from typing import Iterator

import pytest

from tests.api._helpers import created, error
from tests.conftest import Client, Server
from tests.secgroups.conftest import group

URL = "/v2.0/security-groups-default-statefulness"
KEY = "security_groups_default_statefulness"


@pytest.fixture(scope="module")
def st_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("sg-stateful")).start()
    yield srv
    srv.stop()


def test_project_then_system_wide_then_true(st_server: Server) -> None:
    project = uuid.uuid4().hex
    admin = Client(st_server.url, uuid.uuid4().hex, "admin,member,reader")
    member = Client(st_server.url, project, "member,reader")
    assert group(member)["stateful"] is True
    wide = created(admin.post(URL, {KEY: {"project_id": None, "stateful": False}}), KEY)
    assert wide["project_id"] is None and wide["stateful"] is False
    mine = created(admin.post(URL, {KEY: {"project_id": project, "stateful": True}}), KEY)
    assert group(member)["stateful"] is True
    other = Client(st_server.url, uuid.uuid4().hex, "member,reader")
    assert group(other)["stateful"] is False
    assert group(other, stateful=True)["stateful"] is True
    status, body = admin.put(f"{URL}/{mine['id']}", {KEY: {"stateful": False}})
    assert status == 200 and body[KEY]["stateful"] is False
    assert group(member)["stateful"] is False
    msg = error(admin.post(URL, {KEY: {"project_id": project}}), 409,
                "SecurityGroupDefaultStatefulnessAlreadyExists")
    assert msg == ("A security group default statefulness setting already exists for "
                   f"project '{project}'.")
    error(admin.post(URL, {KEY: {"project_id": None}}), 409,
          "SecurityGroupDefaultStatefulnessAlreadyExists")
    # Readers see their project's setting only.
    assert [s["id"] for s in member.get(URL)[1][KEY]] == [mine["id"]]
    error(member.get(f"{URL}/{wide['id']}"), 404, "SecurityGroupDefaultStatefulnessNotFound")
    for rid in (mine["id"], wide["id"]):
        assert admin.delete(f"{URL}/{rid}")[0] == 204
    assert group(other)["stateful"] is True


def test_members_may_not_write_settings(st_server: Server) -> None:
    project = uuid.uuid4().hex
    member = Client(st_server.url, project, "member,reader")
    error(member.post(URL, {KEY: {"stateful": False}}), 403, "PolicyNotAuthorized")
    error(member.post(URL, {KEY: {"project_id": None, "stateful": False}}), 400,
          "HTTPBadRequest")
    manager = Client(st_server.url, project, "manager,member,reader")
    made = created(manager.post(URL, {KEY: {"stateful": False}}), KEY)
    assert made["project_id"] == project
    assert group(member)["stateful"] is False
    assert manager.delete(f"{URL}/{made['id']}")[0] == 204

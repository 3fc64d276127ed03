"""A third-party package extends the API through entry points alone."""
from __future__ import annotations

import uuid
from pathlib import Path
from typing import Iterator

import pytest

from tests.conftest import Client, Server

DIST = Path(__file__).with_name("example_dist")


@pytest.fixture(scope="module")
def ext_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("ext"), extra="service_plugins = example\n",
                 env={"PYTHONPATH": str(DIST)}).start()
    yield srv
    srv.stop()


def test_extension_is_listed_only_when_its_plugin_is_loaded(ext_server: Server,
                                                           server: Server) -> None:
    status, body = Client(ext_server.url).get("/v2.0/extensions/example-widgets")
    assert status == 200 and body["extension"]["name"] == "Example widgets"
    assert Client(server.url).get("/v2.0/extensions/example-widgets")[0] == 404


def test_new_resource_works_with_validation_and_policy(ext_server: Server) -> None:
    project = uuid.uuid4().hex
    member = Client(ext_server.url, project, "member")
    other = Client(ext_server.url, uuid.uuid4().hex, "member")
    status, body = member.post("/v2.0/widgets", {"widget": {"name": "w", "size": 3}})
    assert status == 201 and body["widget"]["size"] == 3
    wid = body["widget"]["id"]
    assert member.post("/v2.0/widgets", {"widget": {"size": 99}})[0] == 400
    assert member.get(f"/v2.0/widgets/{wid}")[1]["widget"]["project_id"] == project
    assert other.get(f"/v2.0/widgets/{wid}")[0] == 404
    assert member.delete(f"/v2.0/widgets/{wid}")[0] == 204


def test_action_extension_runs_with_policy(ext_server: Server) -> None:
    member = Client(ext_server.url, uuid.uuid4().hex, "member")
    wid = member.post("/v2.0/widgets", {"widget": {"name": "p"}})[1]["widget"]["id"]
    other = Client(ext_server.url, uuid.uuid4().hex, "member")
    assert other.put(f"/v2.0/widgets/{wid}/polish", {})[0] == 404
    status, body = member.put(f"/v2.0/widgets/{wid}/polish", {})
    assert status == 200 and body["widget"]["polished"] is True


def test_attribute_extension_on_networks_with_attribute_policy(ext_server: Server) -> None:
    admin = Client(ext_server.url)
    member = Client(ext_server.url, uuid.uuid4().hex, "member")
    status, body = admin.post("/v2.0/networks", {"network": {"name": "c", "example:color": "red"}})
    assert status == 201 and body["network"]["example:color"] == "red"
    net = body["network"]["id"]
    assert admin.get(f"/v2.0/networks/{net}")[1]["network"]["example:color"] == "red"
    status, body = member.post("/v2.0/networks", {"network": {"example:color": "blue"}})
    assert status == 403
    assert admin.post("/v2.0/networks", {"network": {"example:color": "mauve"}})[0] == 400
    assert admin.put(f"/v2.0/networks/{net}", {"network": {"example:color": "green"}})[0] == 200
    assert admin.get(f"/v2.0/networks/{net}")[1]["network"]["example:color"] == "green"


def test_request_extension_sees_responses_of_core_controllers(ext_server: Server) -> None:
    admin = Client(ext_server.url)
    net = admin.post("/v2.0/networks", {"network": {"name": "r"}})[1]["network"]
    assert net["example:annotated"] is True
    listed = admin.get("/v2.0/networks")[1]["networks"]
    assert listed and all(n["example:annotated"] for n in listed)


def test_a_second_plugin_for_one_service_type_stops_startup(tmp_path: Path) -> None:
    import subprocess
    import sys
    conf = tmp_path / "n.conf"
    conf.write_text(f"[DEFAULT]\nauth_strategy = noauth\nstate_path = {tmp_path}/var\n"
                    f"service_plugins = example,neutrino_example:ExampleServicePlugin\n")
    result = subprocess.run([sys.executable, "-m", "neutrino.cmd.main", "serve",
                             "--config-file", str(conf)], capture_output=True, text=True,
                            timeout=60, env={**__import__("os").environ, "PYTHONPATH": str(DIST)})
    assert result.returncode == 2
    assert "only one plugin per service type" in result.stderr.strip().splitlines()[-1]

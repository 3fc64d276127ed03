"""The L3 agent over RabbitMQ: it registers with the server, hears the server's
casts on ``l3_agent`` and calls ``q-l3-plugin`` with upstream's method names.

The server's L3 RPC endpoints are on another branch: calls to ``q-l3-plugin``
are answered here by a recording endpoint, the rest is the real server.
"""
from __future__ import annotations

import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any, Iterator

import oslo_messaging
import pytest

from neutrino.agents.l3.agent import L3Agent
from neutrino.agents.l3.rpc import L3PluginApi
from neutrino.rpc.transport import rpc_transport
from tests.conftest import Client, Server
from tests.l3host.drivers import NullDriver
from tests.l3host.test_agent_loop import FakeManager
from tests.rpc.bus import agent_conf, bus
from tests.rpc.conftest import vhost  # noqa: F401 - the module's own vhost
from tests.waiting import until


class RecordingL3Plugin:
    """Stands in for the server's q-l3-plugin endpoint; records what agents ask."""

    target = oslo_messaging.Target(version="1.13")

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.routers: list[dict[str, Any]] = []

    def sync_routers(self, context: Any, **kwargs: Any) -> list[dict[str, Any]]:
        self.calls.append(("sync_routers", kwargs))
        ids = kwargs.get("router_ids")
        return [r for r in self.routers if ids is None or r["id"] in ids]

    def get_router_ids(self, context: Any, **kwargs: Any) -> list[str]:
        self.calls.append(("get_router_ids", kwargs))
        return [r["id"] for r in self.routers]

    def get_external_network_id(self, context: Any, **kwargs: Any) -> str:
        self.calls.append(("get_external_network_id", kwargs))
        return "ext-net"

    def update_floatingip_statuses(self, context: Any, **kwargs: Any) -> None:
        self.calls.append(("update_floatingip_statuses", kwargs))


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, vhost: str) -> Iterator[Server]:  # noqa: F811
    server = Server(tmp_path_factory.mktemp("l3host"), extra=f"transport_url = {bus(vhost)}\n")
    server.start()
    yield server
    server.stop()


@pytest.fixture
def fake_l3_plugin(vhost: str, tmp_path: Path) -> Iterator[RecordingL3Plugin]:  # noqa: F811
    endpoint = RecordingL3Plugin()
    conf = agent_conf(tmp_path, vhost, "plugin-side")
    server = oslo_messaging.get_rpc_server(
        rpc_transport(conf), oslo_messaging.Target(topic="q-l3-plugin", server="plugin-side"),
        [endpoint])
    server.start()
    time.sleep(0.3)
    yield endpoint
    server.stop()
    server.wait()
    server.transport.cleanup()


def test_plugin_api_calls_use_upstream_names_and_arguments(
        vhost: str, tmp_path: Path, fake_l3_plugin: RecordingL3Plugin) -> None:  # noqa: F811
    fake_l3_plugin.routers = [{"id": "r1"}, {"id": "r2"}]
    api = L3PluginApi(agent_conf(tmp_path, vhost, "l3host-api"), "l3host-api")
    try:
        assert api.sync_routers() == [{"id": "r1"}, {"id": "r2"}]
        assert api.sync_routers(["r2"]) == [{"id": "r2"}]
        assert api.get_router_ids() == ["r1", "r2"]
        assert api.get_external_network_id() == "ext-net"
        api.update_floatingip_statuses("r1", {"f1": "ACTIVE"})
    finally:
        api.close()
    assert fake_l3_plugin.calls == [
        ("sync_routers", {"host": "l3host-api", "router_ids": None}),
        ("sync_routers", {"host": "l3host-api", "router_ids": ["r2"]}),
        ("get_router_ids", {"host": "l3host-api"}),
        ("get_external_network_id", {"host": "l3host-api"}),
        ("update_floatingip_statuses", {"router_id": "r1", "fip_statuses": {"f1": "ACTIVE"}}),
    ]


@pytest.fixture
def running_agent(vhost: str, tmp_path: Path, srv: Server,  # noqa: F811
                  fake_l3_plugin: RecordingL3Plugin) -> Iterator[tuple[L3Agent, FakeManager]]:
    host = f"l3host-{uuid.uuid4().hex[:8]}"
    conf = agent_conf(tmp_path, vhost, host, "[AGENT]\nreport_interval = 0.5\n")
    manager = FakeManager()
    agent = L3Agent(conf, NullDriver(), routers=manager)  # type: ignore[arg-type]
    agent.start()
    yield agent, manager
    agent.stop()


def test_agent_registers_as_a_legacy_l3_agent(
        srv: Server, running_agent: tuple[L3Agent, FakeManager]) -> None:
    agent, _ = running_agent
    admin = Client(srv.url, roles="admin")
    shown = until(lambda: admin.get(f"/v2.0/agents?host={agent.host}")[1]["agents"])
    assert len(shown) == 1
    a = shown[0]
    assert (a["agent_type"], a["binary"], a["topic"], a["alive"]) == (
        "L3 agent", "neutron-l3-agent", "l3_agent", True)
    assert a["configurations"]["agent_mode"] == "legacy"


def cast(conf: Any, method: str, host: str | None, **kwargs: Any) -> None:
    transport = rpc_transport(conf)
    target = oslo_messaging.Target(topic="l3_agent", server=host, fanout=host is None)
    oslo_messaging.get_rpc_client(transport, target).cast({}, method, **kwargs)
    transport.cleanup()


def test_agent_syncs_at_start_and_follows_casts(
        vhost: str, tmp_path: Path,  # noqa: F811
        running_agent: tuple[L3Agent, FakeManager],
        fake_l3_plugin: RecordingL3Plugin) -> None:
    agent, manager = running_agent
    until(lambda: ("sync_routers", {"host": agent.host, "router_ids": None})
             in fake_l3_plugin.calls)
    time.sleep(0.3)  # the notification consumer is bound
    fake_l3_plugin.routers = [{"id": "r-new", "_interfaces": []}]
    conf = agent_conf(tmp_path, vhost, "caster")
    cast(conf, "routers_updated", agent.host, routers=["r-new"])
    until(lambda: ("apply", "r-new") in manager.calls)
    assert ("sync_routers", {"host": agent.host, "router_ids": ["r-new"]}) \
        in fake_l3_plugin.calls
    cast(conf, "router_deleted", None, router_id="r-new")  # fanout, as upstream
    until(lambda: ("remove", "r-new") in manager.calls)
    cast(conf, "router_added_to_agent", agent.host, payload=["r-new"])
    until(lambda: manager.calls.count(("apply", "r-new")) == 2)
    cast(conf, "router_removed_from_agent", agent.host, payload={"router_id": "r-new"})
    until(lambda: manager.calls.count(("remove", "r-new")) == 2)


def test_cli_runs_the_agent_until_sigterm(vhost: str, tmp_path: Path,  # noqa: F811
                                          srv: Server) -> None:
    host = f"l3host-cli-{uuid.uuid4().hex[:6]}"
    conf = tmp_path / "l3_agent.ini"
    conf.write_text(f"[DEFAULT]\nhost = {host}\ntransport_url = {bus(vhost)}\n"
                    "interface_driver = tests.l3host.drivers.NullDriver\n"
                    "rpc_response_timeout = 2\n[AGENT]\nreport_interval = 0.5\n")
    log = open(tmp_path / "agent.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "neutrino.cmd.main", "agent", "l3",
                             "--config-file", str(conf)], stdout=log, stderr=log,
                            cwd=str(Path(__file__).parents[2]))
    try:
        admin = Client(srv.url, roles="admin")
        shown = until(lambda: admin.get(f"/v2.0/agents?host={host}")[1]["agents"])
        assert shown[0]["agent_type"] == "L3 agent"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()


def test_cli_without_interface_driver_is_a_configuration_error(tmp_path: Path) -> None:
    conf = tmp_path / "l3_agent.ini"
    conf.write_text("[DEFAULT]\nhost = x\n")
    done = subprocess.run([sys.executable, "-m", "neutrino.cmd.main", "agent", "l3",
                           "--config-file", str(conf)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2
    assert "interface_driver" in done.stderr



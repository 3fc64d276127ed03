"""L3 agents over RabbitMQ: a vhost per module, a server on it, fake L3 agents."""
from __future__ import annotations

import threading
import time
import uuid
from pathlib import Path
from typing import Any, Iterator

import oslo_messaging
import pytest

from neutrino.agents.base import Agent
from neutrino.rpc.transport import rpc_transport
from neutrino.service import make_conf
from tests.conftest import Client, Server
from tests.rpc.conftest import vhost  # noqa: F401 - the module's own vhost

ML2 = ("[ml2]\ntype_drivers = flat,vlan,vxlan\ntenant_network_types = vxlan\n"
       "mechanism_drivers = openvswitch\n[ml2_type_vxlan]\nvni_ranges = 500:600\n")


def bus(vhost: str) -> str:
    return f"rabbit://guest:guest@127.0.0.1:5672/{vhost}"


def start_server(tmp: Path, vhost: str, extra: str = "", plugins: str = "router") -> Server:
    """A server on the module's vhost with the L3 plugin (and ``plugins``
    besides it: a service plugin whose changes the L3 agents hear of)."""
    return Server(tmp, extra=(f"transport_url = {bus(vhost)}\nservice_plugins = {plugins}\n"
                              f"{extra}\n{ML2}")).start()


class Recorder:
    """What the server casts to one L3 agent (topic ``l3_agent``, its host)."""

    target = oslo_messaging.Target(version="1.4")

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.lock = threading.Condition()

    def _record(self, method: str, kwargs: dict[str, Any]) -> None:
        with self.lock:
            self.calls.append((method, kwargs))
            self.lock.notify_all()

    def routers_updated(self, context: Any, **kwargs: Any) -> None:
        self._record("routers_updated", kwargs)

    def router_deleted(self, context: Any, **kwargs: Any) -> None:
        self._record("router_deleted", kwargs)

    def router_added_to_agent(self, context: Any, **kwargs: Any) -> None:
        self._record("router_added_to_agent", kwargs)

    def router_removed_from_agent(self, context: Any, **kwargs: Any) -> None:
        self._record("router_removed_from_agent", kwargs)

    def wait_for(self, method: str, kwargs: dict[str, Any], timeout: float = 20) -> bool:
        deadline = time.monotonic() + timeout
        with self.lock:
            while (method, kwargs) not in self.calls:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.lock.wait(left)
            return True


class FakeL3Agent(Agent):
    """An L3 agent as the server sees it: state reports, the casts it
    receives (``recorder``) and its calls to ``q-l3-plugin``."""

    agent_type = "L3 agent"
    binary = "neutron-l3-agent"
    topic = "l3_agent"

    def __init__(self, conf: Any, mode: str = "legacy") -> None:
        super().__init__(conf)
        self.mode = mode
        self.recorder = Recorder()
        self.listen("l3_agent", [self.recorder])
        self.plugin_transport = rpc_transport(conf)
        self.plugin = oslo_messaging.get_rpc_client(
            self.plugin_transport, oslo_messaging.Target(topic="q-l3-plugin", version="1.0"))

    def configurations(self) -> dict[str, Any]:
        return {"agent_mode": self.mode, "handle_internal_only_routers": True}

    def call(self, method: str, **kwargs: Any) -> Any:
        return self.plugin.prepare(timeout=30).call({}, method, **kwargs)

    def close(self) -> None:
        """Stop reporting and listening and close both connections: one left
        open retries in a loop once the module's vhost is deleted."""
        self.stop()
        self.plugin_transport.cleanup()



@pytest.fixture
def admin(srv: Server) -> Client:
    """An admin of a project of its own, on the module's ``srv``."""
    return Client(srv.url, uuid.uuid4().hex, roles="admin")


@pytest.fixture
def member(srv: Server) -> Client:
    return Client(srv.url, uuid.uuid4().hex, roles="member,reader")


def forget_agents(srv: Server) -> Client:
    """Delete every agent ``srv`` knows of, so that the next test of a
    module sees only the L3 agents it makes; the admin that did, for more
    clean-up."""
    admin = Client(srv.url, uuid.uuid4().hex, roles="admin")
    for agent in admin.get("/v2.0/agents")[1]["agents"]:
        assert admin.delete(f"/v2.0/agents/{agent['id']}")[0] == 204
    return admin


@pytest.fixture
def only_this_tests_agents(srv: Server) -> Iterator[None]:
    """Each test sees only the L3 agents it made: the others are forgotten
    after it (a module uses it with ``pytest.mark.usefixtures``)."""
    yield
    forget_agents(srv)


def agent_conf(tmp: Path, vhost: str, host: str, report_interval: float = 0) -> Any:
    path = tmp / f"{host}.conf"
    path.write_text(f"[DEFAULT]\nhost = {host}\ntransport_url = {bus(vhost)}\n"
                    f"[AGENT]\nreport_interval = {report_interval}\n")
    return make_conf(["--config-file", str(path)])


@pytest.fixture
def l3_agents(tmp_path: Path, vhost: str) -> Iterator[Any]:  # noqa: F811
    """``make(report_interval=0)`` registers a new fake L3 agent on a host of its own."""
    made: list[FakeL3Agent] = []

    def make(report_interval: float = 0, mode: str = "legacy") -> FakeL3Agent:
        host = f"l3-{uuid.uuid4().hex[:8]}"
        agent = FakeL3Agent(agent_conf(tmp_path, vhost, host, report_interval), mode)
        made.append(agent)
        agent.register()
        agent.start_reporting()
        time.sleep(0.3)  # let its consumer bind the queue
        return agent
    yield make
    for agent in made:
        agent.close()


def agent_id(admin: Client, host: str, agent_type: str = "L3 agent") -> str:
    status, body = admin.get(f"/v2.0/agents?host={host}&agent_type={agent_type}")
    assert status == 200 and len(body["agents"]) == 1, body
    return str(body["agents"][0]["id"])


def hosts_of(admin: Client, router_id: str) -> list[str]:
    status, body = admin.get(f"/v2.0/routers/{router_id}/l3-agents")
    assert status == 200, body
    return [a["host"] for a in body["agents"]]


def synced_once_told(agent: FakeL3Agent, router_id: str) -> dict[str, Any]:
    """The router as ``agent`` syncs it, once the server has told the agent
    it changed (the caller clears ``agent.recorder.calls`` before the change)."""
    assert agent.recorder.wait_for("routers_updated", {"routers": [router_id]})
    [synced] = agent.call("sync_routers", host=agent.host, router_ids=[router_id])
    return dict(synced)

"""The server's side of metering agents over RabbitMQ: ``get_sync_data_metering``
per host and upstream's casts after label and rule changes."""
from __future__ import annotations

import threading
import time
import uuid
from typing import Any, Iterator

import oslo_messaging
import pytest

from neutrino.rpc.transport import rpc_transport
from tests.api import _helpers as h
from tests.conftest import Client, Server
from tests.l3 import _l3
from tests.l3agent.conftest import hosts_of, l3_agents, start_server  # noqa: F401
from tests.rpc.conftest import vhost  # noqa: F401


class MeteringRecorder:
    """A metering agent's casts (topic ``metering_agent``, its host)."""

    target = oslo_messaging.Target(version="1.0")

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.cond = threading.Condition()

    def _record(self, method: str, kwargs: dict[str, Any]) -> None:
        with self.cond:
            self.calls.append((method, kwargs.get("routers", kwargs.get("router_id"))))
            self.cond.notify_all()

    def add_metering_label(self, context: Any, **kw: Any) -> None:
        self._record("add_metering_label", kw)

    def remove_metering_label(self, context: Any, **kw: Any) -> None:
        self._record("remove_metering_label", kw)

    def add_metering_label_rule(self, context: Any, **kw: Any) -> None:
        self._record("add_metering_label_rule", kw)

    def remove_metering_label_rule(self, context: Any, **kw: Any) -> None:
        self._record("remove_metering_label_rule", kw)

    def wait_for(self, method: str, timeout: float = 20) -> Any:
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for name, arg in self.calls:
                    if name == method:
                        return arg
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no {method} cast; got {self.calls}")
                self.cond.wait(left)


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, vhost: str) -> Iterator[Server]:  # noqa: F811
    server = start_server(tmp_path_factory.mktemp("meterrpc"), vhost,
                          "service_plugins = router,metering\nrouter_auto_schedule = true\n")
    yield server
    server.stop()


@pytest.fixture
def admin(srv: Server) -> Iterator[Client]:
    client = Client(srv.url, uuid.uuid4().hex, roles="admin")
    yield client
    for agent in client.get("/v2.0/agents")[1]["agents"]:
        client.delete(f"/v2.0/agents/{agent['id']}")


@pytest.fixture
def metering_host(l3_agents: Any) -> Iterator[tuple[Any, MeteringRecorder, Any]]:  # noqa: F811
    """An L3 agent's host with a metering agent listening there and its client."""
    agent = l3_agents()
    recorder = MeteringRecorder()
    transport = rpc_transport(agent.conf)
    server = oslo_messaging.get_rpc_server(
        transport, oslo_messaging.Target(topic="metering_agent", server=agent.host),
        [recorder])
    server.start()
    client = oslo_messaging.get_rpc_client(
        transport, oslo_messaging.Target(topic="metering_plugin", version="1.0"))
    time.sleep(0.3)  # let the consumer bind its queue
    yield agent, recorder, client.prepare(timeout=30)
    server.stop()
    server.wait()
    transport.cleanup()


def _routed(admin: Client, member: Client) -> dict[str, Any]:
    ext, _ = _l3.external_network(admin)
    return _l3.router(member, external_gateway_info={"network_id": ext["id"]})


def _label(admin: Client, project: str, **attrs: Any) -> dict[str, Any]:
    return h.created(admin.post("/v2.0/metering/metering-labels", {"metering_label": {
        "name": h.unique("lbl"), "project_id": project, **attrs}}), "metering_label")


def _rule(admin: Client, label_id: str, **attrs: Any) -> dict[str, Any]:
    return h.created(admin.post("/v2.0/metering/metering-label-rules", {
        "metering_label_rule": {"metering_label_id": label_id, "direction": "egress",
                                **attrs}}), "metering_label_rule")


def test_sync_data_has_the_hosts_routers_with_their_projects_labels_and_rules(
        srv: Server, admin: Client, metering_host: Any) -> None:
    agent, _, plugin = metering_host
    project, other = uuid.uuid4().hex, uuid.uuid4().hex
    router = _routed(admin, Client(srv.url, project, "member"))
    stranger = _routed(admin, Client(srv.url, other, "member"))
    assert hosts_of(admin, router["id"]) == [agent.host]
    label = _label(admin, project)
    rule = _rule(admin, label["id"], remote_ip_prefix="10.0.0.0/24", excluded=True)

    routers = plugin.call({}, "get_sync_data_metering", host=agent.host)
    by_id = {r["id"]: r for r in routers}
    assert stranger["id"] not in by_id  # another project's router: not this label's
    synced = by_id[router["id"]]
    assert (synced["project_id"], synced["admin_state_up"], synced["distributed"]) == (
        project, True, False)
    assert synced["gw_port_id"]
    [meta] = synced["_metering_labels"]
    assert (meta["id"], meta["name"], meta["shared"]) == (label["id"], label["name"], False)
    [r] = meta["rules"]
    assert (r["id"], r["direction"], r["remote_ip_prefix"], r["excluded"]) == (
        rule["id"], "egress", "10.0.0.0/24", True)

    shared = _label(admin, uuid.uuid4().hex, shared=True)
    routers = plugin.call({}, "get_sync_data_metering", host=agent.host)
    labelled = {r["id"]: {m["id"] for m in r["_metering_labels"]} for r in routers}
    assert labelled[router["id"]] == {label["id"], shared["id"]}
    assert labelled[stranger["id"]] == {shared["id"]}

    assert plugin.call({}, "get_sync_data_metering", host="no-such-host") == []


def test_label_and_rule_changes_are_cast_to_the_routers_host(
        srv: Server, admin: Client, metering_host: Any) -> None:
    agent, recorder, _ = metering_host
    project = uuid.uuid4().hex
    router = _routed(admin, Client(srv.url, project, "member"))
    assert hosts_of(admin, router["id"]) == [agent.host]

    label = _label(admin, project)
    [added] = recorder.wait_for("add_metering_label")
    assert added["id"] == router["id"]
    assert [m["id"] for m in added["_metering_labels"]] == [label["id"]]

    rule = _rule(admin, label["id"], source_ip_prefix="10.1.0.0/16")
    [with_rule] = recorder.wait_for("add_metering_label_rule")
    assert with_rule["id"] == router["id"]
    [meta] = with_rule["_metering_labels"]
    assert meta["id"] == label["id"] and meta["rule"]["id"] == rule["id"]
    assert meta["rule"]["source_ip_prefix"] == "10.1.0.0/16"

    assert admin.delete(f"/v2.0/metering/metering-label-rules/{rule['id']}")[0] == 204
    [removed_rule] = recorder.wait_for("remove_metering_label_rule")
    assert removed_rule["_metering_labels"][0]["rule"]["id"] == rule["id"]

    assert admin.delete(f"/v2.0/metering/metering-labels/{label['id']}")[0] == 204
    [removed] = recorder.wait_for("remove_metering_label")
    assert removed["_metering_labels"][0]["id"] == label["id"]


def test_the_agent_registers_syncs_its_hosts_routers_and_follows_casts(
        srv: Server, admin: Client, l3_agents: Any) -> None:  # noqa: F811
    from neutrino.agents.metering import driver as drivers
    from neutrino.agents.metering.agent import MeteringAgent
    from neutrino.conf.agents import metering as metering_conf
    from tests.metering.fakes import FakeHost

    l3 = l3_agents()
    project = uuid.uuid4().hex
    router = _routed(admin, Client(srv.url, project, "member"))
    assert hosts_of(admin, router["id"]) == [l3.host]
    metering_conf.register(l3.conf)
    l3.conf.set_override("driver", "iptables")
    l3.conf.set_override("measure_interval", 0.2)
    ns = "qrouter-" + router["id"]
    host = FakeHost(ns)
    agent = MeteringAgent(l3.conf, driver=drivers.NftablesDriver(host))
    agent.register()
    agent.start()
    try:
        status, body = admin.get(f"/v2.0/agents?host={l3.host}&agent_type=Metering agent")
        [seen] = body["agents"]
        assert (seen["binary"], seen["topic"]) == ("neutron-metering-agent", "metering_agent")
        assert seen["configurations"]["metering_driver"] == "iptables"

        assert host.tables == {}  # no label applies to the router yet

        label = _label(admin, project)  # each cast makes the agent sync again
        _rule(admin, label["id"], remote_ip_prefix="10.0.0.0/8")
        deadline = time.monotonic() + 20
        while "10.0.0.0/8" not in host.tables.get(ns, "") and time.monotonic() < deadline:
            time.sleep(0.1)
        assert f'counter name "label-{label["id"]}"' in host.tables[ns]
    finally:
        agent.stop()

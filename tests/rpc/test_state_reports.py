"""Agents register and keep their heartbeat over RabbitMQ; the API shows it."""
from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from neutrino.agents.base import Agent
from tests.conftest import Client, Server
from tests.rpc.bus import agent_conf, bus
from tests.rpc.conftest import fresh_vhost
from tests.waiting import until

DOWN_TIME = 3


class RecordingAgent(Agent):
    agent_type = "Open vSwitch agent"
    binary = "neutrino-openvswitch-agent"
    topic = "N/A"

    def configurations(self) -> dict[str, Any]:
        return {"bridge_mappings": {"physnet1": "br-eth1"}, "tunnel_types": ["vxlan"]}

    def availability_zone(self) -> str | None:
        return "az-test"


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, vhost: str) -> Iterator[Server]:
    server = Server(tmp_path_factory.mktemp("rpc"),
                    extra=f"transport_url = {bus(vhost)}\nagent_down_time = {DOWN_TIME}\n")
    server.start()
    yield server
    server.stop()


@pytest.fixture
def admin(srv: Server) -> Client:
    return Client(srv.url, roles="admin")


def agent_for(tmp: Path, vhost: str, host: str) -> RecordingAgent:
    return RecordingAgent(agent_conf(tmp, vhost, host, "[AGENT]\nreport_interval = 0.5\n"))


def shown(admin: Client, host: str) -> dict[str, Any] | None:
    agents = admin.get(f"/v2.0/agents?host={host}")[1]["agents"]
    return agents[0] if agents else None


def test_an_agent_registers_with_its_first_report_and_stays_alive(
        srv: Server, admin: Client, vhost: str, tmp_path: Path) -> None:
    agent = agent_for(tmp_path, vhost, "host-a")
    try:
        assert agent.register() == "new"
        assert agent.report_state() == "alive"
        row = shown(admin, "host-a")
        assert row is not None
        assert (row["agent_type"], row["binary"], row["alive"]) == (
            "Open vSwitch agent", "neutrino-openvswitch-agent", True)
        assert row["configurations"] == {"bridge_mappings": {"physnet1": "br-eth1"},
                                         "tunnel_types": ["vxlan"]}
        assert row["availability_zone"] == "az-test"
    finally:
        agent.stop()


def test_reports_never_undo_what_an_admin_set(srv: Server, admin: Client, vhost: str,
                                              tmp_path: Path) -> None:
    agent = agent_for(tmp_path, vhost, "host-b")
    try:
        agent.register()
        row = shown(admin, "host-b")
        admin.put(f"/v2.0/agents/{row['id']}",
                  {"agent": {"admin_state_up": False, "description": "maintenance"}})
        assert agent.report_state() == "alive"
        row = shown(admin, "host-b")
        assert (row["admin_state_up"], row["description"]) == (False, "maintenance")
    finally:
        agent.stop()


def test_an_agent_that_stops_reporting_goes_dead_and_revives_when_it_reports(
        srv: Server, admin: Client, vhost: str, tmp_path: Path) -> None:
    agent = agent_for(tmp_path, vhost, "host-c")
    try:
        agent.start_reporting()
        assert until(lambda: (shown(admin, "host-c") or {}).get("alive"))
        agent.stop()
        until(lambda: shown(admin, "host-c")["alive"] is False)
        restarted = agent_for(tmp_path, vhost, "host-c")
        try:
            assert restarted.report_state() == "revived"
        finally:
            restarted.stop()
        assert shown(admin, "host-c")["alive"] is True
    finally:
        agent.stop()


def test_an_agent_started_before_its_server_registers_once_the_server_is_up(
        tmp_path: Path) -> None:
    """The broker drops reports sent before the server's consumers exist; the
    report loop retries short attempts instead of waiting out the 60 s RPC
    response timeout before it tries again."""
    with fresh_vhost() as vhost:  # the module's server must not be listening on it
        _agent_before_server(tmp_path, vhost)


def _agent_before_server(tmp_path: Path, vhost: str) -> None:
    conf = agent_conf(tmp_path, vhost, "host-early",
                      "[AGENT]\nreport_interval = 0.5\n[DEFAULT]\nrpc_response_timeout = 60\n")
    agent = RecordingAgent(conf)
    agent.start_reporting()
    try:
        time.sleep(1)  # the first report is sent and lost
        (tmp_path / "late").mkdir()
        late = Server(tmp_path / "late", extra=f"transport_url = {bus(vhost)}\n").start()
        try:
            row = until(lambda: shown(Client(late.url, roles="admin"), "host-early"),
                           timeout=40)
            assert row["alive"] is True
        finally:
            late.stop()
    finally:
        agent.stop()


def test_the_rpc_process_and_workers_that_cast_end_with_the_server(
        tmp_path: Path, vhost: str) -> None:
    """A worker that has used the bus (a network update casts to the agents)
    once outlived the server: its exit ran the master's clean-up of the RPC
    process and hung there."""
    server = Server(tmp_path, extra=f"transport_url = {bus(vhost)}\n", workers=2).start()
    admin = Client(server.url, roles="admin")
    for _ in range(4):  # likely both workers
        status, body = admin.post("/v2.0/networks", {"network": {"name": "cast"}})
        assert status == 201, body
        assert admin.put(f"/v2.0/networks/{body['network']['id']}",
                         {"network": {"name": "again"}})[0] == 200
    children = Path(f"/proc/{server.proc.pid}/task/{server.proc.pid}/children")
    pids = [int(p) for p in children.read_text().split()]
    names = {pid: Path(f"/proc/{pid}/comm").read_text().strip() for pid in pids}
    server.stop()
    assert len(pids) == 3, names  # two API workers and the RPC process
    until(lambda: not [pid for pid in pids if Path(f"/proc/{pid}").exists()], timeout=15)
    assert "can only join a child process" not in server.log.read_text()


def test_a_killed_master_takes_its_rpc_process_along(tmp_path: Path, vhost: str) -> None:
    """SIGKILL skips the master's clean-up; the RPC process asked the kernel
    to end it with its parent, and so did each API worker."""
    server = Server(tmp_path, extra=f"transport_url = {bus(vhost)}\n").start()
    children = Path(f"/proc/{server.proc.pid}/task/{server.proc.pid}/children")
    pids = [int(p) for p in children.read_text().split()]
    assert len(pids) == 2
    server.proc.kill()
    server.proc.wait()
    until(lambda: not [pid for pid in pids if Path(f"/proc/{pid}").exists()], timeout=30)


def test_a_report_cut_off_by_the_agent_stopping_is_not_logged_as_a_failure(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A stop ends the reports' transport under a report still waiting for
    its answer; that report's failure is the stop, not something to alarm
    an operator with."""
    with fresh_vhost() as vhost:  # nobody answers reports here
        agent = RecordingAgent(agent_conf(tmp_path, vhost, "host-stopping"))
        answers: list[str | None] = []
        ended = threading.Event()

        def report() -> None:
            answers.append(agent.report_state(timeout=3))
            ended.set()

        threading.Thread(target=report, daemon=True).start()
        time.sleep(1)  # the report is out, waiting for its answer
        agent.stop()
    assert ended.wait(30)  # it ends at its timeout at the latest
    assert answers == [None]
    failures = [r for r in caplog.records if r.levelno >= logging.WARNING
                and r.name.startswith("neutrino")]
    assert failures == []

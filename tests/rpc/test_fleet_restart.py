"""A fleet of L2 agents restarting together (issue 37, at a smaller scale
than ``benchmarks/agent_fleet.py --restart``'s 1,000): every agent's first
report and its resync (the details of all its devices, then all of them up)
arrive at once while the others keep reporting. The server answers them
all, takes no agent for dead (a report answered ``revived`` would say it
had), shows every agent alive and every port ACTIVE afterwards."""
from __future__ import annotations

import datetime as dt
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterator

import oslo_messaging
import pytest

from neutrino.rpc import topics
from neutrino.rpc.admin_context import admin_context
from neutrino.rpc.transport import rpc_transport
from tests.conftest import Client, Server
from tests.rpc.bus import agent_conf, bus

AGENTS, PORTS_EACH = 60, 3
DOWN_TIME, INTERVAL = 20, 2
ML2 = ("[ml2]\ntype_drivers = vxlan\ntenant_network_types = vxlan\n"
       "mechanism_drivers = openvswitch\n[ml2_type_vxlan]\nvni_ranges = 100:200\n"
       "[quotas]\ndefault_quota = -1\nquota_port = -1\n")


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, vhost: str) -> Iterator[Server]:
    server = Server(tmp_path_factory.mktemp("fleet"),
                    extra=f"transport_url = {bus(vhost)}\nagent_down_time = {DOWN_TIME}\n{ML2}")
    server.start()
    yield server
    server.stop()


class Fleet:
    """Many Open vSwitch agents on one connection, as the server sees them."""

    def __init__(self, tmp: Path, vhost: str, count: int) -> None:
        self.transport = rpc_transport(agent_conf(tmp, vhost, "fleet"))
        self.reports = oslo_messaging.get_rpc_client(
            self.transport, oslo_messaging.Target(topic=topics.REPORTS, version="1.0"))
        self.plugin = oslo_messaging.get_rpc_client(
            self.transport, oslo_messaging.Target(topic=topics.PLUGIN, version="1.5"))
        self.hosts = [f"fleet-{uuid.uuid4().hex[:6]}-{n}" for n in range(count)]
        self.answers: list[str] = []
        self.lock = threading.Lock()

    def wait_for_server(self) -> None:
        """A report sent before the server's consumers are bound is dropped:
        short ones until one is answered."""
        for _ in range(60):
            try:
                self.report(self.hosts[0], start=True, timeout=2)
                return
            except oslo_messaging.MessagingTimeout:
                continue
        raise AssertionError("the server's RPC process never answered")

    def report(self, host: str, start: bool = False, timeout: float = 120) -> None:
        state = {"binary": "neutron-openvswitch-agent", "host": host, "topic": "N/A",
                 "agent_type": "Open vSwitch agent", "start_flag": start,
                 "configurations": {"tunnel_types": ["vxlan"], "bridge_mappings": {}}}
        now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")
        answer = self.reports.prepare(timeout=timeout).call(
            admin_context(), "report_state", agent_state={"agent_state": state}, time=now)
        with self.lock:
            self.answers.append(answer)

    def resync(self, host: str, devices: list[str]) -> list[dict[str, Any]]:
        common = {"agent_id": f"ovs-{host}", "host": host}
        details = self.plugin.prepare(timeout=120).call(
            admin_context(), "get_devices_details_list_and_failed_devices",
            devices=devices, **common)
        self.plugin.prepare(timeout=120).call(
            admin_context(), "update_device_list", devices_up=devices, devices_down=[],
            **common)
        return list(details["devices"])


def test_a_fleet_restarting_together_keeps_every_agent_alive(
        srv: Server, vhost: str, tmp_path: Path) -> None:
    admin = Client(srv.url, roles="admin")
    fleet = Fleet(tmp_path, vhost, AGENTS)
    storm_over = threading.Event()  # and the heartbeats with it
    try:
        fleet.wait_for_server()
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda h: fleet.report(h, start=True), fleet.hosts))

        def heartbeats() -> None:
            while not storm_over.wait(INTERVAL):
                with ThreadPoolExecutor(8) as beat:
                    list(beat.map(fleet.report, fleet.hosts))
        beating = threading.Thread(target=heartbeats, daemon=True)
        beating.start()
        status, net = admin.post("/v2.0/networks", {"network": {"name": "fleet"}})
        assert status == 201, net
        admin.post("/v2.0/subnets", {"subnet": {"network_id": net["network"]["id"],
                                                "ip_version": 4, "cidr": "10.77.0.0/22"}})
        status, made = admin.post("/v2.0/ports", {"ports": [
            {"network_id": net["network"]["id"], "device_owner": "compute:nova",
             "device_id": f"vm-{host}-{i}", "binding:host_id": host}
            for host in fleet.hosts for i in range(PORTS_EACH)]})
        assert status == 201, made
        devices: dict[str, list[str]] = {h: [] for h in fleet.hosts}
        for port in made["ports"]:
            devices[port["binding:host_id"]].append(port["id"])
        with fleet.lock:
            fleet.answers.clear()

        def restart(host: str) -> list[dict[str, Any]]:
            fleet.report(host, start=True)
            return fleet.resync(host, devices[host])
        try:
            with ThreadPoolExecutor(32) as pool:
                details = dict(zip(fleet.hosts, pool.map(restart, fleet.hosts)))
        finally:
            storm_over.set()
            beating.join(120)

        assert "revived" not in fleet.answers and "new" not in fleet.answers
        assert len(fleet.answers) >= AGENTS
        for host, got in details.items():
            assert sorted(d["device"] for d in got) == sorted(devices[host])
            assert all(d.get("network_id") == net["network"]["id"] for d in got)
        agents = admin.get("/v2.0/agents?agent_type=Open vSwitch agent")[1]["agents"]
        mine = [a for a in agents if a["host"] in set(fleet.hosts)]
        assert len(mine) == AGENTS and all(a["alive"] for a in mine)
        ports = admin.get(f"/v2.0/ports?network_id={net['network']['id']}"
                          "&device_owner=compute:nova")[1]["ports"]
        assert {p["status"] for p in ports} == {"ACTIVE"}
    finally:
        storm_over.set()
        fleet.transport.cleanup()

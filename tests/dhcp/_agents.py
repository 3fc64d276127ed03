"""Test DHCP agents: they report their state like the real agent, listen
for the server's casts on ``dhcp_agent`` (server = their host) and record
them, and call the server's DHCP RPC."""
from __future__ import annotations

import threading
import time
import uuid
from pathlib import Path
from typing import Any

import oslo_messaging

from neutrino.agents.base import Agent
from neutrino.agents.dhcp_rpc import DhcpPluginApi
from neutrino.service import make_conf
from tests.conftest import Client

METHODS = ("network_create_end", "network_update_end", "network_delete_end",
           "subnet_create_end", "subnet_update_end", "subnet_delete_end",
           "port_create_end", "port_update_end", "port_delete_end", "agent_updated")


def bus(vhost: str) -> str:
    return f"rabbit://guest:guest@127.0.0.1:5672/{vhost}"


class Recorder:
    """What a DHCP agent was told: (method, payload), in arrival order."""

    target = oslo_messaging.Target(version="1.0")

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.changed = threading.Condition()

    def __getattr__(self, name: str) -> Any:
        if name not in METHODS:
            raise AttributeError(name)

        def record(context: Any, payload: dict[str, Any]) -> None:
            with self.changed:
                self.calls.append((name, payload))
                self.changed.notify_all()
        return record

    def wait_for(self, method: str, match: Any = lambda p: True,
                 timeout: float = 20) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self.changed:
            while True:
                for name, payload in self.calls:
                    if name == method and match(payload):
                        return payload
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no {method} matching; got {self.calls}")
                self.changed.wait(left)


class DhcpAgent(Agent):
    agent_type = "DHCP agent"
    binary = "neutron-dhcp-agent"
    topic = "dhcp_agent"

    def __init__(self, tmp: Path, vhost: str, networks: int = 0, host: str | None = None,
                 report_interval: float = 0, zone: str | None = None) -> None:
        name = host or f"dhcp-{uuid.uuid4().hex[:8]}"
        conf_file = tmp / f"{name}.conf"
        conf_file.write_text(f"[DEFAULT]\nhost = {name}\ntransport_url = {bus(vhost)}\n"
                             f"[AGENT]\nreport_interval = {report_interval}\n")
        super().__init__(make_conf(["--config-file", str(conf_file)]))
        self.networks = networks
        self.zone = zone
        self.recorder = Recorder()
        self.api: DhcpPluginApi | None = None

    def configurations(self) -> dict[str, Any]:
        return {"networks": self.networks, "subnets": 0, "ports": 0,
                "dhcp_driver": "neutron.agent.linux.dhcp.Dnsmasq"}

    def availability_zone(self) -> str | None:
        return self.zone

    def start(self) -> "DhcpAgent":
        """Listen for casts, then register (state report) and keep reporting."""
        self.listen(self.topic, [self.recorder])
        self.register()
        self.start_reporting()
        self.api = DhcpPluginApi(self.conf, self.host)
        return self

    def stop(self) -> None:
        super().stop()
        if self.api is not None:
            self.api.close()
            self.api = None


def agent_id(admin: Client, host: str, agent_type: str = "DHCP agent") -> str:
    status, body = admin.get(f"/v2.0/agents?host={host}&agent_type={agent_type}")
    assert status == 200 and len(body["agents"]) == 1, body
    return str(body["agents"][0]["id"])


def hosting_hosts(admin: Client, network_id: str) -> list[str]:
    status, body = admin.get(f"/v2.0/networks/{network_id}/dhcp-agents")
    assert status == 200, body
    return sorted(a["host"] for a in body["agents"])


def network_with_subnet(admin: Client, enable_dhcp: bool = True,
                        cidr: str = "10.9.0.0/24") -> tuple[str, str]:
    status, net = admin.post("/v2.0/networks", {"network": {"name": "dhcp-test"}})
    assert status == 201, net
    status, sub = admin.post("/v2.0/subnets", {"subnet": {
        "network_id": net["network"]["id"], "cidr": cidr, "ip_version": 4,
        "enable_dhcp": enable_dhcp}})
    assert status == 201, sub
    return net["network"]["id"], sub["subnet"]["id"]

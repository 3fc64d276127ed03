"""``tunnel_sync``: an L2 agent learns the tunnel endpoints of its live peers."""
from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest

from neutrino.agents.base import Agent
from neutrino.agents.rpc import PluginApi
from tests.conftest import Server
from tests.rpc.bus import agent_conf, bus


class TunnelAgent(Agent):
    agent_type = "Open vSwitch agent"
    binary = "neutron-openvswitch-agent"
    topic = "N/A"

    def __init__(self, conf: Any, ip: str, types: list[str]) -> None:
        super().__init__(conf)
        self.ip, self.types = ip, types

    def configurations(self) -> dict[str, Any]:
        return {"tunneling_ip": self.ip, "tunnel_types": self.types, "bridge_mappings": {}}


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, vhost: str) -> Iterator[Server]:
    server = Server(tmp_path_factory.mktemp("tunsync"), extra=f"transport_url = {bus(vhost)}\n")
    server.start()
    yield server
    server.stop()


def _report(tmp: Path, vhost: str, ip: str, types: list[str]) -> tuple[str, Any]:
    host = f"host-{uuid.uuid4().hex[:6]}"
    conf = agent_conf(tmp, vhost, host)
    agent = TunnelAgent(conf, ip, types)
    agent.register()
    agent.stop()
    return host, conf


def test_peers_of_a_tunnel_type_are_returned_without_the_caller(
        srv: Server, vhost: str, tmp_path: Path) -> None:
    a, conf_a = _report(tmp_path, vhost, "192.0.2.1", ["vxlan"])
    b, _ = _report(tmp_path, vhost, "192.0.2.2", ["vxlan", "geneve"])
    c, _ = _report(tmp_path, vhost, "192.0.2.3", ["gre"])
    api = PluginApi(conf_a, agent_id="ovs-a", host=a)
    try:
        vxlan = api.tunnel_sync("192.0.2.1", "vxlan")["tunnels"]
        assert {"ip_address": "192.0.2.2", "host": b} in vxlan
        assert not [t for t in vxlan if t["ip_address"] in ("192.0.2.1", "192.0.2.3")]
        gre = api.tunnel_sync("192.0.2.1", "gre")["tunnels"]
        assert {"ip_address": "192.0.2.3", "host": c} in gre
        assert not [t for t in gre if t["ip_address"] == "192.0.2.2"]
    finally:
        api.close()

"""An L2 agent for tests: reports in with a tunnel endpoint, listens on
every topic the server notifies agents on, and records what arrives."""
from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import oslo_messaging

from neutrino.agents.base import Agent
from neutrino.agents.rpc import PluginApi
from neutrino.rpc import topics
from neutrino.rpc.servers import stop_all
from neutrino.rpc.transport import rpc_transport
from neutrino.service import make_conf

TOPICS = (topics.PORT_UPDATE, topics.PORT_DELETE, topics.NETWORK_UPDATE,
          topics.NETWORK_DELETE, topics.SECURITY_GROUP_UPDATE, topics.L2POPULATION_UPDATE,
          topics.BINDING_ACTIVATE, topics.BINDING_DEACTIVATE)
METHODS = ("port_update", "port_delete", "network_update", "network_delete",
           "binding_activate", "binding_deactivate",
           "security_groups_rule_updated", "security_groups_member_updated",
           "add_fdb_entries", "remove_fdb_entries", "update_fdb_entries")


def bus(vhost: str) -> str:
    return f"rabbit://guest:guest@127.0.0.1:5672/{vhost}"


class Endpoint:
    target = oslo_messaging.Target(version="1.9")

    def __init__(self, calls: list[tuple[str, dict[str, Any]]]) -> None:
        self.calls, self.lock = calls, threading.Lock()
        for method in METHODS:
            setattr(self, method, self._recorder(method))

    def _recorder(self, method: str) -> Any:
        def record(context: Any, **kwargs: Any) -> None:
            with self.lock:
                self.calls.append((method, kwargs))
        return record


class RecordingAgent(Agent):
    agent_type = "Open vSwitch agent"
    binary = "neutrino-openvswitch-agent"
    topic = "N/A"

    def __init__(self, vhost: str, tmp: Path, host: str, tunneling_ip: str) -> None:
        conf_file = tmp / f"{host}.conf"
        conf_file.write_text(f"[DEFAULT]\nhost = {host}\ntransport_url = {bus(vhost)}\n")
        super().__init__(make_conf(["--config-file", str(conf_file)]))
        self.tunneling_ip = tunneling_ip
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.servers: list[Any] = []
        self.api: PluginApi | None = None

    def configurations(self) -> dict[str, Any]:
        return {"bridge_mappings": {}, "tunnel_types": ["vxlan"], "l2_population": True,
                "tunneling_ip": self.tunneling_ip}

    def start(self) -> None:
        endpoint = Endpoint(self.calls)
        transport = rpc_transport(self.conf)
        for topic in TOPICS:
            server = oslo_messaging.get_rpc_server(
                transport, oslo_messaging.Target(topic=topic, server=self.host), [endpoint])
            server.start()
            self.servers.append(server)
        self.register()
        self.api = PluginApi(self.conf, agent_id=f"ovs-{self.host}", host=self.host)
        time.sleep(0.3)  # let the fanout consumers bind their queues

    def of(self, method: str) -> list[dict[str, Any]]:
        return [kwargs for name, kwargs in list(self.calls) if name == method]

    def stop(self) -> None:
        stop_all(self.servers)
        if self.servers:
            self.servers[0].transport.cleanup()
        if self.api is not None:
            self.api.close()
        super().stop()

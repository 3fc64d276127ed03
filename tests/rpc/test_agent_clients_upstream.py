"""Neutrino's agents call as upstream's server expects: at namespace None
(upstream's neutron-lib serves every namespace there), with an admin context
(upstream's server shows a non-admin context no port), and security group
info at 1.3 with ``call_version`` (upstream answers member addresses as
``[ip, mac]`` pairs only then). The server side here is a recording endpoint
shaped as upstream's, over the in-process bus."""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Iterator

import oslo_messaging
import pytest

from neutrino.agents.dhcp_rpc import DhcpPluginApi
from neutrino.agents.metadata.rpc import MetadataPluginApi
from neutrino.agents.rpc import PluginApi
from neutrino.rpc import topics
from neutrino.rpc.servers import stop_all
from neutrino.rpc.transport import close_in_process, rpc_transport
from neutrino.service import make_conf

HOST = "upstream-shaped"


class UpstreamShaped:
    """The calls upstream's server serves on ``q-plugin`` at namespace None,
    answering what each was called with."""

    def __init__(self, version: str) -> None:
        self.target = oslo_messaging.Target(version=version)
        self.calls: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
        self.lock = threading.Lock()

    def _record(self, name: str, context: Any, kwargs: dict[str, Any]) -> Any:
        with self.lock:
            self.calls.append((name, dict(context), kwargs))
        return {"context": dict(context), "kwargs": kwargs}


class DhcpShaped(UpstreamShaped):
    def get_network_info(self, context: Any, **kwargs: Any) -> Any:
        return self._record("get_network_info", context, kwargs)


class MetadataShaped(UpstreamShaped):
    def get_ports(self, context: Any, filters: Any) -> Any:
        return [self._record("get_ports", context, {"filters": filters})]


class SecurityGroupShaped(UpstreamShaped):
    def security_group_info_for_devices(self, context: Any, **kwargs: Any) -> Any:
        return self._record("security_group_info_for_devices", context, kwargs)


@pytest.fixture(scope="module")
def conf(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    path = Path(tmp_path_factory.mktemp("clients")) / "agent.conf"
    path.write_text(f"[DEFAULT]\nhost = {HOST}\ntransport_url = fake://\n")
    conf = make_conf(["--config-file", str(path)])
    server = oslo_messaging.get_rpc_server(
        rpc_transport(conf), oslo_messaging.Target(topic=topics.PLUGIN, server=HOST),
        [DhcpShaped("1.10"), MetadataShaped("1.0"), SecurityGroupShaped("1.3")])
    server.start()
    try:
        yield conf
    finally:
        stop_all([server])
        close_in_process()


def is_admin(context: dict[str, Any]) -> bool:
    return context.get("is_admin") is True and "admin" in context.get("roles", [])


def test_the_dhcp_agent_calls_at_namespace_none_as_an_admin(conf: Any) -> None:
    api = DhcpPluginApi(conf, HOST)
    try:
        answer = api.get_network_info("net-1")
    finally:
        api.close()
    assert answer["kwargs"] == {"network_id": "net-1", "host": HOST}
    assert is_admin(answer["context"])


def test_the_metadata_agent_calls_at_namespace_none_as_an_admin(conf: Any) -> None:
    api = MetadataPluginApi(conf)
    try:
        [answer] = api.get_ports({"device_id": ["r1"]})
    finally:
        api.close()
    assert answer["kwargs"] == {"filters": {"device_id": ["r1"]}}
    assert is_admin(answer["context"])


def test_the_l2_agent_asks_security_group_info_with_call_version(conf: Any) -> None:
    api = PluginApi(conf, agent_id=f"ovs-{HOST}", host=HOST)
    try:
        answer = api.security_group_info_for_devices(["p1"])
    finally:
        api.close()
    assert answer["kwargs"] == {"devices": ["p1"], "call_version": "1.3"}
    assert is_admin(answer["context"])


def test_each_call_carries_a_request_id_of_its_own(conf: Any) -> None:
    api = DhcpPluginApi(conf, HOST)
    try:
        first, second = api.get_network_info("a"), api.get_network_info("b")
    finally:
        api.close()
    assert first["context"]["request_id"].startswith("req-")
    assert first["context"]["request_id"] != second["context"]["request_id"]

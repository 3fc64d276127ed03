"""The server answers upstream Neutron's agents as they call: each call made
here with a plain oslo.messaging client carrying the topic, namespace,
version, context and arguments upstream's agent code sends (neutron 29,
neutron-lib 5: every namespace None), over the in-process bus."""
from __future__ import annotations

from typing import Any, Iterator

import oslo_messaging
import pytest

from neutrino.rpc import topics
from neutrino.rpc.admin_context import admin_context
from neutrino.rpc.transport import close_in_process, rpc_transport
from tests.rpc.test_in_process import HOST, InProcess


@pytest.fixture(scope="module")
def aio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcess]:
    server = InProcess(tmp_path_factory.mktemp("upstreamwire"))
    server.rpc.start()
    try:
        yield server
    finally:
        server.rpc.stop()
        close_in_process()
        server.api.plugin.db.dispose()


def client(aio: InProcess, topic: str, namespace: str | None, version: str) -> Any:
    return oslo_messaging.get_rpc_client(rpc_transport(aio.conf), oslo_messaging.Target(
        topic=topic, namespace=namespace, version=version), timeout=20)


@pytest.fixture(scope="module")
def network(aio: InProcess) -> dict[str, Any]:
    net = aio.post("/v2.0/networks", {"network": {"name": "wire"}})["network"]
    subnet = aio.post("/v2.0/subnets", {"subnet": {
        "network_id": net["id"], "ip_version": 4, "cidr": "10.77.0.0/24"}})["subnet"]
    port = aio.post("/v2.0/ports", {"port": {
        "network_id": net["id"], "device_owner": "compute:nova", "device_id": "vm"}})["port"]
    return {"id": net["id"], "subnet": subnet["id"], "port": port["id"]}


def test_an_upstream_ovs_agent_is_told_the_server_is_alive(aio: InProcess) -> None:
    """neutron-openvswitch-agent's first call (``PluginReportStateAPI``);
    unanswered, the agent's main thread dies."""
    state = client(aio, topics.REPORTS, None, "1.4")
    assert state.call(admin_context(), "has_alive_neutron_server") is True


def test_an_upstream_ovs_agent_gets_a_pushed_networks_details(
        aio: InProcess, network: dict[str, Any]) -> None:
    """``get_network_details`` (1.6): upstream's OVS agent calls it when a
    network is pushed to its cache, for the segmentation id and MTU."""
    plugin = client(aio, topics.PLUGIN, None, "1.6")
    details = plugin.call(admin_context(), "get_network_details", network=network["id"],
                          agent_id="ovs-agent", host=HOST)
    assert (details["id"], details["provider:network_type"]) == (network["id"], "vxlan")
    assert details["mtu"] > 0


def test_an_upstream_dhcp_agent_gets_network_info_at_namespace_none(
        aio: InProcess, network: dict[str, Any]) -> None:
    dhcp = client(aio, topics.PLUGIN, None, "1.0")
    info = dhcp.prepare().call(admin_context(), "get_network_info",
                               network_id=network["id"], host=HOST)
    assert info["id"] == network["id"]
    assert [s["id"] for s in info["subnets"]] == [network["subnet"]]
    networks = dhcp.prepare(version="1.1").call(
        admin_context(), "get_active_networks_info", host=HOST)
    assert isinstance(networks, list)


def test_an_upstream_dhcp_agent_gets_ports_by_filter(
        aio: InProcess, network: dict[str, Any]) -> None:
    """``get_ports`` (upstream's ``BasePluginApi``), which the DHCP agent
    calls when a port changes."""
    dhcp = client(aio, topics.PLUGIN, None, "1.0")
    ports = dhcp.call(admin_context(), "get_ports",
                      filters={"network_id": [network["id"]], "device_id": ["vm"]})
    assert [p["id"] for p in ports] == [network["port"]]


@pytest.mark.parametrize("namespace, method, kwargs", [
    (topics.LEGACY_DHCP_NAMESPACE, "get_network_info", {"host": HOST}),
    (topics.LEGACY_METADATA_NAMESPACE, "get_ports", {})])
def test_neutrino_agents_of_the_previous_release_are_still_answered(
        aio: InProcess, network: dict[str, Any], namespace: str, method: str,
        kwargs: dict[str, Any]) -> None:
    legacy = client(aio, topics.PLUGIN, namespace, "1.0")
    if method == "get_network_info":
        assert legacy.call({}, method, network_id=network["id"], **kwargs)["id"] == network["id"]
    else:
        found = legacy.call({}, method, filters={"network_id": [network["id"]]})
        assert network["port"] in [p["id"] for p in found]


def test_security_group_info_answers_an_upstream_agents_call_version(
        aio: InProcess, network: dict[str, Any]) -> None:
    """Upstream's agents ask at 1.3 and add ``call_version``."""
    sg = client(aio, topics.PLUGIN, None, "1.3")
    info = sg.call(admin_context(), "security_group_info_for_devices",
                   devices=[network["port"]], call_version="1.3")
    assert network["port"] in info["devices"]

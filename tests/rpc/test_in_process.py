"""The in-process bus (``transport_url = fake://``): the server's RPC
endpoints, its casts and an agent's calls meet inside one process, as in the
all-in-one (``make run``); no broker is involved."""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Iterator

import oslo_messaging
import pytest
from falcon import testing

from neutrino.agents.rpc import PluginApi
from neutrino.aio.run import rpc_service
from neutrino.api.app import build_falcon
from neutrino.db import migrate
from neutrino.rpc import topics
from neutrino.rpc.transport import close_in_process, in_process, rpc_transport
from neutrino.service import build_api, make_conf
from tests.rpc.bus import OvsAgent

HOST = "aio-host"



class PortUpdates:
    """What an OVS agent's notification endpoint receives."""
    target = oslo_messaging.Target(version="1.9")

    def __init__(self) -> None:
        self.ports: list[dict[str, Any]] = []
        self.seen = threading.Event()

    def port_update(self, context: Any, **kwargs: Any) -> None:
        self.ports.append(kwargs["port"])
        self.seen.set()


class InProcess:
    def __init__(self, tmp: Path) -> None:
        url = f"sqlite:///{tmp / 'aio.sqlite'}"
        migrate.upgrade(url)
        path = tmp / "neutron.conf"
        path.write_text(
            f"[DEFAULT]\nauth_strategy = noauth\nhost = {HOST}\ntransport_url = fake://\n"
            f"[database]\nconnection = {url}\n"
            "[ml2]\ntype_drivers = vxlan\ntenant_network_types = vxlan\n"
            "mechanism_drivers = openvswitch\n[ml2_type_vxlan]\nvni_ranges = 10:20\n")
        self.conf = make_conf(["--config-file", str(path)])
        self.api = build_api(self.conf)
        self.api.plugin.initialize()
        self.rpc = rpc_service(self.conf, self.api)
        self.http = testing.TestClient(build_falcon(self.api))

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        result = self.http.simulate_post(path, json=body)
        assert result.status_code == 201, result.text
        return result.json


@pytest.fixture(scope="module")
def bus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcess]:
    aio = InProcess(tmp_path_factory.mktemp("inprocess"))
    aio.rpc.start()
    try:
        yield aio
    finally:
        aio.rpc.stop()
        close_in_process()
        aio.api.plugin.db.dispose()


def test_fake_url_means_one_transport_for_the_whole_process(bus: InProcess) -> None:
    assert in_process(bus.conf)
    other = make_conf(["--config-file", bus.conf.config_file[0]])
    assert rpc_transport(other) is rpc_transport(bus.conf)


@pytest.mark.parametrize("line, url, inside", [
    ("transport_url = fake://\n", "fake://", True),
    ("transport_url = rabbit://guest:guest@127.0.0.1:5672/\n",
     "rabbit://guest:guest@127.0.0.1:5672/", False),
    ("transport_url =\n", None, False),
    ("", None, False)])
def test_only_a_written_fake_url_selects_the_in_process_bus(
        tmp_path: Path, line: str, url: str | None, inside: bool) -> None:
    from neutrino.rpc.transport import configured_url
    path = tmp_path / "n.conf"
    path.write_text(f"[DEFAULT]\n{line}")
    conf = make_conf(["--config-file", str(path)])
    assert (configured_url(conf), in_process(conf)) == (url, inside)


def test_state_report_device_details_and_port_update_travel_in_process(
        bus: InProcess) -> None:
    agent = OvsAgent(bus.conf)
    updates = PortUpdates()
    listener = oslo_messaging.get_rpc_server(
        rpc_transport(bus.conf), oslo_messaging.Target(topic=topics.PORT_UPDATE, server=HOST),
        [updates])
    listener.start()
    plugin_api = PluginApi(bus.conf, agent_id=f"ovs-{HOST}", host=HOST)
    try:
        assert agent.register(within=30) == "new"
        net = bus.post("/v2.0/networks", {"network": {"name": "n"}})["network"]
        bus.post("/v2.0/subnets", {"subnet": {"network_id": net["id"], "ip_version": 4,
                                              "cidr": "10.9.0.0/24"}})
        port = bus.post("/v2.0/ports", {"port": {
            "network_id": net["id"], "binding:host_id": HOST,
            "device_owner": "compute:nova", "device_id": "vm"}})["port"]
        assert port["binding:vif_type"] == "ovs"

        details = plugin_api.get_device_details(port["id"])
        assert (details["network_id"], details["network_type"]) == (net["id"], "vxlan")
        assert details["mac_address"] == port["mac_address"]

        result = bus.http.simulate_put(f"/v2.0/ports/{port['id']}",
                                       json={"port": {"admin_state_up": False}})
        assert result.status_code == 200, result.text
        assert updates.seen.wait(10)
        assert updates.ports[-1]["id"] == port["id"]
        assert updates.ports[-1]["admin_state_up"] is False
    finally:
        plugin_api.close()
        listener.stop()
        listener.wait()
        agent.stop()
    # agents' own cleanup() on stop leaves the shared bus working
    assert agent.register(within=30) == "alive"
    agent.stop()

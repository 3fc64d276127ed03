"""The OVS agent hears from its switch: a VIF plugged into br-int wakes the
agent's loop, so the port is wired (and reported up) at once rather than at
the next polling interval; the agent's own writes wake nobody."""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Iterator

import pytest

from neutrino.agents.ovs.agent import OvsAgent
from neutrino.agents.ovs.ovsctl import OvsCtl
from tests.fullstack.hosts import Fabric, Host, needs_ovs, ovs_rundir
from tests.rpc.bus import agent_conf
from tests.waiting import wait_for

pytestmark = needs_ovs()
# Longer than any wait below: a port wired in time was woken, not polled.
POLLING = 600


@pytest.fixture(scope="module")
def host(fabric: Fabric) -> Iterator[Host]:
    host = fabric.host("w")
    with ovs_rundir(host.dir):
        host.vsctl("add-br", "br-int", "--", "set", "bridge", "br-int",
                   "datapath_type=netdev", "fail-mode=secure")
        yield host


class Answerer:
    """The server's side of the agent's calls, recording them (no RPC)."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.up: list[str] = []

    def get_devices_details_list_and_failed_devices(self, devices: list[str]) -> dict[str, Any]:
        self.asked += devices
        return {"devices": [{"device": d, "port_id": d, "network_id": "net-w",
                             "network_type": "vxlan", "segmentation_id": 1001,
                             "physical_network": None, "admin_state_up": True}
                            for d in devices], "failed_devices": []}

    def update_device_list(self, up: list[str], down: list[str], **kw: Any) -> dict[str, Any]:
        self.up += up
        return {"failed_devices_up": []}

    def tunnel_sync(self, ip: str, kind: str) -> dict[str, Any]:
        return {"tunnels": []}

    def get_ports_by_vnic_type_and_host(self, vnic_type: str) -> list[dict[str, Any]]:
        return []


def plug(host: Host, name: str, port_id: str) -> None:
    host.vsctl("add-port", "br-int", name, "--", "set", "interface", name, "type=internal",
               f"external_ids:iface-id={port_id}", "external_ids:attached-mac=fa:16:3e:00:77:01")


def test_a_vif_wakes_its_watchers_and_the_agents_own_writes_do_not(host: Host) -> None:
    ovs = OvsCtl()
    woken = threading.Event()
    unwatch = ovs.watch_vifs(woken.set)
    try:
        plug(host, "wk1", "port-wk1")
        assert wait_for(woken.is_set, 10)
        assert wait_for(lambda: [p.name for p in ovs.vif_ports("br-int")] == ["wk1"], 10)
        woken.clear()
        # a tag and QoS shaping: the agent's writes, each waited for like ovs-vsctl
        ovs.set_port_tags([("wk1", 7, {"net_uuid": "net-w"})])
        ovs.set_port_shaping("wk1", 1000, 100)
        ovs.set_port_shaping("wk1", None)
        assert not woken.is_set()
        unwatch()
        ovs.delete_port("br-int", "wk1")
        assert not woken.is_set()
    finally:
        unwatch()


def test_an_agent_polling_every_ten_minutes_wires_a_plugged_port_at_once(
        host: Host, vhost: str, tmp_path: Path) -> None:
    conf = agent_conf(tmp_path, vhost, "wakeful",
                      "[ovs]\nlocal_ip = 10.0.0.1\ndatapath_type = netdev\n"
                      f"[agent]\ntunnel_types = vxlan\npolling_interval = {POLLING}\n"
                      "report_interval = 0\n")
    server = Answerer()
    agent = OvsAgent(conf, plugin_rpc=server)
    stop = threading.Event()
    loop = threading.Thread(target=agent.run, args=(stop,), daemon=True)
    loop.start()
    try:
        assert wait_for(lambda: agent._passes >= 1, 30)
        plug(host, "wk2", "port-wk2")
        assert wait_for(lambda: "port-wk2" in server.up, 30)
        asked = server.asked.count("port-wk2")
        agent.mark_dirty("port-wk2")  # a port_update from the server wakes it too
        assert wait_for(lambda: server.asked.count("port-wk2") > asked, 30)
    finally:
        stop.set()
        loop.join(30)
        host.vsctl("--if-exists", "del-port", "br-int", "wk2")
    assert not loop.is_alive()

"""The Linux bridge agent's loop against the package's in-memory host and an
in-memory server: what it bridges, what it refuses, and which VXLAN
forwarding entries it keeps."""
from __future__ import annotations

from typing import Any

from oslo_config import cfg

from neutrino.agents.linuxbridge.agent import LinuxBridgeAgent
from neutrino.agents.linuxbridge.host import FLOOD_MAC
from neutrino.agents.linuxbridge.memory_host import MemoryHost
from neutrino.conf.agents import linuxbridge as config

NET, PORT, VLAN_PORT = "n" * 36, "p" * 36, "v" * 36
LOCAL, PEER = "10.98.0.1", "10.98.0.2"


class FakeServer:
    def __init__(self) -> None:
        self.ports = {PORT[:11]: {"port_id": PORT, "network_id": NET, "network_type": "vxlan",
                                  "segmentation_id": 1001, "admin_state_up": True},
                      VLAN_PORT[:11]: {"port_id": VLAN_PORT, "network_id": "m" * 36,
                                       "network_type": "vlan", "segmentation_id": 100,
                                       "physical_network": "physnet1",
                                       "admin_state_up": True}}
        self.up: list[str] = []
        self.down: list[str] = []
        self.asked: list[list[str]] = []

    def get_devices_details_list_and_failed_devices(self, devices: list[str]) -> dict[str, Any]:
        self.asked.append(devices)
        return {"devices": [{"device": d, **self.ports.get(d, {})} for d in devices],
                "failed_devices": []}

    def tunnel_sync(self, tunnel_ip: str, tunnel_type: str) -> dict[str, Any]:
        return {"tunnels": [{"ip_address": PEER, "host": "h2"}]}

    def update_device_list(self, up: list[str], down: list[str]) -> dict[str, Any]:
        self.up += up
        self.down += down
        return {"failed_devices_up": []}


def _agent(host: MemoryHost, server: FakeServer, l2pop: bool = True,
           group: str | None = None) -> LinuxBridgeAgent:
    conf = cfg.ConfigOpts()
    conf.register_opt(cfg.StrOpt("host", default="h1"))
    config.register(conf)
    conf([], default_config_files=[])
    conf.set_override("local_ip", LOCAL, "VXLAN")
    conf.set_override("l2_population", l2pop, "VXLAN")
    conf.set_override("vxlan_group", group, "VXLAN")
    conf.set_override("firewall_driver", "noop", "SECURITYGROUP")
    return LinuxBridgeAgent(conf, plugin_rpc=server, linux=host)  # type: ignore[arg-type]


def test_vxlan_port_is_bridged_and_reported_up_and_a_vlan_port_is_left_alone() -> None:
    tap, vlan_tap = "tap" + PORT[:11], "tap" + VLAN_PORT[:11]
    host, server = MemoryHost(tap, vlan_tap), FakeServer()
    agent = _agent(host, server)
    assert agent.configurations()["network_types"] == ["local", "flat", "vxlan"]
    agent.run_once()
    assert host.state[tap]["master"] == "brq" + NET[:11]
    assert host.state["vxlan-1001"]["master"] == "brq" + NET[:11]
    assert "master" not in host.state[vlan_tap]
    assert server.up == [PORT[:11]]


def test_l2pop_entries_of_other_hosts_become_forwarding_entries_and_its_own_are_ignored() -> None:
    tap = "tap" + PORT[:11]
    host, server = MemoryHost(tap), FakeServer()
    agent = _agent(host, server)
    agent.run_once()
    agent.fdb_changed({NET: {"segment_id": 1001, "network_type": "vxlan", "ports": {
        LOCAL: [[FLOOD_MAC, "0.0.0.0"], ["fa:16:3e:00:00:01", "10.0.0.1"]],
        "10.98.0.3": [[FLOOD_MAC, "0.0.0.0"], ["fa:16:3e:00:00:03", "10.0.0.3"]]}}}, add=True)
    agent.run_once()
    assert host.fdbs["vxlan-1001"] == {(FLOOD_MAC, PEER), (FLOOD_MAC, "10.98.0.3"),
                                      ("fa:16:3e:00:00:03", "10.98.0.3")}
    assert host.neigh["vxlan-1001"] == {"10.0.0.3": "fa:16:3e:00:00:03"}


def test_a_network_whose_last_tap_goes_loses_its_bridge_and_vxlan_device() -> None:
    tap = "tap" + PORT[:11]
    host, server = MemoryHost(tap), FakeServer()
    agent = _agent(host, server)
    agent.run_once()
    host.unplug(tap)
    assert agent.run_once()["down"] == [PORT[:11]]
    assert "brq" + NET[:11] not in host.state and "vxlan-1001" not in host.state


def test_a_vxlan_group_carries_floods_by_multicast_and_macs_are_learned() -> None:
    tap = "tap" + PORT[:11]
    host, server = MemoryHost(tap), FakeServer()
    _agent(host, server, l2pop=False, group="239.1.1.1").run_once()
    vx = host.vxlans["vxlan-1001"]
    assert (vx.vni, vx.local_ip, vx.group, vx.learning) == (1001, LOCAL, "239.1.1.1", True)
    assert host.fdbs["vxlan-1001"] == set()  # no unicast flooding to tunnel_sync's peers


def test_a_revived_agent_asks_the_server_for_all_its_taps_again() -> None:
    """Casts sent while the server took the agent for dead were lost."""
    from tests.unit.test_ovs_agent_loop import RevivingReports
    host, server = MemoryHost("tap" + PORT[:11]), FakeServer()
    agent = _agent(host, server)
    agent.run_once()
    agent.run_once()
    assert server.asked == [[PORT[:11]]]  # nothing changed: nothing asked
    agent._client = RevivingReports()
    assert agent.report_state() == "revived"
    agent.run_once()
    assert server.asked == [[PORT[:11]], [PORT[:11]]]
    agent.run_once()
    assert len(server.asked) == 2  # once

"""l2population on the OVS agent: forwarding entries in, tunnel ports and br-tun flows out."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from neutrino.agents.ovs import l2pop
from neutrino.agents.ovs.agent import L2populationEndpoint, OvsAgent
from neutrino.agents.ovs.flows import LocalNet
from neutrino.agents.ovs.memory_switch import MemorySwitch
from neutrino.agents.ovs.switch import VifPort
from tests.rpc.bus import agent_conf
from tests.unit.test_ovs_agent_loop import MemoryServer, _details

FLOOD = ["00:00:00:00:00:00", "0.0.0.0"]
NET = LocalNet("net-a", "vxlan", 1001, None, 1)


def _entries(ports: dict[str, list[list[str]]], net: str = "net-a") -> dict[str, Any]:
    return {net: {"segment_id": 1001, "network_type": "vxlan", "ports": ports}}


def test_only_peers_that_asked_for_flooding_get_the_networks_broadcasts() -> None:
    fdb = l2pop.Fdb("10.0.0.1")
    fdb.add(_entries({"10.0.0.2": [FLOOD, ["fa:16:3e:00:00:02", "10.1.0.2"]],
                      "10.0.0.3": [["fa:16:3e:00:00:03", "10.1.0.3"]],
                      "10.0.0.1": [FLOOD]}))  # our own endpoint is ignored
    assert set(l2pop.wanted_tunnels(fdb, [NET])) == {"vxlan-0a000002", "vxlan-0a000003"}
    got = l2pop.fdb_flows(fdb, [NET], False, {"vxlan-0a000002", "vxlan-0a000003"})
    flood = [f for f in got if f.table == 22]
    assert [f.actions for f in flood] == ["strip_vlan,set_tunnel:0x3e9,output:vxlan-0a000002"]
    unicast = {f.match: f.actions for f in got if f.table == 20}
    assert unicast["dl_vlan=1,dl_dst=fa:16:3e:00:00:03"].endswith("output:vxlan-0a000003")
    assert not [f for f in got if f.table == l2pop.ARP_RESPONDER]


def test_flows_never_name_a_tunnel_port_that_does_not_exist_yet() -> None:
    fdb = l2pop.Fdb("10.0.0.1")
    fdb.add(_entries({"10.0.0.2": [FLOOD, ["fa:16:3e:00:00:02", "10.1.0.2"]]}))
    assert not [f for f in l2pop.fdb_flows(fdb, [NET], True, set()) if "output:" in f.actions]


def test_arp_responder_answers_for_remote_ipv4_addresses() -> None:
    fdb = l2pop.Fdb("10.0.0.1")
    fdb.add(_entries({"10.0.0.2": [FLOOD, ["fa:16:3e:00:00:02", "10.1.0.2"],
                                   ["fa:16:3e:00:00:02", "fd00::2"]]}))
    got = l2pop.fdb_flows(fdb, [NET], True, {"vxlan-0a000002"})
    arp = [f for f in got if f.table == l2pop.ARP_RESPONDER and f.priority == 1]
    assert [f.match for f in arp] == ["arp,dl_vlan=1,arp_op=1,arp_tpa=10.1.0.2"]
    assert "load:0xfa163e000002->NXM_NX_ARP_SHA[]" in arp[0].actions
    assert "load:0xa010002->NXM_OF_ARP_SPA[]" in arp[0].actions
    assert any(f.table == 2 and "arp" in f.match for f in got)


def test_removing_a_hosts_last_entries_drops_it_and_ip_changes_move_addresses() -> None:
    fdb = l2pop.Fdb("10.0.0.1")
    fdb.add(_entries({"10.0.0.2": [FLOOD, ["fa:16:3e:00:00:02", "10.1.0.2"]]}))
    fdb.update({"chg_ip": {"net-a": {"10.0.0.2": {"before": [["fa:16:3e:00:00:02", "10.1.0.2"]],
                                                  "after": [["fa:16:3e:00:00:02", "10.1.0.9"]]}}}})
    assert fdb.nets["net-a"].peers["10.0.0.2"] == {tuple(FLOOD), ("fa:16:3e:00:00:02", "10.1.0.9")}
    fdb.remove(_entries({"10.0.0.2": [FLOOD, ["fa:16:3e:00:00:02", "10.1.0.9"]]}))
    assert l2pop.wanted_tunnels(fdb, [NET]) == {}


class Server(MemoryServer):
    def __init__(self, details: dict[str, dict[str, Any]]) -> None:
        super().__init__(details)
        self.synced = 0
        self.refresh: list[bool] = []

    def tunnel_sync(self, ip: str, kind: str) -> dict[str, Any]:
        self.synced += 1
        return super().tunnel_sync(ip, kind)

    def update_device_list(self, up: list[str], down: list[str],
                           refresh_tunnels: bool = False) -> dict[str, Any]:
        self.refresh.append(refresh_tunnels)
        return super().update_device_list(up, down)


def _l2pop_agent(tmp: Path, switch: MemorySwitch, server: MemoryServer) -> OvsAgent:
    conf = agent_conf(tmp, None, "h1", "[ovs]\nlocal_ip = 10.0.0.1\n[agent]\n"
                                      "tunnel_types = vxlan\nl2_population = true\n")
    agent = OvsAgent(conf, ovs=switch, plugin_rpc=server)  # type: ignore[arg-type]
    agent.setup_bridges()
    return agent


def test_with_l2pop_tunnels_follow_the_casts_and_tunnel_sync_is_never_polled(
        tmp_path: Path) -> None:
    switch = MemorySwitch([VifPort("tap-a", "a", "m", 1, None, {})])
    server = Server({"a": _details("a", "net-a", 1001)})
    agent = _l2pop_agent(tmp_path, switch, server)
    assert agent.configurations()["l2_population"] is True
    agent.run_once()
    assert server.refresh == [True]  # the first pass asks for the full entries
    endpoint = L2populationEndpoint(agent)
    endpoint.add_fdb_entries({}, fdb_entries=_entries(
        {"10.0.0.2": [FLOOD, ["fa:16:3e:00:00:02", "10.1.0.2"]]}))
    for _ in range(6):
        agent.run_once()
    assert server.synced == 0
    assert ("tunnel", "vxlan-0a000002") in switch.journal
    tun = switch.flows["br-tun"]
    assert tun["table=22,priority=1,dl_vlan=1"].endswith("output:vxlan-0a000002")
    assert "table=20,priority=2,dl_vlan=1,dl_dst=fa:16:3e:00:00:02" in tun
    endpoint.remove_fdb_entries({}, fdb_entries=_entries(
        {"10.0.0.2": [FLOOD, ["fa:16:3e:00:00:02", "10.1.0.2"]]}))
    agent.run_once()
    assert ("del", "vxlan-0a000002") in switch.journal
    assert "table=22,priority=1,dl_vlan=1" not in switch.flows["br-tun"]
    assert not [k for k in switch.flows["br-tun"] if k.startswith("table=20,priority=2")]

"""The OVS agent's loop, by what it asks its adapters (the package's in-memory
switch and an in-memory server)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from neutrino.agents.ovs.agent import NotifierEndpoint, OvsAgent
from neutrino.agents.ovs.memory_switch import MemorySwitch
from neutrino.agents.ovs.switch import VifPort
from tests.rpc.bus import agent_conf


class MemoryServer:
    def __init__(self, details: dict[str, dict[str, Any]]) -> None:
        self.details = details
        self.reported: list[tuple[list[str], list[str]]] = []
        self.details_asked: list[list[str]] = []
        self.bound: list[dict[str, Any]] = []  # the ports bound to the agent's host
        self.bound_asked = 0

    def get_devices_details_list_and_failed_devices(self, devices: list[str]) -> dict[str, Any]:
        self.details_asked.append(devices)
        return {"devices": [self.details.get(d, {"device": d}) for d in devices],
                "failed_devices": []}

    def update_device_list(self, up: list[str], down: list[str],
                           refresh_tunnels: bool = False) -> dict[str, Any]:
        self.reported.append((up, down))
        return {"failed_devices_up": []}

    def tunnel_sync(self, ip: str, kind: str) -> dict[str, Any]:
        return {"tunnels": [{"ip_address": "10.0.0.2", "host": "h2"}]}

    def get_ports_by_vnic_type_and_host(self, vnic_type: str) -> list[dict[str, Any]]:
        self.bound_asked += 1
        return self.bound


def _details(port: str, net: str, vni: int) -> dict[str, Any]:
    return {"device": port, "port_id": port, "network_id": net, "network_type": "vxlan",
            "segmentation_id": vni, "physical_network": None, "admin_state_up": True}


def _agent(tmp: Path, switch: MemorySwitch, server: MemoryServer) -> OvsAgent:
    conf = agent_conf(tmp, None, "h1", "[ovs]\nlocal_ip = 10.0.0.1\n"
                                      "[agent]\ntunnel_types = vxlan\n")
    agent = OvsAgent(conf, ovs=switch, plugin_rpc=server)  # type: ignore[arg-type]
    agent.setup_bridges()
    return agent


def test_a_restart_keeps_the_local_vlans_an_earlier_run_gave(tmp_path: Path) -> None:
    # port "a" (net-a) was on VLAN 2 and "b" (net-b) on VLAN 3 before the restart;
    # the server answers about "a" first
    switch = MemorySwitch([VifPort("tap-a", "a", "m", 1, 2, {"net_uuid": "net-a"}),
                           VifPort("tap-b", "b", "m", 2, 3, {"net_uuid": "net-b"})])
    server = MemoryServer({"a": _details("a", "net-a", 1001), "b": _details("b", "net-b", 1002)})
    agent = _agent(tmp_path, switch, server)
    agent.run_once()
    assert not [c for c in switch.journal if c[0] == "tag"]  # tags already right
    assert server.reported == [(["a", "b"], [])]
    assert "table=4,priority=1,tun_id=0x3e9" in switch.flows["br-tun"]
    assert switch.flows["br-tun"]["table=4,priority=1,tun_id=0x3e9"].endswith(
        "mod_vlan_vid:2,resubmit(,10)")


def test_stale_flows_go_new_ports_are_tagged_and_gone_ones_reported_down(
        tmp_path: Path) -> None:
    switch = MemorySwitch([VifPort("tap-a", "a", "m", 1, None, {})])
    switch.flows["br-int"] = {"table=9,priority=9": "cookie=0x5,table=9,priority=9,actions=drop"}
    server = MemoryServer({"a": _details("a", "net-a", 1001), "c": _details("c", "net-a", 1001)})
    agent = _agent(tmp_path, switch, server)
    agent.run_once()
    assert ("tag", "tap-a", 1) in switch.journal and ("tunnel", "vxlan-0a000002") in switch.journal
    assert "table=9,priority=9" not in switch.flows["br-int"]  # an earlier run's flow
    assert switch.cookies("br-int") == {agent.cookie}
    switch.plug("br-int", VifPort("tap-c", "c", "m", 3, None, {}))
    switch.unplug("tap-a")
    agent.run_once()
    assert ("tag", "tap-c", 1) in switch.journal
    assert server.reported[-1] == (["c"], ["a"])
    switch.unplug("tap-c")
    agent.run_once()
    assert server.reported[-1] == ([], ["c"])
    assert not [k for k in switch.flows["br-tun"] if "tun_id" in k]  # network gone here


def test_unknown_or_foreign_ports_are_parked_on_the_dead_vlan(tmp_path: Path) -> None:
    switch = MemorySwitch([VifPort("tap-x", "x", "m", 1, None, {})])
    agent = _agent(tmp_path, switch, MemoryServer({}))
    agent.run_once()
    assert ("tag", "tap-x", 4095) in switch.journal


def test_a_port_update_marks_the_port_for_the_next_pass(tmp_path: Path) -> None:
    from neutrino.agents.ovs.agent import NotifierEndpoint
    switch = MemorySwitch([VifPort("tap-a", "a", "m", 1, None, {})])
    server = MemoryServer({"a": _details("a", "net-a", 1001)})
    agent = _agent(tmp_path, switch, server)
    agent.run_once()
    server.details["a"] = {**server.details["a"], "admin_state_up": False}
    agent.run_once()
    assert server.reported == [(["a"], [])]  # nothing re-read without a notification
    NotifierEndpoint(agent).port_update({}, port={"id": "a"}, network_type="vxlan")
    agent.run_once()
    assert server.reported[-1] == ([], ["a"]) and ("tag", "tap-a", 4095) in switch.journal


class SecurityServer(MemoryServer):
    """Also answers security_group_info_for_devices; records what was asked."""

    def __init__(self, details: dict[str, dict[str, Any]], groups: dict[str, list[str]]) -> None:
        super().__init__(details)
        self.groups = groups  # port -> its groups
        self.rules: dict[str, list[dict[str, Any]]] = {}
        self.asked: list[list[str]] = []

    def security_group_info_for_devices(self, devices: list[str]) -> dict[str, Any]:
        self.asked.append(devices)
        return {"devices": {d: {"id": d, "mac_address": "fa:16:3e:00:00:0a",
                                "fixed_ips": ["10.0.0.3"], "port_security_enabled": True,
                                "security_groups": self.groups[d],
                                "security_group_source_groups": ["sg-r"]}
                            for d in devices if d in self.groups},
                "security_groups": {g: self.rules.get(g, [])
                                    for d in devices for g in self.groups.get(d, [])},
                "sg_member_ips": {}}


def _sg_agent(tmp: Path, switch: MemorySwitch, server: MemoryServer) -> OvsAgent:
    conf = agent_conf(tmp, None, "h1", "[securitygroup]\nfirewall_driver = openvswitch\n")
    agent = OvsAgent(conf, ovs=switch, plugin_rpc=server)  # type: ignore[arg-type]
    agent.setup_bridges()
    return agent


def test_the_firewall_programs_security_flows_and_rereads_ports_the_fanouts_name(
        tmp_path: Path) -> None:
    from neutrino.agents.ovs.agent import SecurityGroupEndpoint
    switch = MemorySwitch([VifPort("tap-a", "a", "m", 1, None, {}),
                           VifPort("tap-b", "b", "m", 2, None, {})])
    server = SecurityServer({"a": _details("a", "net-a", 1001),
                             "b": _details("b", "net-a", 1001)}, {"a": ["sg-a"], "b": ["sg-b"]})
    agent = _sg_agent(tmp_path, switch, server)
    agent.run_once()
    assert server.asked == [["a", "b"]]
    flows = switch.flows["br-int"]
    assert "table=60,priority=100,in_port=tap-a" in flows
    assert "ct(table=72,zone=1)" in flows[
        "table=71,priority=90,in_port=tap-a,dl_src=fa:16:3e:00:00:0a,ip,nw_src=10.0.0.3/32"]
    endpoint = SecurityGroupEndpoint(agent)
    server.rules["sg-b"] = [{"direction": "ingress", "ethertype": "IPv4", "protocol": "tcp",
                             "port_range_min": 22, "port_range_max": 22}]
    endpoint.security_groups_rule_updated({}, security_groups=["sg-b"])
    agent.run_once()
    assert server.asked[-1] == ["b"]  # only the group's port is re-read
    assert [k for k in switch.flows["br-int"] if "reg5=2,tcp,tp_dst=22" in k]
    endpoint.security_groups_member_updated({}, security_groups=["sg-r"])
    agent.run_once()
    assert server.asked[-1] == ["a", "b"]  # both name sg-r as remote
    agent.run_once()
    assert len(server.asked) == 3  # nothing new, nothing asked


def test_noop_firewall_asks_nothing_and_adds_no_security_flows(tmp_path: Path) -> None:
    switch = MemorySwitch([VifPort("tap-a", "a", "m", 1, None, {})])
    server = SecurityServer({"a": _details("a", "net-a", 1001)}, {"a": ["sg-a"]})
    agent = _agent(tmp_path, switch, server)
    agent.run_once()
    assert server.asked == []
    assert not [k for k in switch.flows["br-int"] if k.startswith(("table=71", "table=81"))]
def test_a_resync_after_a_failed_pass_still_removes_flows_of_networks_gone_meanwhile(
        tmp_path: Path) -> None:
    switch = MemorySwitch([VifPort("tap-a", "a", "m", 1, None, {})])
    server = MemoryServer({"a": _details("a", "net-a", 1001)})
    agent = _agent(tmp_path, switch, server)
    agent.run_once()
    assert [k for k in switch.flows["br-tun"] if "tun_id=0x3e9" in k]
    agent.resync()  # what the loop does after a pass raised (e.g. a port vanished)
    switch.unplug("tap-a")
    agent.run_once()
    assert server.reported[-1] == ([], ["a"])
    assert not [k for k in switch.flows["br-tun"] if "tun_id" in k]


def test_a_full_resync_asks_device_details_in_chunks_and_reports_once(tmp_path: Path) -> None:
    from neutrino.agents.ovs.agent import DETAILS_CHUNK

    class Counting(MemoryServer):
        calls: list[int] = []

        def get_devices_details_list_and_failed_devices(self, devices: list[str]
                                                        ) -> dict[str, Any]:
            self.calls.append(len(devices))
            return super().get_devices_details_list_and_failed_devices(devices)

    count = DETAILS_CHUNK * 2 + 5
    ports = [VifPort(f"tap-{i}", f"p{i}", "m", i + 1, None, {}) for i in range(count)]
    server = Counting({f"p{i}": _details(f"p{i}", f"net-{i % 7}", 1000 + i % 7)
                       for i in range(count)})
    agent = _agent(tmp_path, MemorySwitch(ports), server)
    agent.run_once()
    assert server.calls == [DETAILS_CHUNK, DETAILS_CHUNK, 5]
    assert len(server.reported) == 1 and len(server.reported[0][0]) == count


class RevivingReports:
    """The server's answer to a report from an agent it had taken for dead."""

    def call(self, *a: Any, **k: Any) -> str:
        return "revived"


def test_a_revived_agent_asks_the_server_for_all_its_ports_again(tmp_path: Path) -> None:
    """Casts sent while the server took the agent for dead were lost."""
    switch = MemorySwitch([VifPort("tap-a", "a", "m", 1, None, {})])
    server = MemoryServer({"a": _details("a", "net-a", 1001)})
    agent = _agent(tmp_path, switch, server)
    agent.run_once()
    agent.run_once()
    assert server.details_asked == [["a"]]  # nothing changed: nothing asked
    agent._client = RevivingReports()
    assert agent.report_state() == "revived"
    agent.run_once()
    assert server.details_asked == [["a"], ["a"]]
    agent.run_once()
    assert server.details_asked == [["a"], ["a"]]  # once


class LocalIpServer(MemoryServer):
    def __init__(self, details: dict[str, dict[str, Any]],
                 associations: list[dict[str, Any]]) -> None:
        super().__init__(details)
        self.associations = associations
        self.pulls = 0

    def local_ip_associations(self) -> list[dict[str, Any]]:
        self.pulls += 1
        if self.associations is None:
            raise RuntimeError("server down")
        return self.associations


def _association(port: str, lip: str, fixed: str) -> dict[str, Any]:
    return {"local_ip_id": f"lip-{lip}", "fixed_port_id": port, "fixed_ip": fixed,
            "local_ip_address": lip, "ip_mode": "translate", "host": "h1"}


def _answers_for(switch: MemorySwitch) -> set[str]:
    return {k.split("arp_tpa=")[1] for k in switch.flows["br-int"]
            if k.startswith("table=31,") and "arp_tpa=" in k}


def test_local_ip_associations_pulled_at_start_and_pushed_later_become_flows(
        tmp_path: Path) -> None:
    switch = MemorySwitch([VifPort("tap-a", "a", "fa:16:3e:00:00:0a", 1, None, {})])
    server = LocalIpServer({"a": _details("a", "net-a", 1001)},
                           [_association("a", "10.0.0.200", "10.0.0.5"),
                            _association("elsewhere", "10.0.0.201", "10.0.0.6")])
    conf = agent_conf(tmp_path, None, "h1", "[ovs]\nlocal_ip = 10.0.0.1\n"
                      "[agent]\ntunnel_types = vxlan\nextensions = local_ip\n")
    agent = OvsAgent(conf, ovs=switch, plugin_rpc=server)  # type: ignore[arg-type]
    agent.setup_bridges()
    agent.run_once()
    assert server.pulls == 1 and _answers_for(switch) == {"10.0.0.200"}
    agent.local_ips_pushed([_association("a", "10.0.0.202", "10.0.0.5")], deleted=False)
    agent.run_once()
    assert server.pulls == 1 and _answers_for(switch) == {"10.0.0.200", "10.0.0.202"}
    agent.local_ips_pushed([_association("a", "10.0.0.200", "10.0.0.5")], deleted=True)
    agent.run_once()
    assert _answers_for(switch) == {"10.0.0.202"}
    switch.unplug("tap-a")
    agent.run_once()
    assert _answers_for(switch) == set()
    # plugged again (an instance back on this host): its associations still hold
    switch.plug("br-int", VifPort("tap-a", "a", "fa:16:3e:00:00:0a", 4, None, {}))
    agent.run_once()
    assert _answers_for(switch) == {"10.0.0.202"}
    # deleted on the server: its associations went with it
    NotifierEndpoint(agent).port_delete({}, port_id="a")
    assert "a" not in agent.local_ips


def test_a_failed_pull_of_local_ip_associations_is_tried_again(tmp_path: Path) -> None:
    switch = MemorySwitch([VifPort("tap-a", "a", "fa:16:3e:00:00:0a", 1, None, {})])
    server = LocalIpServer({"a": _details("a", "net-a", 1001)}, None)  # type: ignore[arg-type]
    conf = agent_conf(tmp_path, None, "h1", "[ovs]\nlocal_ip = 10.0.0.1\n"
                      "[agent]\ntunnel_types = vxlan\nextensions = local_ip\n")
    agent = OvsAgent(conf, ovs=switch, plugin_rpc=server)  # type: ignore[arg-type]
    agent.setup_bridges()
    agent.run_once()
    assert _answers_for(switch) == set()
    server.associations = [_association("a", "10.0.0.200", "10.0.0.5")]
    agent.run_once()
    assert server.pulls == 2 and _answers_for(switch) == {"10.0.0.200"}
    agent.run_once()
    assert server.pulls == 2



def _bound(pid: str, status: str = "ACTIVE", vif_type: str = "ovs") -> dict[str, Any]:
    return {"id": pid, "status": status, "binding:vif_type": vif_type}


def test_a_restart_reports_down_the_bound_ports_whose_device_is_gone(tmp_path: Path) -> None:
    """"gone" lost its device while the agent was down; "b" is plugged, "down"
    is DOWN already and "lb" belongs to another kind of agent of the host."""
    switch = MemorySwitch([VifPort("tap-b", "b", "m", 1, None, {})])
    server = MemoryServer({"b": _details("b", "net-a", 1001)})
    server.bound = [_bound("b"), _bound("gone"), _bound("down", status="DOWN"),
                    _bound("lb", vif_type="bridge")]
    agent = _agent(tmp_path, switch, server)
    agent.run_once()
    assert server.reported == [(["b"], ["gone"])]
    agent.run_once()  # not a full pass: the server is not asked again
    assert server.bound_asked == 1

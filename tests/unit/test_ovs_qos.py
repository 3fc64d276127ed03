"""The OVS agent's qos extension: a port's policy in, meters, shaping and flows out."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from neutrino.agents.ovs import qos
from neutrino.agents.ovs.agent import OvsAgent, QosPushEndpoint
from neutrino.agents.ovs.memory_switch import MemorySwitch
from neutrino.agents.ovs.switch import VifPort
from tests.rpc.bus import agent_conf
from tests.unit.test_ovs_agent_loop import MemoryServer, _details


def _policy(pid: str, *rules: dict[str, Any]) -> dict[str, Any]:
    return {"id": pid, "rules": list(rules)}


def _bw(kbps: int, direction: str = "egress", burst: int = 0) -> dict[str, Any]:
    return {"type": "bandwidth_limit", "max_kbps": kbps, "max_burst_kbps": burst,
            "direction": direction}


def test_bandwidth_limits_split_by_direction_and_burst_defaults_to_80_percent() -> None:
    got = qos.port_qos(_policy("p", _bw(1000), _bw(2000, "ingress", 300),
                               {"type": "dscp_marking", "dscp_mark": 26}))
    assert got == qos.PortQos(qos.Limit(1000, 800), qos.Limit(2000, 300), 26)
    assert qos.port_qos(None).empty


def test_egress_limit_and_dscp_are_br_int_entry_flows_through_the_ports_meter() -> None:
    flows = qos.entry_flows("tap-a", 7, qos.PortQos(qos.Limit(1000, 800), None, 26))
    assert {(f.match, f.actions) for f in flows} == {
        ("in_port=tap-a", "meter:7,resubmit(,60)"),
        ("in_port=tap-a,ip", "meter:7,mod_nw_tos:104,resubmit(,60)"),
        ("in_port=tap-a,ipv6", "meter:7,mod_nw_tos:104,resubmit(,60)")}
    assert qos.entry_flows("tap-a", 7, qos.PortQos(None, qos.Limit(1, 1))) == []
    assert qos.meter_spec(7, qos.Limit(1000, 800)) == (
        "meter=7,kbps,burst,band=type=drop,rate=1000,burst_size=800")


class QosServer(MemoryServer):
    def __init__(self, details: dict[str, dict[str, Any]],
                 policies: dict[str, dict[str, Any]]) -> None:
        super().__init__(details)
        self.policies = policies
        self.pulled: list[list[str]] = []

    def qos_policies(self, ids: list[str]) -> list[dict[str, Any]]:
        self.pulled.append(ids)
        return [self.policies[i] for i in ids if i in self.policies]


def test_a_ports_policy_is_pulled_once_enforced_and_updated_live_by_push(tmp_path: Path) -> None:
    switch = MemorySwitch([VifPort("tap-a", "a", "m", 3, None, {})])
    server = QosServer({"a": {**_details("a", "net-a", 1001), "qos_policy_id": "pol"}},
                       {"pol": _policy("pol", _bw(1000), _bw(5000, "ingress"))})
    conf = agent_conf(tmp_path, None, "h1", "[agent]\nextensions = qos\n")
    agent = OvsAgent(conf, ovs=switch, plugin_rpc=server)  # type: ignore[arg-type]
    agent.setup_bridges()
    agent.run_once()
    agent.run_once()
    assert server.pulled == [["pol"]]
    assert switch.meters("br-int")[3] == (1000, 800)
    assert switch.shaping == {"tap-a": (5000, 4000)}
    assert "meter:3,resubmit(,60)" in switch.flows["br-int"]["table=0,priority=5,in_port=tap-a"]
    push = QosPushEndpoint(agent)
    push.push({}, resource_list=[_policy("pol", _bw(2000, "ingress"))], event_type="updated")
    agent.run_once()
    assert switch.meters("br-int") == {} and switch.shaping == {"tap-a": (2000, 1600)}
    assert "table=0,priority=5,in_port=tap-a" not in switch.flows["br-int"]
    assert server.pulled == [["pol"]]  # the push carried the policy


def test_a_policy_detached_from_the_port_removes_its_limits(tmp_path: Path) -> None:
    from neutrino.agents.ovs.agent import NotifierEndpoint
    switch = MemorySwitch([VifPort("tap-a", "a", "m", 3, None, {})])
    server = QosServer({"a": {**_details("a", "net-a", 1001), "network_qos_policy_id": "pol"}},
                       {"pol": _policy("pol", _bw(1000), _bw(5000, "ingress"))})
    conf = agent_conf(tmp_path, None, "h1", "[agent]\nextensions = qos\n")
    agent = OvsAgent(conf, ovs=switch, plugin_rpc=server)  # type: ignore[arg-type]
    agent.setup_bridges()
    agent.run_once()
    assert 3 in switch.meters("br-int") and "tap-a" in switch.shaping  # the network's policy
    server.details["a"] = _details("a", "net-a", 1001)
    NotifierEndpoint(agent).port_update({}, port={"id": "a"})
    agent.run_once()
    assert switch.meters("br-int") == {} and switch.shaping == {}

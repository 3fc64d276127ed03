"""``trace --live``'s server side (``plugins/trace/live.py``): which agents
are asked what about the model's path, and how their answers are set
beside the model's hops, with no host (the agents' answers are given)."""
from __future__ import annotations

from typing import Any

from neutrino.plugins.trace import live
from neutrino.plugins.trace.model import Facts, Packet, trace

NET, SUB, NET2, SUB2 = "net-a", "sub-a", "net-b", "sub-b"


def _port(pid: str, ip: str, host: str, net: str = NET, sub: str = SUB,
          **attrs: Any) -> dict[str, Any]:
    return {"id": pid, "network_id": net, "mac_address": f"fa:16:3e:00:00:{pid[-1]}",
            "fixed_ips": [{"subnet_id": sub, "ip_address": ip}], "security_groups": ["sg"],
            "device_owner": "compute:nova", "binding:host_id": host, **attrs}


def _rule(rid: str, direction: str) -> dict[str, Any]:
    return {"id": rid, "security_group_id": "sg", "direction": direction,
            "ethertype": "IPv4", "protocol": None, "port_range_min": None,
            "port_range_max": None, "remote_ip_prefix": None, "remote_group_id": None}


SUBNETS = [{"id": SUB, "network_id": NET, "cidr": "10.0.0.0/24", "gateway_ip": "10.0.0.1"},
           {"id": SUB2, "network_id": NET2, "cidr": "10.0.1.0/24", "gateway_ip": "10.0.1.1"}]
RULES = [_rule("out", "egress"), _rule("in", "ingress")]
FORWARDED = {"verdict": "forwarded", "datapath_actions": "2"}
ROUTER = [{"id": "r", "routes": [], "external_gateway_info": None}]


def _interface(pid: str, ip: str, net: str, sub: str) -> dict[str, Any]:
    return _port(pid, ip, "net-node", net, sub, device_owner="network:router_interface",
                 device_id="r", security_groups=[])


FACTS = Facts(ports=[_port("a1", "10.0.0.5", "compute-1"), _port("b2", "10.0.0.6", "compute-2"),
                     _port("c3", "10.0.1.7", "compute-2", NET2, SUB2),
                     _interface("ri4", "10.0.0.1", NET, SUB),
                     _interface("ri5", "10.0.1.1", NET2, SUB2)],
              subnets=SUBNETS, rules=RULES, routers=ROUTER)


class Agents:
    """Answers as given, per (topic, host); records what was asked."""

    def __init__(self, answers: dict[tuple[str, str], dict[str, Any]]) -> None:
        self.answers = answers
        self.asked: list[tuple[str, str, dict[str, Any]]] = []

    def __call__(self, topic: str, host: str, packet: dict[str, Any]) -> dict[str, Any]:
        self.asked.append((topic, host, packet))
        return self.answers.get((topic, host), FORWARDED)


def _run(packet: Packet, agents: Agents, tunnel_ips: dict[str, str] | None = None
         ) -> dict[str, Any]:
    return live.run(FACTS, packet, trace(FACTS, packet), agents, tunnel_ips)


def test_a_switched_packet_asks_the_source_and_destination_hosts_switches() -> None:
    agents = Agents({})
    answer = _run(Packet("10.0.0.6", "tcp", 22, port_id="a1"), agents,
                  {"compute-1": "192.0.2.1", "compute-2": "192.0.2.2"})
    assert [(t, h, p["direction"]) for t, h, p in agents.asked] == [
        (live.OVS, "compute-1", "egress"), (live.OVS, "compute-2", "ingress")]
    egress, ingress = agents.asked[0][2], agents.asked[1][2]
    assert egress["dl_dst"] == "fa:16:3e:00:00:2" and egress["destination_port"] == 22
    assert ingress["from_port_id"] == "a1" and ingress["nw_dst"] == "10.0.0.6"
    assert ingress["from_tunnel_ip"] == "192.0.2.1"  # it arrives by compute-1's tunnel
    assert answer["agrees"] and answer["verdict"] == "allowed"
    assert all(h["live"]["verdict"] == "passed" for h in answer["hops"])


def test_a_routed_packet_asks_the_router_s_host_entering_by_its_interface() -> None:
    agents = Agents({(live.L3, "net-node"): {"verdict": "forwarded", "hops": [
        {"kind": "dnat", "detail": "none"},
        {"kind": "route", "detail": "out of qr-ri5", "device": "qr-ri5"},
        {"kind": "snat", "detail": "untranslated"}]}})
    answer = _run(Packet("10.0.1.7", "icmp", port_id="a1"), agents)
    router = next(p for t, h, p in agents.asked if t == live.L3)
    assert router == {"router_id": "r", "in_port_id": "ri4", "from_gateway": False,
                      "nw_src": "10.0.0.5", "nw_dst": "10.0.1.7", "protocol": "icmp",
                      "destination_port": None}
    arriving = agents.asked[-1][2]
    assert arriving["from_port_id"] == "ri5" and arriving["dl_src"] == "fa:16:3e:00:00:5"
    assert answer["agrees"], answer


def test_a_drop_the_model_does_not_expect_is_named_with_its_table() -> None:
    dropped = {"verdict": "dropped", "dropped_at": {
        "bridge": "br-int", "table": 72, "flow": "any packet, priority 0",
        "stage": "security_group_egress"}}
    answer = _run(Packet("10.0.0.6", "icmp", port_id="a1"),
                  Agents({(live.OVS, "compute-1"): dropped}))
    assert answer["verdict"] == "denied" and not answer["agrees"]
    by_kind = {h["kind"]: h for h in answer["hops"]}
    assert by_kind["port_security"]["live"]["verdict"] == "passed"
    assert by_kind["security_group_egress"]["live"]["verdict"] == "dropped"
    assert by_kind["network"]["live"]["verdict"] == "not reached"
    assert answer["disagreements"] == [
        "security_group_egress: the model passes it (egress rule out of security group sg "
        "allows it); host compute-1 drops it at br-int table 72 (flow: any packet, priority 0)"]


def test_a_packet_the_model_denies_but_a_host_forwards_is_a_disagreement() -> None:
    facts = Facts(ports=FACTS.ports, subnets=SUBNETS, rules=[_rule("out", "egress")],
                  routers=ROUTER)
    packet = Packet("10.0.0.6", "icmp", port_id="a1")
    answer = live.run(facts, packet, trace(facts, packet), Agents({}))
    assert answer["verdict"] == "allowed" and not answer["agrees"]
    assert answer["disagreements"][0].startswith("security_group_ingress: the model says denied")


def test_an_agent_that_cannot_answer_is_named_and_nothing_is_claimed_for_its_hops() -> None:
    answer = _run(Packet("10.0.0.6", "icmp", port_id="a1"),
                  Agents({(live.OVS, "compute-2"): {"error": "the agent on compute-2 did not "
                                                             "answer within 20s"}}))
    assert not answer["agrees"]
    assert answer["hops"][-1]["live"]["verdict"] == "unknown"
    assert "destination: the agent on compute-2 did not answer within 20s" in (
        answer["disagreements"])


def test_a_hairpin_through_a_floating_ip_arrives_from_the_router_with_the_gateway_ip() -> None:
    router = {"id": "r", "routes": [], "external_gateway_info": {
        "network_id": "ext", "enable_snat": True,
        "external_fixed_ips": [{"ip_address": "172.24.4.5"}]}}
    fip = {"id": "f", "floating_ip_address": "172.24.4.20", "fixed_ip_address": "10.0.0.6",
           "port_id": "b2", "router_id": "r"}
    facts = Facts(ports=FACTS.ports, subnets=SUBNETS, rules=RULES, routers=[router],
                  floatingips=[fip])
    packet = Packet("172.24.4.20", "icmp", port_id="a1")
    agents = Agents({})
    live.run(facts, packet, trace(facts, packet), agents)
    arriving = agents.asked[-1][2]
    assert arriving["direction"] == "ingress" and arriving["from_port_id"] == "ri4"
    assert (arriving["nw_src"], arriving["nw_dst"]) == ("172.24.4.5", "10.0.0.6")

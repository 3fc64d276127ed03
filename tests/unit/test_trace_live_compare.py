"""``trace --live``'s server side (``plugins/trace/legs.py``, ``live.py``):
which agents are asked what about the model's path (for legacy, HA and
distributed routers: which host, which namespace), and how their answers
are set beside the model's hops, with no host (the agents' answers are
given)."""
from __future__ import annotations

from typing import Any

from neutrino.plugins.trace import live
from neutrino.plugins.trace.legs import L3, OVS
from neutrino.plugins.trace.model import Facts, Packet, trace
from neutrino.plugins.trace.placement import Binding, Placement

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
LEGACY = {"r": Placement("r", bindings=(Binding("net-node"),))}


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
        return self.answers.get((topic, host, packet.get("namespace")),
                                self.answers.get((topic, host), FORWARDED))

    def l3(self) -> list[tuple[str, str, dict[str, Any]]]:
        """The L3 questions: (host, namespace kind, packet)."""
        return [(h, p["namespace"], p) for t, h, p in self.asked if t == L3]


def _run(packet: Packet, agents: Agents, tunnel_ips: dict[str, str] | None = None,
         facts: Facts = FACTS, placements: dict[str, Placement] | None = None
         ) -> dict[str, Any]:
    return live.run(facts, packet, trace(facts, packet), agents, tunnel_ips,
                    LEGACY if placements is None else placements)


def test_a_switched_packet_asks_the_source_and_destination_hosts_switches() -> None:
    agents = Agents({})
    answer = _run(Packet("10.0.0.6", "tcp", 22, port_id="a1"), agents,
                  {"compute-1": "192.0.2.1", "compute-2": "192.0.2.2"})
    assert [(t, h, p["direction"]) for t, h, p in agents.asked] == [
        (OVS, "compute-1", "egress"), (OVS, "compute-2", "ingress")]
    egress, ingress = agents.asked[0][2], agents.asked[1][2]
    assert egress["dl_dst"] == "fa:16:3e:00:00:2" and egress["destination_port"] == 22
    assert ingress["from_port_id"] == "a1" and ingress["nw_dst"] == "10.0.0.6"
    assert ingress["from_tunnel_ip"] == "192.0.2.1"  # it arrives by compute-1's tunnel
    assert answer["agrees"] and answer["verdict"] == "allowed"
    assert all(h["live"]["verdict"] == "passed" for h in answer["hops"])


def test_a_routed_packet_asks_the_router_s_host_entering_by_its_interface() -> None:
    agents = Agents({(L3, "net-node"): {"verdict": "forwarded", "hops": [
        {"kind": "dnat", "detail": "none"},
        {"kind": "route", "detail": "out of qr-ri5", "device": "qr-ri5"},
        {"kind": "snat", "detail": "untranslated"}]}})
    answer = _run(Packet("10.0.1.7", "icmp", port_id="a1"), agents)
    router = next(p for t, h, p in agents.asked if t == L3)
    assert router == {"router_id": "r", "namespace": "qrouter", "in_port_id": "ri4",
                      "from_gateway": False, "nw_src": "10.0.0.5", "nw_dst": "10.0.1.7",
                      "protocol": "icmp", "destination_port": None}
    arriving = agents.asked[-1][2]
    assert arriving["from_port_id"] == "ri5" and arriving["dl_src"] == "fa:16:3e:00:00:5"
    assert answer["agrees"], answer


def test_a_drop_the_model_does_not_expect_is_named_with_its_table() -> None:
    dropped = {"verdict": "dropped", "dropped_at": {
        "bridge": "br-int", "table": 72, "flow": "any packet, priority 0",
        "stage": "security_group_egress"}}
    answer = _run(Packet("10.0.0.6", "icmp", port_id="a1"),
                  Agents({(OVS, "compute-1"): dropped}))
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
    answer = live.run(facts, packet, trace(facts, packet), Agents({}), placements=LEGACY)
    assert answer["verdict"] == "allowed" and not answer["agrees"]
    assert answer["disagreements"][0].startswith("security_group_ingress: the model says denied")


def test_an_agent_that_cannot_answer_is_named_and_nothing_is_claimed_for_its_hops() -> None:
    answer = _run(Packet("10.0.0.6", "icmp", port_id="a1"),
                  Agents({(OVS, "compute-2"): {"error": "the agent on compute-2 did not "
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
    live.run(facts, packet, trace(facts, packet), agents, placements=LEGACY)
    arriving = agents.asked[-1][2]
    assert arriving["direction"] == "ingress" and arriving["from_port_id"] == "ri4"
    assert (arriving["nw_src"], arriving["nw_dst"]) == ("172.24.4.5", "10.0.0.6")


# -- HA and distributed routers: which host and namespace are asked -------------------

def _l3(*hops: tuple[str, str, dict[str, Any]], verdict: str = "forwarded"
        ) -> dict[str, Any]:
    """An L3 agent's answer: (kind, detail, more of the hop) per hop."""
    return {"verdict": verdict, "hops": [{"kind": k, "detail": d, **more} for k, d, more in hops]}


ROUTED = _l3(("dnat", "none", {}), ("route", "out of qr-ri5", {"device": "qr-ri5"}),
             ("snat", "untranslated", {}))


def test_an_ha_router_is_asked_on_its_active_agent_s_host() -> None:
    ha = {"r": Placement("r", ha=True, bindings=(Binding("net-1", "standby"),
                                                  Binding("net-2", "active")))}
    agents = Agents({(L3, "net-2"): ROUTED})
    answer = _run(Packet("10.0.1.7", "icmp", port_id="a1"), agents, placements=ha)
    assert [(h, ns) for h, ns, _ in agents.l3()] == [("net-2", "qrouter")]
    assert answer["agrees"], answer


def test_an_ha_router_with_no_active_agent_asks_no_standby_and_says_so() -> None:
    standby = {"r": Placement("r", ha=True, bindings=(Binding("net-1", "standby"),
                                                       Binding("net-2", "standby")))}
    agents = Agents({})
    answer = _run(Packet("10.0.1.7", "icmp", port_id="a1"), agents, placements=standby)
    assert agents.l3() == []
    assert not answer["agrees"]
    route = next(h for h in answer["hops"] if h["kind"] == "route")
    assert route["live"]["verdict"] == "unknown"
    assert answer["by_host"]["no host"] == [
        "router: no L3 agent of HA router r is active (net-1: standby, net-2: standby): "
        "a standby does not route, so none was asked"]


def _distributed(pid: str, ip: str, net: str, sub: str) -> dict[str, Any]:
    return _port(pid, ip, "", net, sub, device_owner="network:router_interface_distributed",
                 device_id="r", security_groups=[])


DVR_ROUTER = {"id": "r", "routes": [], "distributed": True, "external_gateway_info": {
    "network_id": "ext", "enable_snat": True, "external_fixed_ips": [{"ip_address": "172.24.4.5"}]}}
FIP = {"id": "f", "floating_ip_address": "172.24.4.20", "fixed_ip_address": "10.0.0.6",
       "port_id": "b2", "router_id": "r", "floating_network_id": "ext"}
DVR_FACTS = Facts(
    ports=[_port("a1", "10.0.0.5", "compute-1"), _port("b2", "10.0.0.6", "compute-2"),
           _port("c3", "10.0.1.7", "compute-2", NET2, SUB2),
           _distributed("ri4", "10.0.0.1", NET, SUB), _distributed("ri5", "10.0.1.1", NET2, SUB2),
           _port("sn6", "10.0.0.3", "net-node", device_owner="network:router_centralized_snat",
                 device_id="r", security_groups=[]),
           _port("gw7", "172.24.4.5", "net-node", "ext", "ext-sub",
                 device_owner="network:router_gateway", device_id="r", security_groups=[]),
           _port("fg8", "172.24.4.9", "compute-2", "ext", "ext-sub",
                 device_owner="network:floatingip_agent_gateway", device_id="agent-2",
                 security_groups=[])],
    subnets=SUBNETS, rules=RULES, routers=[DVR_ROUTER], floatingips=[FIP])
DVR = {"r": Placement("r", distributed=True, bindings=(Binding("net-node"),))}


def _dvr(packet: Packet, agents: Agents) -> dict[str, Any]:
    return _run(packet, agents, facts=DVR_FACTS, placements=DVR)


def test_a_distributed_router_routes_east_west_on_the_source_port_s_host() -> None:
    agents = Agents({(L3, "compute-1"): ROUTED})
    answer = _dvr(Packet("10.0.1.7", "icmp", port_id="a1"), agents)
    assert [(h, ns, p.get("in_port_id")) for h, ns, p in agents.l3()] == [
        ("compute-1", "qrouter", "ri4")]
    route = next(h for h in answer["hops"] if h["kind"] == "route")
    assert route["live"]["host"] == "compute-1"
    assert answer["agrees"], answer


SNATTED = _l3(("dnat", "none", {}), ("route", "out of qg-gw7", {"device": "qg-gw7"}),
              ("snat", "snat to 172.24.4.5", {"translated_source": "172.24.4.5"}))
TO_SNAT_NODE = _l3(("dnat", "none", {}), ("route", "out of qr-ri4 via 10.0.0.3",
                                          {"device": "qr-ri4"}), ("snat", "untranslated", {}))


def test_snat_of_a_distributed_router_is_asked_on_the_snat_node_s_snat_namespace() -> None:
    agents = Agents({(L3, "net-node", "snat"): SNATTED, (L3, "compute-1"): TO_SNAT_NODE})
    answer = _dvr(Packet("198.51.100.7", "icmp", port_id="a1"), agents)
    assert [(h, ns, p.get("in_port_id")) for h, ns, p in agents.l3()] == [
        ("compute-1", "qrouter", "ri4"), ("net-node", "snat", "sn6")]
    hosts = {h["kind"]: h.get("live", {}).get("host") for h in answer["hops"]}
    assert hosts["snat"] == hosts["external_gateway"] == "net-node"
    assert answer["agrees"], answer


def test_a_snat_rule_missing_on_the_snat_node_is_a_disagreement_of_that_host() -> None:
    untranslated = _l3(("dnat", "none", {}), ("route", "out of qg-gw7", {"device": "qg-gw7"}),
                       ("snat", "the source 10.0.0.5 leaves untranslated", {}))
    agents = Agents({(L3, "net-node", "snat"): untranslated, (L3, "compute-1"): TO_SNAT_NODE})
    answer = _dvr(Packet("198.51.100.7", "icmp", port_id="a1"), agents)
    assert not answer["agrees"]
    assert list(answer["by_host"]) == ["net-node"]
    assert answer["by_host"]["net-node"][0].startswith("snat: the model passes it")
    assert "leaves untranslated" in answer["by_host"]["net-node"][0]


def test_a_distributed_router_copy_that_cannot_reach_the_snat_node_is_named() -> None:
    no_route = _l3(("dnat", "none", {}), ("route", "no route to 198.51.100.7: Network is "
                                          "unreachable", {}), verdict="dropped")
    agents = Agents({(L3, "net-node", "snat"): SNATTED,
                     (L3, "compute-1"): {**no_route, "namespace": "qrouter-r"}})
    answer = _dvr(Packet("198.51.100.7", "icmp", port_id="a1"), agents)
    assert answer["verdict"] == "unreachable" and not answer["agrees"]
    assert answer["by_host"]["compute-1"] == [
        "router: the model passes it; host compute-1 drops it in qrouter-r: no route to "
        "198.51.100.7: Network is unreachable"]


def test_a_floating_ip_leaves_by_its_instance_s_host_qrouter_then_fip_namespace() -> None:
    agents = Agents({
        (L3, "compute-2", "qrouter"): _l3(("dnat", "none", {}), ("route", "out of rfp-r", {
            "device": "rfp-r"}), ("snat", "to 172.24.4.20", {"translated_source": "172.24.4.20"})),
        (L3, "compute-2", "fip"): _l3(("dnat", "none", {}), ("route", "out of fg-fg8", {
            "device": "fg-fg8"}), ("snat", "untranslated", {}))})
    answer = _dvr(Packet("198.51.100.7", "icmp", port_id="b2"), agents)
    asked = {ns: (h, p) for h, ns, p in agents.l3()}
    assert set(asked) == {"qrouter", "fip"}
    assert asked["fip"][0] == "compute-2" and asked["fip"][1]["nw_src"] == "172.24.4.20"
    assert asked["fip"][1]["external_network_id"] == "ext"
    assert not asked["fip"][1]["from_gateway"]
    assert answer["agrees"], answer


def test_a_floating_ip_is_let_in_by_its_instance_s_host_fip_then_qrouter_namespace() -> None:
    agents = Agents({
        (L3, "compute-2", "fip"): _l3(("dnat", "none", {}), ("route", "out of fpr-r", {
            "device": "fpr-r"}), ("snat", "untranslated", {})),
        (L3, "compute-2", "qrouter"): _l3(("dnat", "to 10.0.0.6", {
            "translated_destination": "10.0.0.6"}), ("route", "out of qr-ri4", {
                "device": "qr-ri4"}), ("snat", "untranslated", {}))})
    answer = _dvr(Packet("172.24.4.20", "icmp", source_ip="198.51.100.7"), agents)
    (fip_host, _, fip), (router_host, _, router) = agents.l3()
    assert (fip_host, fip["namespace"], fip["in_port_id"], fip["from_gateway"]) == (
        "compute-2", "fip", "fg8", True)
    assert (router_host, router["namespace"], router["from_fip"]) == (
        "compute-2", "qrouter", True)
    assert agents.asked[-1][:2] == (OVS, "compute-2")  # then delivered on that host
    assert answer["agrees"], answer


def test_a_hairpin_through_a_distributed_router_leaves_by_snat_and_comes_back_by_fip() -> None:
    agents = Agents({})
    _dvr(Packet("172.24.4.20", "icmp", port_id="a1"), agents)
    assert [(h, ns) for h, ns, _ in agents.l3()] == [
        ("compute-1", "qrouter"), ("net-node", "snat"), ("compute-2", "fip"),
        ("compute-2", "qrouter")]
    back_in = agents.l3()[2][2]
    assert (back_in["nw_src"], back_in["nw_dst"], back_in["from_gateway"]) == (
        "172.24.4.5", "172.24.4.20", True)

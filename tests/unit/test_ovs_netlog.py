"""Security-group logging's pure model: which logs cover which ports, the
log flows a logged port gets, packet-ins to upstream's lines, and the rate
limit as a function of time."""
from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from neutrino.agents.ovs import netlog, packet_log, plan
from neutrino.agents.ovs.switch import VifPort
from tests.unit.test_ovs_firewall import SG, _info

PROJECT = "proj"


def _answer(log_id: str, event: str, *ports: str, group: str = SG) -> dict[str, Any]:
    rules = [{"direction": "ingress", "ethertype": "IPv4", "security_group_id": group}]
    return {"id": log_id, "event": event, "project_id": PROJECT,
            "ports_log": [{"port_id": p, "security_group_rules": rules} for p in ports]}


def test_a_ports_answer_names_the_logs_that_cover_it_and_no_other() -> None:
    logs = netlog.with_log_answer({}, ["L1", "L2"], [_answer("L1", "ALL", "p1", "p2"),
                                                     _answer("L2", "DROP", "p1")])
    after = netlog.with_port_answer(logs, "p1", [_answer("L1", "ALL", "p1")])
    assert after == {"L1": netlog.LogInfo("L1", "ALL", PROJECT, frozenset({"p1", "p2"}),
                                          (("p1", frozenset({SG})), ("p2", frozenset({SG}))))}
    assert netlog.with_port_answer(after, "p3", [_answer("L3", "ACCEPT", "p3")])[
        "L3"].ports == {"p3"}


def test_a_log_answered_without_ports_or_deleted_covers_nothing() -> None:
    logs = netlog.with_log_answer({}, ["L1"], [_answer("L1", "ALL", "p1")])
    assert netlog.with_log_answer(logs, ["L1"], []) == {}
    assert netlog.without(logs, ["L1"]) == {}


def test_each_port_has_its_logs_by_event_and_one_cookie_per_event() -> None:
    logs = netlog.with_log_answer({}, ["A", "B"], [_answer("A", "ACCEPT", "p1"),
                                                   _answer("B", "ALL", "p1", "p2")])
    ports = netlog.port_logs(logs)
    assert ports["p1"] == netlog.PortLog("p1", PROJECT, ("A", "B"), ("B",), frozenset({SG}))
    assert ports["p2"] == netlog.PortLog("p2", PROJECT, ("B",), ("B",), frozenset({SG}))
    table = netlog.cookies(ports)
    assert table[netlog.cookie("p1", "ACCEPT")].log_ids == ("A", "B")
    assert table[netlog.cookie("p1", "DROP")] == netlog.CookieEntry("DROP", "p1", PROJECT,
                                                                    ("B",))
    assert len(table) == 4 and all(c % 2 == 0 and c for c in table)  # never a run's cookie


def test_packet_ins_are_read_from_ofctl_monitor_output() -> None:
    out = ["NXT_PACKET_IN2 (xid=0x0): cookie=0x1234 total_len=98 in_port=1 (via action) "
           "data_len=98 (unbuffered)\n",
           "icmp,vlan_tci=0x0000,nw_src=10.5.0.1,nw_dst=10.5.0.2,icmp_type=8 icmp_csum:9715\n",
           "OFPT_PORT_STATUS (xid=0x0): MOD: 1(tap)\n",
           " config:     0\n"]
    assert list(netlog.packet_ins(out)) == [netlog.PacketIn(
        0x1234, "icmp,vlan_tci=0x0000,nw_src=10.5.0.1,nw_dst=10.5.0.2,icmp_type=8 "
                "icmp_csum:9715")]


def test_a_record_reads_as_upstreams_line() -> None:
    entry = netlog.CookieEntry("DROP", "p1", PROJECT, ("L1",))
    pkt = netlog.PacketIn(4, "udp,nw_src=10.0.0.1")
    assert netlog.record(entry, pkt) == (
        "action=DROP project_id=proj log_resource_ids=['L1'] vm_port=p1 "
        "pkt=udp,nw_src=10.0.0.1")
    assert netlog.record(None, pkt) == "Unknown cookie=4 packet_in pkt=udp,nw_src=10.0.0.1"


def test_the_rate_limit_allows_a_burst_then_the_rate() -> None:
    limit = netlog.RateLimit.full(rate=100, burst=25)
    allowed = 0
    for _ in range(40):  # 40 packets at one instant: the burst passes
        ok, limit = limit.take(10.0)
        allowed += ok
    assert allowed == 25
    ok, limit = limit.take(10.005)  # half a token later: still refused
    assert not ok
    ok, limit = limit.take(10.011)  # a whole token since: one more
    assert ok
    ok, limit = limit.take(20.0)  # a long pause refills no more than the burst
    assert ok and limit.tokens == 24


# -- the plan ---------------------------------------------------------------------------

SETTINGS = plan.Settings(firewall=True, netlog=True, cookie=0x7)


def _logged_plan(logs: dict[str, netlog.LogInfo], settings: plan.Settings = SETTINGS
                 ) -> plan.Plan:
    vif = VifPort("tap1", "p1", "fa:16:3e:00:00:01", 5, None, {})
    seen = plan.Observed({"p1": vif}, full=True, cookies={"br-int": {
        0x3, 0x7, netlog.cookie("p1", "DROP")}})
    details = {"device": "p1", "port_id": "p1", "network_id": "n", "network_type": "flat",
               "segmentation_id": None, "physical_network": "physnet1",
               "admin_state_up": True}
    return plan.plan(settings, plan.Known(), seen, plan.Answers(
        [details], security=_info(), logs=logs))


def _flows(p: plan.Plan) -> list[Any]:
    return [f for c in p.flows if c.bridge == "br-int" for f in c.add]


def test_a_logged_ports_rules_copy_accepted_packets_under_the_accept_cookie() -> None:
    logs = netlog.with_log_answer({}, ["L"], [_answer("L", "ACCEPT", "p1")])
    accept = netlog.cookie("p1", "ACCEPT")
    rules = [f for f in _flows(_logged_plan(logs)) if f.priority == 70]
    assert rules and all(f.cookie == accept and ",controller," in f.actions for f in rules)
    assert not [f for f in _flows(_logged_plan(logs)) if f.actions == "controller"]


def test_only_the_rules_of_the_groups_a_log_covers_copy_what_they_accept() -> None:
    logs = netlog.with_log_answer({}, ["L"], [_answer("L", "ACCEPT", "p1", group="sg-9")])
    assert not [f for f in _flows(_logged_plan(logs)) if "controller" in f.actions]


def test_a_logged_port_sends_what_no_rule_accepts_to_the_controller() -> None:
    logs = netlog.with_log_answer({}, ["L"], [_answer("L", "DROP", "p1")])
    drop = netlog.cookie("p1", "DROP")
    p = _logged_plan(logs)
    assert {(f.table, f.priority, f.match, f.actions, f.cookie) for f in _flows(p)
            if f.cookie} == {(72, 1, "in_port=tap1", "controller", drop),
                             (82, 1, "reg5=5", "controller", drop)}
    # a restart keeps the log flows' cookie and purges only other runs' flows
    assert [c.purge_cookies for c in p.flows if c.bridge == "br-int"] == [[0x3]]
    assert "cookie=" + hex(drop) in [f.spec(0x7) for f in _flows(p) if f.cookie][0]


def test_without_the_extension_or_a_log_no_packet_is_copied() -> None:
    logs = netlog.with_log_answer({}, ["L"], [_answer("L", "ALL", "p1")])
    for p in (_logged_plan({}), _logged_plan(logs, replace(SETTINGS, netlog=False))):
        assert not [f for f in _flows(p) if f.cookie or "controller" in f.actions]


# -- the packet log -------------------------------------------------------------------

class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_packet_ins_are_written_as_log_lines_within_the_rate_limit(tmp_path: Any) -> None:
    path = tmp_path / "sg.log"
    clock = _Clock()
    log = packet_log.PacketLog(100, 25, packet_log.packet_logger(str(path)), clock)
    log.cookies = {6: netlog.CookieEntry("ACCEPT", "p1", PROJECT, ("L1",))}
    header = "NXT_PACKET_IN2 (xid=0x0): cookie=0x6 total_len=98 in_port=1\n"
    log.handle([header, "icmp,nw_src=10.0.0.1\n"] * 30)
    clock.now += 1.0
    log.handle([header.replace("0x6", "0x8"), "udp,nw_src=10.0.0.1\n"])
    for handler in logging.getLogger(packet_log.PACKETS).handlers:
        handler.flush()
    lines = path.read_text().splitlines()
    assert len(lines) == 26
    assert lines[0].endswith("INFO neutron.services.logapi.drivers.openvswitch."
                             "ovs_firewall_log [-] action=ACCEPT project_id=proj "
                             "log_resource_ids=['L1'] vm_port=p1 pkt=icmp,nw_src=10.0.0.1")
    assert "WARNING" in lines[-1] and "Unknown cookie=8 packet_in" in lines[-1]

"""``neutrino audit``'s comparison and the OVS agent's realised state, without hosts."""
from __future__ import annotations

from typing import Any

from neutrino.agents.ovs import audit as agent_audit
from neutrino.agents.ovs.flows import Flow
from neutrino.agents.ovs.plan import Known, Wired
from neutrino.agents.ovs.switch import VifPort
from neutrino.cmd.audit import differences

COOKIE = 0x5


def _vif(pid: str, tag: int | None) -> VifPort:
    return VifPort(f"tap{pid}", pid, "fa:16:3e:00:00:01", 3, tag)


def _known() -> Known:
    return Known(vlans={"net": 1}, wired={"p1": Wired(_vif("p1", 1), "net", True)},
                 programmed={"br-int": frozenset({Flow(0, 1, "in_port=3", "drop"),
                                                  Flow(0, 2, "", "NORMAL"),
                                                  Flow(9, 1, "", "drop", cookie=7)})})


def test_an_intact_host_reports_what_the_database_expects() -> None:
    report = agent_audit.realised(_known(), {"p1": _vif("p1", 1)},
                                  {"br-int": {COOKIE: 2, 7: 1}}, COOKIE)
    assert report["flows"] == {"br-int": {"programmed": 2, "present": 2}}
    assert differences("h", {"p1"}, report) == []


def test_each_kind_of_drift_is_one_line() -> None:
    report = agent_audit.realised(_known(), {"p1": _vif("p1", 9), "stray": _vif("stray", None)},
                                  {"br-int": {COOKIE: 1}}, COOKIE)
    lines = differences("h", {"p1", "p2"}, report)
    assert lines == [
        "h: port p2 is bound here but the agent has not wired it",
        "h: port p1 is tagged 9 on the switch, the agent set local VLAN 1",
        "h: br-int has a port for stray, which the agent has not wired "
        "(a stray port, or one the server does not bind here)",
        "h: br-int holds 1 flows under the agent's cookie, it programmed 2",
    ]


def test_a_port_gone_from_the_switch_and_a_silent_agent_are_differences() -> None:
    report = agent_audit.realised(_known(), {}, {"br-int": {COOKIE: 2}}, COOKIE)
    assert differences("h", set(), report) == [
        "h: port p1 is wired but no longer bound to this host",
        "h: port p1 is gone from br-int"]
    assert differences("h", {"p1"}, None) == ["h: the agent did not answer"]


def test_dnsmasq_host_lines_give_their_mac_and_address() -> None:
    from neutrino.agents.dhcp.audit import host_entries
    text = ("fa:16:3e:00:00:01,host-10-0-0-5.example.,10.0.0.5\n"
            "FA:16:3E:00:00:02,set:v6,host-fd00--7,[fd00::7],set:port-x\n"
            "fa:16:3e:00:00:03,set:port-y\n")
    assert host_entries(text) == [["fa:16:3e:00:00:01", "10.0.0.5"],
                                  ["fa:16:3e:00:00:02", "fd00::7"]]


def test_dhcp_drift_names_the_network_and_the_entry() -> None:
    from neutrino.cmd.audit import dhcp_differences
    served = {"n1": {("m1", "10.0.0.5"), ("m2", "10.0.0.6")}, "n2": set()}
    report = {"networks": {
        "n1": {"namespace": True, "dnsmasq": True,
               "hosts": [["m1", "10.0.0.5"], ["m9", "10.0.0.9"]]},
        "n3": {"namespace": False, "dnsmasq": False, "hosts": []}}}
    assert dhcp_differences("h", served, report) == [
        "h: dnsmasq of network n1 has no host entry m2 10.0.0.6",
        "h: dnsmasq of network n1 has a stale host entry m9 10.0.0.9",
        "h: network n2 is scheduled here but not served",
        "h: network n3 is served here but not scheduled here"]


def test_router_namespace_addresses_and_drift() -> None:
    from neutrino.agents.l3.audit import namespace_addresses
    from neutrino.cmd.audit import l3_differences
    text = ("1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever\n"
            "2: qr-1    inet 10.0.0.1/24 brd 10.0.0.255 scope global qr-1\n"
            "3: qg-2    inet6 fd00::1/64 scope global \\       valid_lft forever\n")
    assert namespace_addresses(text) == ["10.0.0.1", "127.0.0.1", "fd00::1"]
    report = {"routers": {"r1": {"addresses": ["10.0.0.1"],
                                 "nat": ["snat to 172.24.4.2", "dnat 172.24.4.7 to 10.0.0.7"]},
                          "r9": {"addresses": []}}}
    wanted = {"routers": {"r1": {"addresses": {"10.0.0.1", "172.24.4.9"},
                                 "nat": {"snat to 172.24.4.2", "dnat 172.24.4.9 to 10.0.0.5"}},
                          "r2": {"addresses": set(), "nat": set()}}}
    assert l3_differences("h", wanted, report) == [
        "h: router r1 lacks address 172.24.4.9",
        "h: router r1 lacks NAT dnat 172.24.4.9 to 10.0.0.5",
        "h: router r1 has NAT dnat 172.24.4.7 to 10.0.0.7 it should not",
        "h: namespace qrouter-r2 is missing",
        "h: namespace qrouter-r9 is here but the router is not scheduled here"]
    assert l3_differences("h", {}, None) == ["h: the L3 agent did not answer"]


def test_a_router_table_s_translations_in_audit_s_words() -> None:
    """What ``nft -j list table`` shows of the table ``agents/l3/nat.py``
    writes: each floating IP's DNAT and SNAT, the gateway's SNAT once
    (however many rules do it), each port forwarding's DNAT with its ports."""
    from neutrino.agents.l3.audit import translations

    def rule(chain: str, *expr: dict[str, Any]) -> dict[str, Any]:
        return {"rule": {"family": "ip", "table": "neutrino_l3", "chain": chain,
                         "expr": list(expr)}}

    def match(field: str, right: Any) -> dict[str, Any]:
        return {"match": {"op": "==", "left": {"payload": {"protocol": "ip", "field": field}},
                          "right": right}}
    ruleset = {"nftables": [
        {"chain": {"family": "ip", "table": "neutrino_l3", "name": "prerouting"}},
        rule("prerouting", match("daddr", "172.24.4.9"), {"dnat": {"addr": "10.0.0.5"}}),
        rule("prerouting", match("daddr", "172.24.4.8"),
             {"match": {"op": "==", "left": {"payload": {"protocol": "tcp", "field": "dport"}},
                        "right": 80}}, {"dnat": {"addr": "10.0.0.6", "port": 8080}}),
        rule("prerouting", match("daddr", "172.24.4.8"),
             {"match": {"op": "==", "left": {"payload": {"protocol": "udp", "field": "dport"}},
                        "right": {"range": [8000, 8010]}}},
             {"dnat": {"addr": "10.0.0.6", "port": {"range": [9000, 9010]}}}),
        rule("postrouting", match("saddr", "10.0.0.5"), {"snat": {"addr": "172.24.4.9"}}),
        rule("postrouting", match("saddr", {"set": [{"prefix": {"addr": "10.0.0.0", "len": 24}}]}),
             {"snat": {"addr": "172.24.4.2"}}),
        rule("postrouting", {"snat": {"addr": "172.24.4.2"}}),
    ]}
    assert translations(ruleset) == [
        "dnat 172.24.4.9 to 10.0.0.5", "dnat tcp 172.24.4.8:80 to 10.0.0.6:8080",
        "dnat udp 172.24.4.8:8000-8010 to 10.0.0.6:9000-9010", "snat 10.0.0.5 to 172.24.4.9",
        "snat to 172.24.4.2"]
    assert translations(None) == []


def test_a_router_port_every_host_of_its_router_wires_is_no_stray_nor_unbound() -> None:
    """An HA router's interface on its standby host, a distributed router's
    interface on a compute host: wired there, bound elsewhere or nowhere."""
    report = agent_audit.realised(_known(), {"p1": _vif("p1", 1), "qr": _vif("qr", None)},
                                  {"br-int": {COOKIE: 2, 7: 1}}, COOKIE)
    report["ports"]["ha-qr"] = report["ports"]["p1"]
    assert differences("h", {"p1"}, report, shared={"qr", "ha-qr"}) == []
    assert differences("h", {"p1"}, report, shared={"qr"}) == [
        "h: port ha-qr is wired but no longer bound to this host"]


def test_the_ports_shared_by_a_router_s_hosts_are_read_from_the_database() -> None:
    import datetime as dt

    import sqlalchemy as sa

    from neutrino.cmd.audit import shared_router_ports
    from neutrino.db import tables as t
    engine = sa.create_engine("sqlite://")
    t.metadata.create_all(engine, tables=[t.networks, t.ports, t.routers, t.routerports])
    now = dt.datetime(2026, 1, 1)
    with engine.begin() as conn:
        for rid, ha in (("ha-router", True), ("legacy", False)):
            conn.execute(sa.insert(t.routers).values(
                id=rid, created_at=now, updated_at=now, admin_state_up=True,
                status="ACTIVE", distributed=False, ha=ha))
        for index, (pid, owner, router, kind) in enumerate((
                ("ha-qr", "network:ha_router_replicated_interface", "ha-router",
                 "network:ha_router_replicated_interface"),
                ("ha-gw", "network:router_gateway", "ha-router", "network:router_gateway"),
                ("ha-link", "network:router_ha_interface", "ha-router",
                 "network:router_ha_interface"),
                ("legacy-qr", "network:router_interface", "legacy", "network:router_interface"),
                ("dvr-qr", "network:router_interface_distributed", None, None),
                ("vm", "compute:nova", None, None))):
            conn.execute(sa.insert(t.ports).values(
                id=pid, network_id="net", mac_address=f"fa:16:3e:00:00:{index:02x}",
                admin_state_up=True, status="ACTIVE", device_id=router or "x",
                device_owner=owner, created_at=now, updated_at=now))
            if router:
                conn.execute(sa.insert(t.routerports).values(
                    router_id=router, port_id=pid, port_type=kind))
    wired = {pid: {} for pid in ("ha-qr", "ha-gw", "ha-link", "legacy-qr", "dvr-qr", "vm")}
    assert shared_router_ports(engine, {"vm"}, {"ports": wired, "unwired": []}) == {
        "ha-qr", "ha-gw", "dvr-qr"}
    assert shared_router_ports(engine, set(), None) == set()

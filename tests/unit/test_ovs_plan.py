"""The OVS agent's plan, with no switch and no server: what it knows and read
in, which tags, flows, tunnels, meters and reports out."""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from neutrino.agents.ovs import flows, l2pop, plan, qos
from neutrino.agents.ovs.switch import VifPort

TUNNELS = plan.Settings(tunnel_types=("vxlan",), local_ip="10.0.0.1", cookie=0x7)


def _vif(pid: str, ofport: int, tag: int | None = None, net: str | None = None) -> VifPort:
    return VifPort(f"tap-{pid}", pid, "fa:16:3e:00:00:01", ofport, tag,
                   {"net_uuid": net} if net else {})


def _details(pid: str, net: str = "net-a", vni: int = 1001, up: bool = True,
             **extra: Any) -> dict[str, Any]:
    return {"device": pid, "port_id": pid, "network_id": net, "network_type": "vxlan",
            "segmentation_id": vni, "physical_network": None, "admin_state_up": up, **extra}


def _pass(known: plan.Known, vifs: list[VifPort], devices: list[dict[str, Any]],
          settings: plan.Settings = TUNNELS, **observed: Any) -> plan.Plan:
    seen = plan.Observed({v.iface_id: v for v in vifs}, **observed)
    return plan.plan(settings, known, seen, plan.Answers(devices))


def _keys(p: plan.Plan, bridge: str, what: str = "add") -> set[str]:
    return {f.key() for c in p.flows if c.bridge == bridge for f in getattr(c, what)}


def test_a_new_port_gets_its_networks_vlan_and_flows_and_is_reported_up() -> None:
    p = _pass(plan.Known(), [_vif("a", 1)], [_details("a")], full=True,
              cookies={"br-int": {0x5, 0x7}, "br-tun": set()})
    assert p.tags == [("tap-a", 1, {"net_uuid": "net-a", "network_type": "vxlan",
                                    "segmentation_id": "1001"})]
    assert (p.up, p.down) == (["a"], [])
    assert "table=4,priority=1,tun_id=0x3e9" in _keys(p, "br-tun")
    assert [(c.bridge, c.purge_cookies) for c in p.flows] == [("br-int", [0x5]),
                                                              ("br-tun", [])]
    assert p.known.vlans == {"net-a": 1} and set(p.known.wired) == {"a"}


def test_a_restart_reads_the_vlans_back_and_retags_nothing() -> None:
    vifs = [_vif("a", 1, 3, "net-a"), _vif("b", 2, 2, "net-b")]
    p = _pass(plan.Known(), vifs, [_details("a"), _details("b", "net-b", 1002)], full=True)
    assert p.tags == [] and p.known.vlans == {"net-a": 3, "net-b": 2}
    assert p.up == ["a", "b"]


def test_admin_down_ports_go_to_the_dead_vlan_and_are_reported_down() -> None:
    p = _pass(plan.Known(), [_vif("a", 1)], [_details("a", up=False)], full=True)
    assert p.tags[0][:2] == ("tap-a", flows.DEAD_VLAN) and (p.up, p.down) == ([], ["a"])


def test_unknown_ports_are_parked_on_the_dead_vlan_and_not_reported() -> None:
    p = _pass(plan.Known(), [_vif("x", 1)], [{"device": "x"}], full=True)
    assert p.tags == [("tap-x", flows.DEAD_VLAN, {})] and (p.up, p.down) == ([], [])
    assert p.known.wired == {}


def test_a_port_gone_is_reported_down_and_its_networks_flows_deleted() -> None:
    first = _pass(plan.Known(), [_vif("a", 1)], [_details("a")], full=True)
    p = _pass(first.known, [], [], passes=1)
    assert (p.up, p.down) == ([], ["a"]) and p.known.vlans == {}
    assert "table=4,priority=1,tun_id=0x3e9" in _keys(p, "br-tun", "delete")
    assert not _keys(p, "br-int") and not _keys(p, "br-tun")


def test_a_pass_asks_about_new_replugged_and_marked_ports_only() -> None:
    known = _pass(plan.Known(), [_vif("a", 1), _vif("b", 2), _vif("c", 3)],
                  [_details(x) for x in "abc"], full=True).known
    seen = plan.Observed({v.iface_id: v for v in [_vif("a", 1), _vif("b", 9), _vif("c", 3),
                                                   _vif("d", 4)]}, dirty={"c", "gone"})
    assert plan.to_ask(known, seen) == {"b", "c", "d"}
    assert plan.to_ask(known, replace(seen, full=True)) == {"a", "b", "c", "d"}


def test_devices_the_server_failed_on_are_read_again() -> None:
    p = plan.plan(TUNNELS, plan.Known(), plan.Observed({"a": _vif("a", 1)}, full=True),
                  plan.Answers([], failed={"a"}))
    assert p.dirty == {"a"} and p.up == []


def test_tunnel_sync_peers_become_tunnel_ports_once() -> None:
    peers = [plan.Peer("vxlan", "10.0.0.2", "h2")]
    seen = plan.Observed({}, full=True)
    p = plan.plan(TUNNELS, plan.Known(), seen, plan.Answers(peers=peers))
    assert p.tunnels == [("vxlan-0a000002", "vxlan", "10.0.0.2")]
    again = plan.plan(TUNNELS, p.known, replace(seen, full=False), plan.Answers(peers=peers))
    assert again.tunnels == [] and again.known.tunnels == {"vxlan-0a000002": "vxlan"}


def test_l2pop_tunnels_follow_the_entries_and_go_only_after_a_grace() -> None:
    settings = replace(TUNNELS, l2pop=True)
    fdb = l2pop.Fdb("10.0.0.1")
    fdb.add({"net-a": {"network_type": "vxlan", "segment_id": 1001,
                       "ports": {"10.0.0.2": [l2pop.FLOODING_ENTRY]}}})
    p = _pass(plan.Known(), [_vif("a", 1)], [_details("a")], settings, full=True, fdb=fdb)
    assert p.tunnels == [("vxlan-0a000002", "vxlan", "10.0.0.2")] and p.refresh_tunnels
    empty = l2pop.Fdb("10.0.0.1")
    early = _pass(p.known, [_vif("a", 1)], [], settings, passes=1, fdb=empty)
    assert early.retire_tunnels == [] and "vxlan-0a000002" in early.known.tunnels
    late = _pass(p.known, [_vif("a", 1)], [], settings, passes=plan.TUNNEL_GRACE, fdb=empty)
    assert late.retire_tunnels == ["vxlan-0a000002"] and late.known.tunnels == {}
    assert not [k for k in _keys(late, "br-tun") if "vxlan-0a000002" in k]


def test_security_facts_the_server_failed_to_give_are_read_again() -> None:
    settings = replace(TUNNELS, firewall=True)
    known = plan.Known()
    seen = plan.Observed({"a": _vif("a", 1)}, full=True)
    wiring = plan.wire(known, seen, [_details("a")], {"a"})
    assert plan.security_to_read(settings, seen, wiring) == {"a"}
    p = plan.plan_wired(settings, seen, wiring, plan.Answers([_details("a")], security=None))
    assert p.sg_dirty == {"a"}
    assert "table=60,priority=100,in_port=tap-a" in _keys(p, "br-int")  # unfiltered meanwhile


def test_a_ports_egress_limit_is_a_meter_and_a_stale_one_goes_after_the_flows() -> None:
    settings = replace(TUNNELS, qos=True)
    policy = {"id": "pol", "rules": [{"type": "bandwidth_limit", "max_kbps": 1000,
                                      "direction": "egress"}]}
    p = _pass(plan.Known(), [_vif("a", 3)], [_details("a", qos_policy_id="pol")], settings,
              full=True, policies={"pol": policy}, meters={9: qos.Limit(5, 4)}, shaped={})
    assert p.meters == [(3, qos.Limit(1000, 800), False)] and p.retire_meters == [9]
    assert "table=0,priority=5,in_port=tap-a" in _keys(p, "br-int")
    assert p.known.meters == {3: qos.Limit(1000, 800)}
    assert plan.policies_to_pull(settings, plan.wire(
        plan.Known(), plan.Observed({"a": _vif("a", 3)}), [_details("a", qos_policy_id="q")],
        {"a"}), {"pol": policy}) == ["q"]


def test_a_full_pass_reports_down_bound_ports_the_switch_no_longer_has() -> None:
    bound = [{"id": "a", "status": "ACTIVE", "binding:vif_type": "ovs"},
             {"id": "gone", "status": "ACTIVE", "binding:vif_type": "ovs"},
             {"id": "idle", "status": "DOWN", "binding:vif_type": "ovs"},
             {"id": "other", "status": "ACTIVE", "binding:vif_type": "bridge"}]
    seen = plan.Observed({"a": _vif("a", 1)}, full=True)
    p = plan.plan(TUNNELS, plan.Known(), seen, plan.Answers([_details("a")], bound=bound))
    assert (p.up, p.down) == (["a"], ["gone"])
    later = plan.plan(TUNNELS, p.known, replace(seen, full=False),
                      plan.Answers([], bound=bound))
    assert later.down == []

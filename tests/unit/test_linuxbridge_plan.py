"""The Linux bridge agent's plan, with no host and no server: what it knows
and read in, which host operations and reports out."""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from neutrino.agents.linuxbridge import plan
from neutrino.agents.linuxbridge.host import FLOOD_MAC
from neutrino.agents.linuxbridge.plan import op

NET, PORT, OTHER = "n" * 36, "p" * 36, "q" * 36
TAP, BRQ = "tap" + PORT[:11], "brq" + NET[:11]
VXLAN = plan.Settings(vxlan=True, local_ip="10.98.0.1", l2pop=True)


def _details(port: str = PORT, **extra: Any) -> dict[str, Any]:
    return {"device": port[:11], "port_id": port, "network_id": NET, "network_type": "vxlan",
            "segmentation_id": 1001, "admin_state_up": True, **extra}


def _links(*names: str, **masters: str) -> dict[str, dict[str, Any]]:
    return {n: {"ifname": n, **({"master": masters[n]} if n in masters else {})}
            for n in names}


def _first(settings: plan.Settings = VXLAN) -> plan.Plan:
    return plan.plan(settings, plan.Known(), plan.Observed(_links(TAP), full=True),
                     plan.Answers([_details()], peers={"10.98.0.2"}))


def test_a_vxlan_port_gets_its_bridge_and_device_then_is_bridged_and_reported_up() -> None:
    p = _first()
    assert p.ops[:4] == [
        op("ensure_bridge", BRQ),
        op("ensure_vxlan", "vxlan-1001", 1001, "10.98.0.1", 4789, None, learning=False,
           ttl=None, tos=None),
        op("enslave", "vxlan-1001", BRQ, up=True, mtu=None),
        op("enslave", TAP, BRQ, up=True, mtu=None)]
    assert op("fdb_add", "vxlan-1001", FLOOD_MAC, "10.98.0.2") in p.ops
    assert (p.up, p.down) == ([PORT[:11]], []) and p.known.fdb_due is False


def test_a_network_this_host_does_not_carry_is_left_alone() -> None:
    p = plan.plan(VXLAN, plan.Known(), plan.Observed(_links(TAP), full=True),
                  plan.Answers([_details(network_type="vlan", physical_network="physnet1")]))
    assert p.ops == [] and p.up == [] and p.known.wired == {}


def test_a_foreign_port_in_one_of_our_bridges_is_released() -> None:
    p = plan.plan(VXLAN, plan.Known(), plan.Observed(_links(TAP, **{TAP: "brq-x"}), full=True),
                  plan.Answers([{"device": PORT[:11]}]))
    assert p.ops == [op("release", TAP)]


def test_the_last_tap_gone_takes_the_bridge_and_vxlan_device_with_it() -> None:
    known = _first().known
    links = _links(BRQ, "vxlan-1001", **{"vxlan-1001": BRQ})
    p = plan.plan(VXLAN, known, plan.Observed(links, passes=1), plan.Answers())
    assert p.ops == [op("delete", "vxlan-1001"), op("delete", BRQ)]
    assert p.down == [PORT[:11]] and p.forget_l2pop == [NET]


def test_a_bridge_that_still_holds_another_device_stays() -> None:
    known = _first().known
    links = _links(BRQ, "vxlan-1001", "tapdhcp", **{"vxlan-1001": BRQ, "tapdhcp": BRQ})
    p = plan.plan(VXLAN, known, plan.Observed(links, passes=1), plan.Answers())
    assert p.ops == [op("delete", "vxlan-1001")]


def test_l2pop_entries_become_forwarding_and_neighbour_entries_and_stale_ones_go() -> None:
    known = _first().known
    entries = {NET: {"10.98.0.3": {(FLOOD_MAC, "0.0.0.0"), ("fa:16:3e:00:00:03", "10.0.0.3")}}}
    seen = plan.Observed(_links(TAP, "vxlan-1001"), passes=1, fdb_changed=True, l2pop=entries)
    wiring = plan.wire(VXLAN, known, seen, plan.Answers(), set())
    assert plan.fdb_devices(wiring, seen) == ["vxlan-1001"]
    have = {(FLOOD_MAC, "10.98.0.2"), ("fa:16:3e:00:00:09", "10.98.0.9")}
    p = plan.plan_wired(VXLAN, seen, wiring, plan.Answers(), {"vxlan-1001": have}, None)
    assert p.ops == [
        op("fdb_del", "vxlan-1001", "fa:16:3e:00:00:09", "10.98.0.9"),
        op("fdb_add", "vxlan-1001", FLOOD_MAC, "10.98.0.3"),
        op("fdb_add", "vxlan-1001", "fa:16:3e:00:00:03", "10.98.0.3"),
        op("neigh_replace", "vxlan-1001", "10.0.0.3", "fa:16:3e:00:00:03")]


def test_nothing_changed_asks_nothing_and_does_nothing() -> None:
    known = _first().known
    seen = plan.Observed(_links(TAP, BRQ, "vxlan-1001", **{TAP: BRQ}), passes=1)
    assert plan.to_ask(known, seen) == set()
    assert plan.fdb_devices(plan.wire(VXLAN, known, seen, plan.Answers(), set()), seen) == []
    p = plan.plan(VXLAN, known, seen, plan.Answers())
    assert (p.ops, p.up, p.down) == ([], [], [])


def test_the_ruleset_is_loaded_when_it_changes_and_failed_reads_are_retried() -> None:
    settings = replace(VXLAN, firewall=True)
    seen = plan.Observed(_links(TAP), full=True)
    wiring = plan.wire(settings, plan.Known(), seen, plan.Answers([_details()]), {TAP})
    assert plan.security_to_read(settings, seen, wiring) == {TAP}
    failed = plan.plan_wired(settings, seen, wiring, plan.Answers([_details()]), {}, None)
    assert failed.sg_dirty == {TAP}
    loads = [o for o in failed.ops if o.name == "nft_load"]
    assert len(loads) == 1 and failed.known.ruleset == loads[0].args[0]
    again = plan.plan(settings, failed.known, replace(seen, full=False, passes=1),
                      plan.Answers())
    assert not [o for o in again.ops if o.name == "nft_load"]


def test_devices_the_server_failed_on_are_read_again() -> None:
    p = plan.plan(VXLAN, plan.Known(), plan.Observed(_links(TAP), full=True),
                  plan.Answers(failed={PORT[:11]}))
    assert p.dirty == {TAP}

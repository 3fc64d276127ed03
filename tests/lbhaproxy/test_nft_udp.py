"""UDP listeners as nftables' ruleset: the renderer is a pure function of the
graph (and of the members failing their checks)."""
from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from typing import Any

import pytest

from neutrino.agents.loadbalancer import haproxy_config, nft_udp, plan
from neutrino.resources import lb_haproxy
from neutrino.resources.lb_graph import LoadBalancer
from tests.lbhaproxy import graphs as g

FILES = haproxy_config.Files("/s.sock", "/ping.sh", "/certs")


def udp(**kw: Any) -> LoadBalancer:
    return LoadBalancer.from_dict(g.udp_graph(**kw))


def dispatch(text: str) -> str:
    """The listener's DNAT rule."""
    return next(line.strip() for line in text.splitlines() if "dport 53 counter" in line)


def edit(change: Any, **kw: Any) -> LoadBalancer:
    data = g.udp_graph(**kw)
    change(data["pools"][-1])
    return LoadBalancer.from_dict(data)


def test_round_robin_shares_new_flows_by_weight() -> None:
    rule = dispatch(nft_udp.render(udp()))
    assert rule.startswith("ip daddr { 10.0.0.10 } udp dport 53 counter name new_")
    assert rule.endswith("dnat ip to numgen inc mod 4 map "
                         "{ 0-2 : 10.0.1.7 . 5353, 3 : 10.0.2.7 . 5353 }")


def test_least_connections_is_approximated_by_round_robin() -> None:
    assert "numgen inc mod 4" in dispatch(nft_udp.render(udp(algorithm="LEAST_CONNECTIONS")))


def test_source_ip_hashes_the_client_address_with_a_stable_seed() -> None:
    rule = dispatch(nft_udp.render(udp(algorithm="SOURCE_IP")))
    assert "dnat ip to jhash ip saddr mod 4 seed 0x33333333 map" in rule
    port = dispatch(nft_udp.render(udp(algorithm="SOURCE_IP_PORT")))
    assert "jhash ip saddr . udp sport mod 4 seed 0x33333333" in port


def test_source_ip_persistence_keeps_a_client_on_its_member() -> None:
    lb = edit(lambda p: p.update(session_persistence={"type": "SOURCE_IP",
                                                      "persistence_timeout": 60}))
    assert "jhash ip saddr mod 4" in dispatch(nft_udp.render(lb))


def test_a_member_failing_its_checks_leaves_the_rotation() -> None:
    rule = dispatch(nft_udp.render(udp(), down=frozenset({g.U1})))
    assert rule.endswith("dnat ip to 10.0.2.7:5353")
    assert "10.0.1.7" not in nft_udp.render(udp(), down=frozenset({g.U1}))


def test_members_down_or_of_weight_zero_take_no_flow_and_backups_wait() -> None:
    lb = edit(lambda p: p["members"][1].update(admin_state_up=False))
    assert dispatch(nft_udp.render(lb)).endswith("dnat ip to 10.0.1.7:5353")
    lb = edit(lambda p: p["members"][0].update(weight=0))
    assert dispatch(nft_udp.render(lb)).endswith("dnat ip to 10.0.2.7:5353")
    lb = edit(lambda p: p["members"][1].update(backup=True))
    assert dispatch(nft_udp.render(lb)).endswith("dnat ip to 10.0.1.7:5353")
    assert dispatch(nft_udp.render(lb, down=frozenset({g.U1}))).endswith(
        "dnat ip to 10.0.2.7:5353")


def test_no_member_in_rotation_counts_the_flow_and_dnats_nothing() -> None:
    rule = dispatch(nft_udp.render(udp(), down=frozenset({g.U1, g.U2})))
    assert "dnat" not in rule and "counter name new_" in rule


def test_allowed_cidrs_drop_other_clients() -> None:
    data = g.udp_graph()
    data["listeners"][-1]["allowed_cidrs"] = ["192.0.2.0/24", "2001:db8::/64"]
    text = nft_udp.render(LoadBalancer.from_dict(data))
    assert ("ip daddr { 10.0.0.10 } udp dport 53 ip saddr != { 192.0.2.0/24 } drop"
            in text)


def test_counters_and_masquerade_per_listener() -> None:
    text = nft_udp.render(udp())
    c_in, c_out, c_new = nft_udp.counter_names(g.UDP_LISTENER)
    for name in (c_in, c_out, c_new):
        assert f"counter {name} {{" in text
    assert (f"meta l4proto udp ct original ip daddr {{ 10.0.0.10 }} ct original proto-dst 53 "
            f"ct direction reply counter name {c_out}") in text
    assert "ct status dnat ct original ip daddr { 10.0.0.10 } masquerade" in text


def test_without_udp_listeners_there_is_no_table_and_haproxy_has_no_udp_frontend() -> None:
    assert nft_udp.render(g.loadbalancer()) == ""
    assert nft_udp.render(udp(admin_state_up=False)) == ""
    data = g.udp_graph()
    data["listeners"][-1]["admin_state_up"] = False
    assert nft_udp.render(LoadBalancer.from_dict(data)) == ""
    config = haproxy_config.render(udp(), FILES)
    assert g.UDP_LISTENER not in config and g.UDP_POOL not in config


def test_the_deployment_carries_the_table_without_the_members_down() -> None:
    payload = g.payload()
    payload["loadbalancer"] = g.udp_graph()
    want = plan.deployment(payload, "/state", frozenset({g.U2}))
    assert want is not None and want.udp == nft_udp.render(udp(), frozenset({g.U2}))
    seen = plan.Observed(namespace=True, running=True, config=want.config,
                         device=want.device, udp=nft_udp.render(udp()))
    assert plan.plan({g.LB: want}, {g.LB: seen}) == [plan.Reload(want)]


def test_what_udp_pools_may_use() -> None:
    assert lb_haproxy.unsupported(udp(algorithm="SOURCE_IP_PORT")) is None
    assert lb_haproxy.unsupported(udp(monitor="PING")) is None
    assert lb_haproxy.unsupported(udp(monitor="HTTP")) is None
    data = g.udp_graph(monitor="SCTP")
    data["listeners"][-1]["protocol"] = data["pools"][-1]["protocol"] = "SCTP"
    assert lb_haproxy.unsupported(LoadBalancer.from_dict(data)) is None
    assert "sctp dport 53" in nft_udp.render(LoadBalancer.from_dict(data))
    data["pools"][-1]["healthmonitor"]["type"] = "HTTPS"
    assert lb_haproxy.unsupported(LoadBalancer.from_dict(data)) == (
        "haproxy provider does not support HTTPS health monitors.")


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("nft") is None,
                    reason="needs root and nft")
def test_nft_accepts_the_ruleset() -> None:
    data = g.udp_graph(algorithm="SOURCE_IP_PORT",
                       additional_vips=[{"subnet_id": "s6", "ip_address": "2001:db8::10"}])
    data["pools"][-1]["members"].append(g.member("66666666-6666-4666-8666-666666666673",
                                                 "2001:db8::7", pool=g.UDP_POOL))
    data["listeners"][-1]["allowed_cidrs"] = ["192.0.2.0/24"]
    text = nft_udp.replace_script(nft_udp.render(LoadBalancer.from_dict(data)))
    ns = f"nftu-{uuid.uuid4().hex[:8]}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        for _ in range(2):  # the second replaces the first
            done = subprocess.run(["ip", "netns", "exec", ns, "nft", "-f", "-"], input=text,
                                  capture_output=True, text=True)
            assert done.returncode == 0, done.stderr
        listed = subprocess.run(["ip", "netns", "exec", ns, "nft", "list", "ruleset"],
                                capture_output=True, text=True, check=True).stdout
        assert listed.count("table inet neutrino_lb") == 1
        assert "dnat ip6 to [2001:db8::7]:80" in listed
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=False)


def test_a_replaced_table_starts_its_counters_where_the_old_one_was() -> None:
    c_in, _, c_new = nft_udp.counter_names(g.UDP_LISTENER)
    text = nft_udp.with_counters(nft_udp.render(udp()), {c_in: (5, 500), c_new: (3, 96)})
    assert f"counter {c_in} {{\n        packets 5 bytes 500\n    }}" in text
    assert f"counter {c_new} {{\n        packets 3 bytes 96\n    }}" in text

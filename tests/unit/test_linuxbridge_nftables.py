"""The Linux bridge agent's security-group ruleset: which nftables matches
rules become, and that the whole file loads into the kernel and replaces
what was there (checked in a namespace of the test's own)."""
from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from typing import Any, Iterator

import pytest
from oslo_config import cfg

from neutrino.agents.linuxbridge import nftables
from neutrino.agents.secgroup_facts import port_facts
from neutrino.conf.agents import linuxbridge as config

MAC = "fa:16:3e:00:00:01"


def _info(*rules: dict[str, Any], **device: Any) -> dict[str, Any]:
    return {"devices": {"p1": {"mac_address": MAC, "fixed_ips": ["10.0.0.5"],
                               "security_groups": ["sg"], **device}},
            "security_groups": {"sg": list(rules)}}


@pytest.mark.parametrize(("rule", "expr"), [
    ({"ethertype": "IPv4", "protocol": "tcp", "port_range_min": 22, "port_range_max": 22},
     "meta nfproto ipv4 meta l4proto tcp tcp dport 22"),
    ({"ethertype": "IPv4", "protocol": "udp", "port_range_min": 1000, "port_range_max": 2000,
      "source_ip_prefix": "10.1.2.3/16"},
     "meta nfproto ipv4 ip saddr 10.1.0.0/16 meta l4proto udp udp dport 1000-2000"),
    ({"ethertype": "IPv4", "protocol": "icmp", "port_range_min": 8, "port_range_max": 0},
     "meta nfproto ipv4 meta l4proto icmp icmp type 8 icmp code 0"),
    ({"ethertype": "IPv6", "protocol": "icmp", "port_range_min": 128},
     "meta nfproto ipv6 meta l4proto ipv6-icmp icmpv6 type 128"),
    ({"ethertype": "IPv6", "protocol": "58", "dest_ip_prefix": "fd00::/64"},
     "meta nfproto ipv6 ip6 daddr fd00::/64 meta l4proto ipv6-icmp"),
    ({"ethertype": "IPv4", "protocol": "vrrp"}, "meta nfproto ipv4 meta l4proto 112"),
    ({"ethertype": "IPv4", "protocol": "47"}, "meta nfproto ipv4 meta l4proto 47"),
    ({"ethertype": "IPv4"}, "meta nfproto ipv4"),
])
def test_a_rule_becomes_one_nftables_match(rule: dict[str, Any], expr: str) -> None:
    assert nftables.rule_expr({"direction": "ingress", **rule}) == expr


def test_a_port_with_port_security_off_gets_no_rules() -> None:
    assert port_facts(_info(port_security_enabled=False), "p1") is None


def test_firewall_driver_names_of_upstream_select_nftables_and_unknown_ones_fail() -> None:
    conf = cfg.ConfigOpts()
    config.register(conf)
    conf([], default_config_files=[])
    assert config.firewall(conf) == "nftables"  # upstream's default: iptables
    conf.set_override("firewall_driver",
                      "neutron.agent.linux.iptables_firewall.IptablesFirewallDriver",
                      "SECURITYGROUP")
    assert config.firewall(conf) == "nftables"
    conf.set_override("enable_security_group", False, "SECURITYGROUP")
    assert config.firewall(conf) == "noop"
    conf.set_override("enable_security_group", True, "SECURITYGROUP")
    conf.set_override("firewall_driver", "openvswitch", "SECURITYGROUP")
    with pytest.raises(ValueError, match="firewall_driver"):
        config.firewall(conf)
    with pytest.raises(ValueError, match="physical_interface_mappings"):
        config.pairs(["physnet1"], "physical_interface_mappings", "interface")


@pytest.fixture
def netns() -> Iterator[str]:
    if os.geteuid() != 0 or shutil.which("nft") is None:
        pytest.skip("needs root and nft")
    name = f"lbnft-{uuid.uuid4().hex[:8]}"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], check=False)


def _load(ns: str, text: str) -> str:
    subprocess.run(["ip", "netns", "exec", ns, "nft", "-f", "-"], input=text, text=True,
                   check=True, capture_output=True)
    return subprocess.run(["ip", "netns", "exec", ns, "nft", "list", "ruleset"],
                          capture_output=True, text=True, check=True).stdout


def test_the_ruleset_loads_and_each_load_replaces_the_last(netns: str) -> None:
    facts = port_facts(_info(
        {"direction": "ingress", "ethertype": "IPv4", "protocol": "tcp",
         "port_range_min": 22, "port_range_max": 22},
        {"direction": "egress", "ethertype": "IPv6"},
        allowed_address_pairs=[{"ip_address": "10.0.1.0/24", "mac_address": MAC}]), "p1")
    assert facts is not None
    two = [nftables.FilteredPort("tapaaaaaaaa-aa", facts),
           nftables.FilteredPort("tapbbbbbbbb-bb", facts)]
    listed = _load(netns, nftables.ruleset(two))
    assert listed.count("jump p2_spoof") == 1 and "tcp dport 22 return" in listed
    assert "arp saddr ip 10.0.1.0/24 return" in listed  # an allowed address pair
    listed = _load(netns, nftables.ruleset(two[:1]))
    assert "tapaaaaaaaa-aa" in listed and "tapbbbbbbbb-bb" not in listed
    assert _load(netns, nftables.ruleset([])).strip() == ""

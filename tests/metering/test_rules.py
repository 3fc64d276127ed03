"""Label rules as nft rules on the gateway device, as upstream's driver matches them."""
from __future__ import annotations

from neutrino.agents.metering import rules
from tests.metering.fakes import label, router, rule

GW = "0123456789abcdef"
QG = "qg-0123456789a"


def _chain(labels: list[dict], gw: str | None = GW) -> list[str]:
    metered = rules.metered_router(router("r1", "p1", gw, labels))
    return rules.label_rules(metered.labels[0], metered.gateway_device)


def test_remote_prefix_is_the_source_of_egress_and_the_destination_of_ingress() -> None:
    assert _chain([label("L", [rule("egress", remote_ip_prefix="10.0.0.0/24"),
                               rule("ingress", remote_ip_prefix="10.0.0.5")])]) == [
        f'oifname "{QG}" ip saddr 10.0.0.0/24 counter name "label-L" return',
        f'iifname "{QG}" ip daddr 10.0.0.5/32 counter name "label-L" return']


def test_source_and_destination_prefixes_match_what_they_name() -> None:
    assert _chain([label("L", [rule("ingress", source_ip_prefix="172.24.4.0/24",
                                    destination_ip_prefix="10.0.0.0/24"),
                               rule("egress", destination_ip_prefix="2001:db8::/64")])]) == [
        f'iifname "{QG}" ip saddr 172.24.4.0/24 ip daddr 10.0.0.0/24 '
        f'counter name "label-L" return',
        f'oifname "{QG}" ip6 daddr 2001:db8::/64 counter name "label-L" return']


def test_excluded_rules_come_first_and_return_uncounted() -> None:
    assert _chain([label("L", [rule("egress", remote_ip_prefix="10.0.0.0/16"),
                               rule("egress", True, remote_ip_prefix="10.0.1.0/24")])]) == [
        f'oifname "{QG}" ip saddr 10.0.1.0/24 return',
        f'oifname "{QG}" ip saddr 10.0.0.0/16 counter name "label-L" return']


def test_a_rule_mixing_address_families_matches_nothing_and_is_left_out() -> None:
    assert _chain([label("L", [rule("egress", source_ip_prefix="10.0.0.0/8",
                                    destination_ip_prefix="2001:db8::/64")])]) == []


def test_without_a_gateway_labels_keep_a_counter_but_no_rules() -> None:
    metered = rules.metered_router(router("r1", "p1", None, [label("L", [rule("egress",
                                                         remote_ip_prefix="10.0.0.0/8")])]))
    table = rules.table(metered)
    assert "counter label-L {" in table and "jump label-L" in table
    assert "counter name" not in table


def test_the_table_is_ours_alone_and_replaced_in_one_transaction() -> None:
    metered = rules.metered_router(router("r1", "p1", GW, [label("L", [])]))
    script = rules.replace_script(metered)
    assert script.startswith("table inet neutrino_meter\ndelete table inet neutrino_meter\n")
    assert "neutrino_l3" not in script
    assert metered.namespace == "qrouter-r1"


def test_counters_are_read_by_label_from_nft_json() -> None:
    out = {"nftables": [{"metainfo": {}},
                        {"counter": {"family": "inet", "table": "neutrino_meter",
                                     "name": "label-L", "packets": 3, "bytes": 252}},
                        {"counter": {"family": "ip", "table": "other", "name": "label-X",
                                     "packets": 9, "bytes": 9}}]}
    assert rules.read_counters(out) == {"L": (3, 252)}

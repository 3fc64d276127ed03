"""``aap-reject-multicast``: allowed address pairs refuse multicast, as upstream."""
from __future__ import annotations

import pytest

from tests.api import _helpers as h


def _aliases(client):
    return {e["alias"] for e in client.get("/v2.0/extensions")[1]["extensions"]}


def _pair_refused(client, net_id, pair):
    return h.error(client.post("/v2.0/ports", {"port": {
        "network_id": net_id, "allowed_address_pairs": [pair]}}), 400, "HTTPBadRequest")


def test_aap_reject_multicast_is_listed(member):
    assert {"allowed-address-pairs", "aap-reject-multicast"} <= _aliases(member)


@pytest.mark.parametrize("address, message", [
    ("224.0.0.1", "IP 224.0.0.1 is a multicast address, which is not supported."),
    ("ff02::1", "IP ff02::1 is a multicast address, which is not supported."),
    ("230.0.0.0/8", "Subnet 230.0.0.0/8 overlaps with multicast range 224.0.0.0/4, "
                    "which is not supported."),
    ("192.0.0.0/2", "Subnet 192.0.0.0/2 overlaps with multicast range 224.0.0.0/4, "
                    "which is not supported."),
    ("::/0", "Subnet ::/0 overlaps with multicast range ff00::/8, which is not supported."),
])
def test_multicast_address_pair_is_refused_with_400(member, address, message):
    net = h.network(member)
    assert _pair_refused(member, net["id"], {"ip_address": address}) == message
    assert member.get(f"/v2.0/ports?network_id={net['id']}")[1]["ports"] == []


def test_multicast_mac_in_an_address_pair_is_refused(member):
    net = h.network(member)
    msg = _pair_refused(member, net["id"], {"ip_address": "10.0.0.5",
                                            "mac_address": "01:00:5e:00:00:01"})
    assert msg == ("MAC address 01:00:5e:00:00:01 is a multicast address, "
                   "which is not supported.")


def test_any_ipv4_address_and_unicast_pairs_stay_allowed(member):
    net = h.network(member)
    pairs = [{"ip_address": "0.0.0.0/0"}, {"ip_address": "10.0.0.0/24"},
             {"ip_address": "2001:db8::1", "mac_address": "fa:16:3e:00:00:01"}]
    port = h.port(member, net["id"], allowed_address_pairs=pairs)
    assert sorted(p["ip_address"] for p in port["allowed_address_pairs"]) == \
        ["0.0.0.0/0", "10.0.0.0/24", "2001:db8::1"]


def test_multicast_pair_is_refused_on_update_too_and_the_port_keeps_its_pairs(member, admin):
    net = h.network(member)
    port = h.port(member, net["id"], allowed_address_pairs=[{"ip_address": "10.0.0.7"}])
    url = f"/v2.0/ports/{port['id']}"
    for client in (member, admin):
        h.error(client.put(url, {"port": {"allowed_address_pairs": [
            {"ip_address": "239.1.1.1"}]}}), 400, "HTTPBadRequest")
    assert member.get(url)[1]["port"]["allowed_address_pairs"] == [
        {"ip_address": "10.0.0.7", "mac_address": port["mac_address"]}]

"""The pure core: from a router dict, the devices, addresses, routes and NAT the host must have."""
from __future__ import annotations

from neutrino.agents.l3 import model, nat
from tests.l3host.routers import fip, gateway, interface, router

QR_A = interface("10.100.1.0/24", "10.100.1.1", "fa:16:3e:00:0a:01", mtu=1450,
                 port_id="aaaaaaaa-1111-2222-3333-444444444444")
QR_B = interface("10.100.2.0/24", "10.100.2.1", "fa:16:3e:00:0b:01", mtu=1450,
                 port_id="bbbbbbbb-1111-2222-3333-444444444444")
GW = gateway("172.24.4.0/24", "172.24.4.10", "172.24.4.1", "fa:16:3e:00:ee:01",
             port_id="cccccccc-1111-2222-3333-444444444444")


def full_router(**kw):  # type: ignore[no-untyped-def]
    return router([QR_A, QR_B], GW, fips=[fip("172.24.4.20", "10.100.1.11", "")], **kw)


def test_devices_are_named_after_ports_with_macs_mtu_and_prefixlen() -> None:
    d = model.desired_router(full_router())
    assert d.namespace == "qrouter-" + d.router_id
    assert [(x.name, x.mac_address, x.mtu, x.cidrs) for x in d.devices] == [
        ("qr-aaaaaaaa-11", "fa:16:3e:00:0a:01", 1450, ("10.100.1.1/24",)),
        ("qr-bbbbbbbb-11", "fa:16:3e:00:0b:01", 1450, ("10.100.2.1/24",)),
        ("qg-cccccccc-11", "fa:16:3e:00:ee:01", 1500, ("172.24.4.10/24",)),
    ]
    assert d.gateway_device == "qg-cccccccc-11"


def test_prefixlen_comes_from_the_subnet_when_the_fixed_ip_lacks_it() -> None:
    port = interface("10.9.0.0/16", "10.9.0.1", "fa:16:3e:00:00:01")
    del port["fixed_ips"][0]["prefixlen"]
    d = model.desired_router(router([port]))
    assert d.devices[0].cidrs == ("10.9.0.1/16",)


def test_floating_ips_are_host_addresses_on_the_gateway_device() -> None:
    d = model.desired_router(full_router())
    assert d.addresses("qg-cccccccc-11") == {"172.24.4.10/24", "172.24.4.20/32"}
    assert d.addresses("qr-aaaaaaaa-11") == {"10.100.1.1/24"}


def test_default_route_via_the_external_subnets_gateway_and_extra_routes() -> None:
    d = model.desired_router(full_router(
        routes=[{"destination": "192.168.50.0/24", "nexthop": "10.100.2.254"}]))
    assert d.routes == (
        model.Route("default", "172.24.4.1", "qg-cccccccc-11", False),
        model.Route("192.168.50.0/24", "10.100.2.254"),
    )


def test_gateway_outside_the_external_subnet_is_reached_on_link() -> None:
    gw = gateway("172.24.4.0/24", "172.24.4.10", "172.24.5.1", "fa:16:3e:00:ee:02")
    d = model.desired_router(router([QR_A], gw))
    assert d.routes == (model.Route("default", "172.24.5.1", d.gateway_device, True),)


def test_external_subnet_without_gateway_gives_no_default_route() -> None:
    gw = gateway("172.24.4.0/24", "172.24.4.10", None, "fa:16:3e:00:ee:02")
    assert model.desired_router(router([QR_A], gw)).routes == ()


def test_router_without_gateway_has_no_nat_and_ignores_floating_ips() -> None:
    d = model.desired_router(router([QR_A, QR_B], fips=[fip("172.24.4.20", "10.100.1.11", "")]))
    assert d.gateway_device is None and d.floating_ips == () and not d.enable_snat
    assert nat.rules(d) == {"mangle_prerouting": [], "prerouting": [], "output": [],
                            "postrouting": []}


def test_nat_rules_for_snat_and_a_floating_ip() -> None:
    d = model.desired_router(full_router())
    assert nat.rules(d) == {
        "mangle_prerouting": ['iifname "qg-cccccccc-11" meta mark set 0x2'],
        "prerouting": ["ip daddr 172.24.4.20 dnat to 10.100.1.11"],
        "output": ["ip daddr 172.24.4.20 dnat to 10.100.1.11"],
        "postrouting": [
            "rt ipsec exists accept",
            'ip saddr 10.100.1.11 oifname "qg-cccccccc-11" snat to 172.24.4.20',
            'oifname "qg-cccccccc-11" ip saddr { 10.100.1.0/24, 10.100.2.0/24 } '
            "snat to 172.24.4.10",
            "meta mark != 0x2 ct status dnat snat to 172.24.4.10",
        ],
    }


def test_enable_snat_false_keeps_floating_ips_but_no_gateway_snat() -> None:
    d = model.desired_router(full_router(enable_snat=False))
    post = nat.rules(d)["postrouting"]
    assert post == ["rt ipsec exists accept",
                    'ip saddr 10.100.1.11 oifname "qg-cccccccc-11" snat to 172.24.4.20']


def test_enable_snat_read_from_external_gateway_info_when_absent_at_top() -> None:
    r = full_router(enable_snat=False)
    del r["enable_snat"]
    assert not model.desired_router(r).enable_snat


def test_floating_ip_without_fixed_address_is_ignored() -> None:
    r = full_router()
    r["_floatingips"].append({**fip("172.24.4.21", "", r["id"]), "fixed_ip_address": None})
    d = model.desired_router(r)
    assert [f.floating_ip_address for f in d.floating_ips] == ["172.24.4.20"]


def test_port_forwardings_dnat_by_protocol_and_port() -> None:
    r = full_router()
    r["_port_forwardings"] = [
        {"floating_ip_address": "172.24.4.30", "internal_ip_address": "10.100.2.5",
         "protocol": "tcp", "external_port": 2222, "internal_port": 22},
        {"floating_ip_address": "172.24.4.30", "internal_ip_address": "10.100.2.6",
         "protocol": "udp", "external_port_range": "5000:5010",
         "internal_port_range": "6000:6010"},
    ]
    d = model.desired_router(r)
    assert nat.rules(d)["prerouting"] == [
        "ip daddr 172.24.4.30 tcp dport 2222 dnat to 10.100.2.5:22",
        "ip daddr 172.24.4.30 udp dport 5000-5010 dnat to 10.100.2.6:6000-6010",
        "ip daddr 172.24.4.20 dnat to 10.100.1.11",
    ]
    assert "172.24.4.30/32" in d.addresses(d.gateway_device)


def test_ipv6_interfaces_get_addresses_but_no_nat() -> None:
    v6 = interface("2001:db8:1::/64", "2001:db8:1::1", "fa:16:3e:00:06:01")
    d = model.desired_router(router([QR_A, v6], GW))
    assert "2001:db8:1::1/64" in {c for x in d.devices for c in x.cidrs}
    assert d.snat_sources == ("10.100.1.0/24",)


def test_ruleset_text_replaces_one_table_atomically() -> None:
    d = model.desired_router(router([QR_A], GW))
    assert nat.replace_script(d) == (
        "table ip neutrino_l3\n"
        "delete table ip neutrino_l3\n"
        "table ip neutrino_l3 {\n"
        "  chain mangle_prerouting {\n"
        "    type filter hook prerouting priority mangle; policy accept;\n"
        '    iifname "qg-cccccccc-11" meta mark set 0x2\n'
        "  }\n"
        "  chain prerouting {\n"
        "    type nat hook prerouting priority dstnat; policy accept;\n"
        "  }\n"
        "  chain output {\n"
        "    type nat hook output priority -100; policy accept;\n"
        "  }\n"
        "  chain postrouting {\n"
        "    type nat hook postrouting priority srcnat; policy accept;\n"
        "    rt ipsec exists accept\n"
        '    oifname "qg-cccccccc-11" ip saddr { 10.100.1.0/24 } snat to 172.24.4.10\n'
        "    meta mark != 0x2 ct status dnat snat to 172.24.4.10\n"
        "  }\n"
        "}\n")


def test_gratuitous_arp_frame_announces_the_address_from_itself() -> None:
    from neutrino.agents.l3.garp import frame
    mac = bytes.fromhex("fa163e00ee01")
    f = frame(mac, "172.24.4.20")
    assert f[:6] == b"\xff" * 6 and f[6:12] == mac and f[12:14] == b"\x08\x06"
    arp = f[14:]
    assert arp[:8] == bytes.fromhex("0001080006040001")  # Ethernet/IPv4, request
    assert arp[8:14] == mac and arp[14:18] == bytes([172, 24, 4, 20])
    assert arp[18:24] == b"\x00" * 6 and arp[24:28] == bytes([172, 24, 4, 20])

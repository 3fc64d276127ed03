"""radvd.conf of a router per ``ipv6_ra_mode`` (pure rendering), which routers
advertise, the gateway's accept_ra, and radvd's command line."""
from __future__ import annotations

from typing import Any

import pytest

from neutrino.agents.l3 import model, ra
from tests.l3host.routers import gateway, interface, router

QR = "qr-aaaaaaaa-11"


def v6_port(*subnets: tuple[str, str | None], mtu: int = 1450,
            dns: list[str] | None = None) -> dict[str, Any]:
    """An internal port on one IPv6 subnet per (cidr, ipv6_ra_mode)."""
    cidr, mode = subnets[0]
    port = interface(cidr, cidr.replace("::/64", "::1"), "fa:16:3e:00:06:01", mtu=mtu,
                     port_id="aaaaaaaa-1111-2222-3333-444444444444")
    port["subnets"][0].update(ipv6_ra_mode=mode, dns_nameservers=dns or [])
    for n, (cidr, mode) in enumerate(subnets[1:]):
        sid = f"extra-{n}"
        port["fixed_ips"].append({"subnet_id": sid, "ip_address": cidr.replace("::/64", "::1"),
                                  "prefixlen": 64})
        port["subnets"].append({"id": sid, "cidr": cidr, "gateway_ip": None,
                                "dns_nameservers": dns or [], "ipv6_ra_mode": mode,
                                "subnetpool_id": None})
    return port


DEFAULTS = ra.Settings()


def conf(*ports: dict[str, Any], settings: ra.Settings = DEFAULTS) -> str:
    return ra.config(model.desired_router(router(list(ports))), settings)


RECORDED_SLAAC = """interface qr-aaaaaaaa-11
{
    AdvSendAdvert on;
    MinRtrAdvInterval 30;
    MaxRtrAdvInterval 100;
    AdvLinkMTU 1450;
    RDNSS 2001:db8::53
    {
    };
    prefix 2001:db8:1::/64
    {
        AdvOnLink on;
        AdvAutonomous on;
    };
    route fe80::a9fe:a9fe/128
    {
    };
};
"""


def test_slaac_subnet_advertises_an_autonomous_prefix_its_mtu_and_dns() -> None:
    assert conf(v6_port(("2001:db8:1::/64", "slaac"), dns=["2001:db8::53"])) == RECORDED_SLAAC


# (ra_mode, managed flag M, other-config flag O, prefix advertised, autonomous)
MODES = [
    ("slaac", False, False, True, True),
    ("dhcpv6-stateless", False, True, True, True),
    ("dhcpv6-stateful", True, False, True, False),
    (None, False, False, False, False),
]


@pytest.mark.parametrize("mode,managed,other,prefix,autonomous", MODES)
def test_each_ra_mode_sets_its_flags_and_prefix(mode: str | None, managed: bool, other: bool,
                                                prefix: bool, autonomous: bool) -> None:
    text = conf(v6_port(("2001:db8:1::/64", mode)))
    assert text.startswith(f"interface {QR}\n{{\n    AdvSendAdvert on;\n")
    assert ("AdvManagedFlag on;" in text) is managed
    assert ("AdvOtherConfigFlag on;" in text) is other
    assert ("prefix 2001:db8:1::/64" in text) is prefix
    if prefix:
        assert f"AdvAutonomous {'on' if autonomous else 'off'};" in text
    assert "route fe80::a9fe:a9fe/128" in text


def test_subnets_of_several_modes_on_one_port_share_one_section() -> None:
    text = conf(v6_port(("2001:db8:1::/64", "dhcpv6-stateful"), ("2001:db8:2::/64", "slaac"),
                        ("2001:db8:3::/64", "dhcpv6-stateless")))
    assert text.count("interface ") == 1
    assert "AdvManagedFlag on;" in text and "AdvOtherConfigFlag on;" in text
    # autonomous prefixes first, then the stateful one (upstream's order)
    assert [line.split()[1] for line in text.splitlines() if "prefix" in line] == [
        "2001:db8:2::/64", "2001:db8:3::/64", "2001:db8:1::/64"]
    assert text.count("AdvAutonomous on;") == 2 and text.count("AdvAutonomous off;") == 1


@pytest.mark.parametrize("mtu,advertised", [(1450, True), (1280, True), (1279, False),
                                            (0, False)])
def test_link_mtu_is_advertised_only_when_ipv6_can_use_it(mtu: int, advertised: bool) -> None:
    text = conf(v6_port(("2001:db8:1::/64", "slaac"), mtu=mtu))
    assert (f"AdvLinkMTU {mtu};" in text) is advertised


def test_rdnss_comes_from_slaac_subnets_only_and_holds_three_servers() -> None:
    four = ["2001:db8::1", "2001:db8::2", "2001:db8::3", "2001:db8::4"]
    text = conf(v6_port(("2001:db8:1::/64", "slaac"), dns=four))
    assert "RDNSS 2001:db8::1 2001:db8::2 2001:db8::3\n" in text
    for mode in ("dhcpv6-stateless", "dhcpv6-stateful", None):
        assert "RDNSS" not in conf(v6_port(("2001:db8:1::/64", mode), dns=four))


def test_intervals_come_from_the_agents_options() -> None:
    text = conf(v6_port(("2001:db8:1::/64", "slaac")), settings=ra.Settings(3, 4))
    assert "MinRtrAdvInterval 3;\n    MaxRtrAdvInterval 4;" in text


def test_only_internal_ports_with_ipv6_subnets_get_a_section() -> None:
    v4 = interface("10.100.1.0/24", "10.100.1.1", "fa:16:3e:00:0a:01",
                   port_id="bbbbbbbb-1111-2222-3333-444444444444")
    gw = gateway("2001:db8:f::/64", "2001:db8:f::10", "2001:db8:f::1", "fa:16:3e:00:ee:01")
    desired = model.desired_router(router([v4, v6_port(("2001:db8:1::/64", "slaac"))], gw))
    assert [i.device for i in desired.ra_interfaces] == [QR]
    assert ra.config(desired, ra.Settings()).count("interface ") == 1


def test_a_router_advertises_when_an_internal_port_is_on_an_ipv6_subnet() -> None:
    v4 = interface("10.100.1.0/24", "10.100.1.1", "fa:16:3e:00:0a:01")
    assert not ra.needed(model.desired_router(router([v4])))
    # any IPv6 subnet, even without ipv6_ra_mode: the router still announces itself
    assert ra.needed(model.desired_router(router([v4, v6_port(("2001:db8:1::/64", None))])))
    ha = router([v6_port(("2001:db8:1::/64", "slaac"))])
    ha.update(ha=True, ha_vr_id=3, _ha_interface=interface(
        "169.254.192.0/18", "169.254.192.7", "fa:16:3e:00:0a:07"))
    assert not ra.needed(model.desired_router(ha))  # HA routers' IPv6 is not implemented


def test_gateway_learns_the_ipv6_default_route_by_ra_unless_a_subnet_gives_it() -> None:
    qr = interface("10.100.1.0/24", "10.100.1.1", "fa:16:3e:00:0a:01")
    v4_gw = gateway("172.24.4.0/24", "172.24.4.10", "172.24.4.1", "fa:16:3e:00:ee:01")
    v6_gw = gateway("2001:db8:f::/64", "2001:db8:f::10", "2001:db8:f::1", "fa:16:3e:00:ee:02")
    assert model.desired_router(router([qr], v4_gw)).gateway_accept_ra == 2
    with_v6 = model.desired_router(router([qr], v6_gw))
    assert with_v6.gateway_accept_ra == 0
    assert model.Route("default", "2001:db8:f::1", with_v6.gateway_device) in with_v6.routes


@pytest.mark.parametrize("option,agent_user,user_args", [
    ("", "neutron", ["-u", "neutron"]),  # empty: the agent's own user
    ("", "root", ["-u", "root"]),
    ("radvd", "root", ["-u", "radvd"]),
    ("root", "root", []),  # root: radvd is not told to switch users
])
def test_radvd_user_option_as_upstream_reads_it(option: str, agent_user: str,
                                                 user_args: list[str]) -> None:
    argv = ra.command("/ra/r/radvd.conf", "/ra/r/radvd.pid", "/ra/r/radvd.log",
                      ra.Settings(user=option), agent_user)
    assert argv == ["radvd", "-C", "/ra/r/radvd.conf", "-p", "/ra/r/radvd.pid",
                    "-m", "logfile", "-l", "/ra/r/radvd.log", *user_args]


def test_ipv6_gateway_option_is_the_default_route_when_no_subnet_gives_one() -> None:
    qr = interface("10.100.1.0/24", "10.100.1.1", "fa:16:3e:00:0a:01")
    v4_gw = gateway("172.24.4.0/24", "172.24.4.10", "172.24.4.1", "fa:16:3e:00:ee:01")
    d = model.desired_router(router([qr], v4_gw), ipv6_gateway="fe80::1")
    assert model.Route("default", "fe80::1", d.gateway_device) in d.routes
    assert d.gateway_accept_ra == 0  # the route is configured, not learned
    # an external subnet's IPv6 gateway wins over the option
    v6_gw = gateway("2001:db8:f::/64", "2001:db8:f::10", "2001:db8:f::1", "fa:16:3e:00:ee:02")
    d = model.desired_router(router([qr], v6_gw), ipv6_gateway="fe80::1")
    assert [r.nexthop for r in d.routes if r.version == 6] == ["2001:db8:f::1"]
    # and a router without a gateway has no default route at all
    assert model.desired_router(router([qr]), ipv6_gateway="fe80::1").routes == ()


@pytest.mark.parametrize("value", ["2001:db8::1", "10.0.0.1", "not-an-address"])
def test_agent_refuses_an_ipv6_gateway_that_is_not_link_local(tmp_path: Any,
                                                              value: str) -> None:
    from neutrino.agents.l3.agent import L3Agent
    from neutrino.service import make_conf
    path = tmp_path / "l3.conf"
    path.write_text(f"[DEFAULT]\nhost = l3host-a\nstate_path = {tmp_path}\n"
                    f"ipv6_gateway = {value}\n[AGENT]\nreport_interval = 0\n")
    with pytest.raises(ValueError, match="not a valid IPv6 link-local address"):
        L3Agent(make_conf(["--config-file", str(path)]), driver=object())  # type: ignore[arg-type]

"""What metadata adds to a router's nft table and to a network's DHCP
options (pure), and that nft accepts the table (``nft -c`` only checks)."""
from __future__ import annotations

import shutil
import subprocess
import uuid

import pytest

from neutrino.agents.dhcp import dnsmasq
from neutrino.agents.dhcp.metadata import Flags, route_ips, should_serve
from neutrino.agents.l3 import model, nat
from neutrino.agents.l3.metadata import RouterMetadata
from neutrino.agents.metadata.proxies import ROUTER, MetadataProxies
from tests.l3host import routers as r

META = RouterMetadata(MetadataProxies("/nonexistent", "/nonexistent/sock", ROUTER), 9697, "0x1")


def test_a_router_redirects_marked_metadata_requests_from_internal_ports_to_its_proxy() -> None:
    desired = model.desired_router(r.router([r.interface("10.0.0.0/24", "10.0.0.1",
                                                         "fa:16:3e:00:00:01")]))
    rules = nat.rules(desired, META)
    match = 'iifname "qr-*" ip daddr 169.254.169.254 tcp dport 80'
    assert rules["mangle_prerouting"] == [f"{match} meta mark set 0x1"]
    assert rules["prerouting"] == [f"{match} redirect to :9697"]
    assert rules["input"] == ["meta mark & 0xffff == 0x1 accept", "tcp dport 9697 drop"]
    assert "input" not in nat.rules(desired)  # metadata off: the table is as before


def test_metadata_rules_come_before_floating_ip_rules_with_a_gateway() -> None:
    gw = r.gateway("172.24.4.0/24", "172.24.4.10", "172.24.4.1", "fa:16:3e:00:00:02")
    router = r.router([r.interface("10.0.0.0/24", "10.0.0.1", "fa:16:3e:00:00:01")], gw,
                      fips=[r.fip("172.24.4.20", "10.0.0.5", "x")])
    rules = nat.rules(model.desired_router(router), META)
    assert rules["prerouting"][0].endswith("redirect to :9697")
    assert rules["prerouting"][1] == "ip daddr 172.24.4.20 dnat to 10.0.0.5"
    assert rules["mangle_prerouting"][1].endswith("meta mark set 0x2")


@pytest.mark.skipif(shutil.which("nft") is None, reason="nft is not installed")
def test_nft_accepts_the_table_with_metadata() -> None:
    gw = r.gateway("172.24.4.0/24", "172.24.4.10", "172.24.4.1", "fa:16:3e:00:00:02")
    desired = model.desired_router(r.router(
        [r.interface("10.0.0.0/24", "10.0.0.1", "fa:16:3e:00:00:01")], gw))
    done = subprocess.run(["nft", "-c", "-f", "-"], input=nat.table(desired, META),
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def _net(router_port: bool, v6: bool = False) -> tuple[dict, dict]:
    s4 = {"id": "s4", "cidr": "10.0.0.0/24", "ip_version": 4, "enable_dhcp": True,
          "gateway_ip": "10.0.0.1", "host_routes": [], "dns_nameservers": []}
    subnets = [s4]
    if v6:
        subnets.append({"id": "s6", "cidr": "fd00::/64", "ip_version": 6, "enable_dhcp": True,
                        "gateway_ip": "fd00::1", "ipv6_address_mode": "dhcpv6-stateful",
                        "host_routes": [], "dns_nameservers": []})
    dhcp_port = {"id": str(uuid.uuid4()), "device_owner": "network:dhcp",
                 "mac_address": "fa:16:3e:00:00:03",
                 "fixed_ips": [{"subnet_id": "s4", "ip_address": "10.0.0.2"}]
                 + ([{"subnet_id": "s6", "ip_address": "fd00::2"}] if v6 else [])}
    ports = [dhcp_port]
    if router_port:
        ports.append({"id": "rp", "device_owner": "network:router_interface",
                      "mac_address": "fa:16:3e:00:00:04",
                      "fixed_ips": [{"subnet_id": "s4", "ip_address": "10.0.0.1"}]
                      + ([{"subnet_id": "s6", "ip_address": "fd00::1"}] if v6 else [])})
    return {"id": "n", "subnets": subnets, "ports": ports}, dhcp_port


@pytest.mark.parametrize("routed,flags,serves,via", [
    (False, Flags(), False, None),
    (False, Flags(enable_isolated_metadata=True), True, "10.0.0.2"),
    (True, Flags(enable_isolated_metadata=True), False, "10.0.0.1"),
    (True, Flags(enable_isolated_metadata=True, force_metadata=True), True, "10.0.0.2"),
    (True, Flags(force_metadata=True), True, "10.0.0.2"),
    (True, Flags(), False, "10.0.0.1"),
])
def test_dhcp_serves_metadata_and_routes_169_254_169_254_as_upstream(
        routed: bool, flags: Flags, serves: bool, via: str | None) -> None:
    network, port = _net(routed, v6=True)
    assert should_serve(network, flags) is serves
    opts = dnsmasq.opts_file(network, dnsmasq.Settings(), route_ips(network, port, flags))
    routes = [line for line in opts.split("\n") if "classless-static-route" in line]
    if via is None:
        assert routes == []
    else:
        assert routes == [f"tag:subnet-s4,option:classless-static-route,"
                          f"169.254.169.254/32,{via},0.0.0.0/0,10.0.0.1"]


def test_an_isolated_ipv6_subnet_alone_is_enough_to_serve_metadata() -> None:
    network, _ = _net(True, v6=True)
    network["ports"][1]["fixed_ips"] = network["ports"][1]["fixed_ips"][:1]
    assert should_serve(network, Flags(enable_isolated_metadata=True))


def test_no_metadata_for_a_network_without_dhcp() -> None:
    network, _ = _net(False)
    network["subnets"][0]["enable_dhcp"] = False
    assert not should_serve(network, Flags(force_metadata=True))

"""DHCPv6 by real packets (root): the agent's dnsmasq in ``qdhcp-<net>`` on a
Linux bridge, ISC dhclient -6 in client namespaces on the same bridge.

One stateful network (dnsmasq leases the ports' fixed addresses) and one
stateless network (the guest takes a SLAAC address from a router's
advertisements and only asks dnsmasq for options). The router is emulated
by a dnsmasq that sends router advertisements and nothing else, standing in
for the L3 agent's radvd (or the external router upstream expects when only
``ipv6_address_mode`` is set): upstream's DHCP agent sends none itself.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest

from neutrino.agents import iproute
from neutrino.agents.bridge_interface import BridgeInterfaceDriver
from neutrino.agents.dhcp.dnsmasq import Settings
from neutrino.agents.dhcp.driver import DnsmasqDriver, namespace, port_cidrs
from neutrino.ipam.subnet_rules import eui64_address
from tests.dhcpagent._host import Host, dhcp, dhcp6, needs_dhclient, needs_root

pytestmark = [needs_root, needs_dhclient]

STATEFUL_CIDR, STATELESS_CIDR = "2001:db8:a::/64", "2001:db8:b::/64"
SUBNET_DNS = "2001:db8::53"
PORT_DNS = "2001:db8::99"


def _port(mac: str, *fixed: tuple[str, str], owner: str = "compute:nova",
          **kw: Any) -> dict[str, Any]:
    return {"id": str(uuid.uuid4()), "mac_address": mac, "device_owner": owner,
            "extra_dhcp_opts": [], **kw,
            "fixed_ips": [{"subnet_id": sid, "ip_address": ip} for sid, ip in fixed]}


def _subnet6(cidr: str, address_mode: str, ra_mode: str | None) -> dict[str, Any]:
    return {"id": str(uuid.uuid4()), "cidr": cidr, "ip_version": 6, "enable_dhcp": True,
            "gateway_ip": cidr.split("/")[0] + "1", "dns_nameservers": [SUBNET_DNS],
            "host_routes": [], "ipv6_address_mode": address_mode, "ipv6_ra_mode": ra_mode}


V6_DNS_OPT = {"opt_name": "dns-server", "opt_value": f"[{PORT_DNS}]", "ip_version": 6}


class Site:
    """Both networks served by one driver on one emulated host: stateful
    IPv6 only (no router: ``ipv6_ra_mode`` unset), and dual-stack with a
    stateless IPv6 subnet behind a router."""

    def __init__(self, host: Host, confs: str) -> None:
        self.host = host
        self.driver = DnsmasqDriver(confs, Settings(), BridgeInterfaceDriver(host.ns))
        sf = _subnet6(STATEFUL_CIDR, "dhcpv6-stateful", None)
        self.vm = _port("fa:16:3e:60:00:11", (sf["id"], "2001:db8:a::11"))
        self.vm_opts = _port("fa:16:3e:60:00:12", (sf["id"], "2001:db8:a::12"),
                             extra_dhcp_opts=[V6_DNS_OPT])
        self.stateful = {"id": str(uuid.uuid4()), "mtu": 1500, "subnets": [sf], "ports": [
            _port("fa:16:3e:60:00:02", (sf["id"], "2001:db8:a::2"), owner="network:dhcp"),
            self.vm, self.vm_opts]}

        sl = _subnet6(STATELESS_CIDR, "dhcpv6-stateless", "dhcpv6-stateless")
        v4 = {"id": str(uuid.uuid4()), "cidr": "10.78.0.0/24", "ip_version": 4,
              "enable_dhcp": True, "gateway_ip": "10.78.0.1", "dns_nameservers": [],
              "host_routes": []}

        def on_both(mac: str, v4_ip: str, **kw: Any) -> dict[str, Any]:
            return _port(mac, (v4["id"], v4_ip), (sl["id"], eui64_address(sl["cidr"], mac)),
                         **kw)
        self.slaac_vm = on_both("fa:16:3e:60:00:21", "10.78.0.21")
        self.slaac_vm_opts = on_both("fa:16:3e:60:00:22", "10.78.0.22",
                                     extra_dhcp_opts=[V6_DNS_OPT])
        self.router = _port("fa:16:3e:60:00:01", (v4["id"], "10.78.0.1"),
                            (sl["id"], "2001:db8:b::1"), owner="network:router_interface")
        self.stateless = {"id": str(uuid.uuid4()), "mtu": 1500, "subnets": [sl, v4], "ports": [
            on_both("fa:16:3e:60:00:03", "10.78.0.2", owner="network:dhcp"),
            self.router, self.slaac_vm, self.slaac_vm_opts]}
        self.nets = [self.stateful, self.stateless]

    def serve(self) -> None:
        for net in self.nets:
            self.driver.enable(net, net["ports"][0])

    def remove(self) -> None:
        for net in self.nets:
            self.driver.disable(net["id"], self.driver.device_name(net["ports"][0]))


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    # not under pytest's private temporary directory: dnsmasq re-reads its
    # files as an unprivileged user
    confs = tempfile.mkdtemp(prefix="dhcpt-confs-")
    os.chmod(confs, 0o755)
    host = Host()
    s = Site(host, confs)
    try:
        s.serve()
        yield s
    finally:
        s.remove()
        host.remove()
        shutil.rmtree(confs, ignore_errors=True)


@pytest.fixture(scope="module")
def router(site: Site, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The stateless network's router: advertises the prefix for SLAAC and
    serves no DHCP, so every DHCPv6 answer the clients get is the agent's.
    (Its RAs lack the O flag radvd would set; dhclient -S asks regardless.)"""
    ns = site.host.client(site.router["mac_address"], site.stateless["id"])
    iproute.ip("addr", "add", site.router["fixed_ips"][1]["ip_address"] + "/64", "dev", "eth0",
               "nodad", namespace=ns)
    pid_file = tmp_path_factory.mktemp("router") / "ra.pid"
    proc = subprocess.Popen(
        ["ip", "netns", "exec", ns, "dnsmasq", "--keep-in-foreground", "--port=0",
         "--conf-file=/dev/null", "--no-hosts", "--no-resolv", "--interface=eth0",
         "--bind-interfaces", f"--pid-file={pid_file}", "--enable-ra",
         "--dhcp-range=2001:db8:b::,ra-only,64,600"], stderr=subprocess.DEVNULL)
    try:
        yield ns
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _global_addresses(ns: str, timeout: float = 15) -> list[str]:
    """The client's autoconfigured global addresses, once it has any."""
    deadline = time.monotonic() + timeout
    while True:
        found = [a.split("/")[0] for a in iproute.addresses("eth0", ns)
                 if ":" in a and not a.startswith("fe80:")]
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def test_stateful_client_gets_exactly_its_fixed_ipv6_address_the_dns_server_and_domain(
        site: Site, tmp_path: Path) -> None:
    client = site.host.client(site.vm["mac_address"], site.stateful["id"])
    assert dhcp6(client, tmp_path) == {
        "ip": ["2001:db8:a::11"], "dns": [SUBNET_DNS], "domain": ["openstacklocal."]}


def test_stateful_client_not_in_the_hosts_file_gets_no_address(
        site: Site, tmp_path: Path) -> None:
    client = site.host.client("fa:16:3e:60:00:99", site.stateful["id"])
    assert dhcp6(client, tmp_path, timeout=5).get("ip", []) == []


def test_ipv6_extra_dhcp_opt_dns_server_reaches_the_port_it_belongs_to(
        site: Site, tmp_path: Path) -> None:
    client = site.host.client(site.vm_opts["mac_address"], site.stateful["id"])
    answer = dhcp6(client, tmp_path)
    assert answer["ip"] == ["2001:db8:a::12"]
    assert answer["dns"] == [PORT_DNS]


def test_stateless_client_takes_its_eui64_address_from_slaac_and_options_from_dhcpv6(
        site: Site, router: str, tmp_path: Path) -> None:
    client = site.host.client(site.slaac_vm["mac_address"], site.stateless["id"])
    assert _global_addresses(client) == [site.slaac_vm["fixed_ips"][1]["ip_address"]]
    assert dhcp6(client, tmp_path, stateless=True) == {
        "ip": [], "dns": [SUBNET_DNS], "domain": ["openstacklocal."]}


def test_the_dhcp_namespace_ignores_router_advertisements(
        site: Site, router: str) -> None:
    """Its addresses are the DHCP port's fixed IPs alone, and no default route
    is learnt, as upstream: it disables RAs before plugging the port."""
    client = site.host.client("fa:16:3e:60:00:98", site.stateless["id"])
    assert _global_addresses(client)  # a router advertisement went out
    port = site.stateless["ports"][0]
    ns, device = namespace(site.stateless["id"]), site.driver.device_name(port)
    assert iproute.ip("-6", "route", "show", "default", namespace=ns).strip() == ""
    assert sorted(a for a in iproute.addresses(device, ns) if not a.startswith("fe80:")) == \
        sorted(port_cidrs(site.stateless, port))


def test_dual_stack_port_with_v6_extra_opts_gets_its_ipv4_lease_and_its_v6_dns_server(
        site: Site, router: str, tmp_path: Path) -> None:
    """The port's address-less stateless entry in the hosts file is what tags
    its Information-Request with the port; its IPv4 entry still leases.
    (Upstream orders that entry first for older dnsmasq; 2.90 leases IPv4
    in either order, so this does not prove the order.)"""
    client = site.host.client(site.slaac_vm_opts["mac_address"], site.stateless["id"])
    assert dhcp(client, tmp_path)["ip"] == "10.78.0.22"
    assert dhcp6(client, tmp_path, stateless=True)["dns"] == [PORT_DNS]

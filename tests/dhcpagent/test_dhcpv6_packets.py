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
from neutrino.agents.dhcp.driver import DnsmasqDriver
from neutrino.ipam.subnet_rules import eui64_address
from tests.dhcpagent._host import Host, dhcp6, needs_dhclient, needs_root

pytestmark = [needs_root, needs_dhclient]

STATEFUL_CIDR, STATELESS_CIDR = "2001:db8:a::/64", "2001:db8:b::/64"
SUBNET_DNS = "2001:db8::53"
PORT_DNS = "2001:db8::99"


def _port(mac: str, subnet_id: str, ip: str, owner: str = "compute:nova",
          **kw: Any) -> dict[str, Any]:
    return {"id": str(uuid.uuid4()), "mac_address": mac, "device_owner": owner,
            "extra_dhcp_opts": [], "fixed_ips": [{"subnet_id": subnet_id, "ip_address": ip}],
            **kw}


def _network(cidr: str, mode: str, ports: list[dict[str, Any]],
             subnet_id: str) -> dict[str, Any]:
    prefix = cidr.split("/")[0]
    return {"id": str(uuid.uuid4()), "mtu": 1500, "ports": ports, "subnets": [{
        "id": subnet_id, "cidr": cidr, "ip_version": 6, "enable_dhcp": True,
        "gateway_ip": prefix + "1", "dns_nameservers": [SUBNET_DNS], "host_routes": [],
        "ipv6_address_mode": mode, "ipv6_ra_mode": mode}]}


class Site:
    """Both networks served by one driver on one emulated host."""

    def __init__(self, host: Host, confs: str) -> None:
        self.host = host
        self.driver = DnsmasqDriver(confs, Settings(), BridgeInterfaceDriver(host.ns))
        sf, sl = str(uuid.uuid4()), str(uuid.uuid4())
        self.vm = _port("fa:16:3e:60:00:11", sf, "2001:db8:a::11")
        self.vm_opts = _port("fa:16:3e:60:00:12", sf, "2001:db8:a::12", extra_dhcp_opts=[
            {"opt_name": "dns-server", "opt_value": f"[{PORT_DNS}]", "ip_version": 6}])
        self.stateful = _network(STATEFUL_CIDR, "dhcpv6-stateful", [
            _port("fa:16:3e:60:00:02", sf, "2001:db8:a::2", "network:dhcp"),
            self.vm, self.vm_opts], sf)
        mac = "fa:16:3e:60:00:21"
        self.slaac_vm = _port(mac, sl, eui64_address(STATELESS_CIDR, mac))
        self.router = _port("fa:16:3e:60:00:01", sl, "2001:db8:b::1",
                            "network:router_interface")
        self.stateless = _network(STATELESS_CIDR, "dhcpv6-stateless", [
            _port("fa:16:3e:60:00:03", sl, "2001:db8:b::2", "network:dhcp"),
            self.router, self.slaac_vm], sl)
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
    """The stateless network's router: advertises the prefix (SLAAC allowed,
    "other configuration" from DHCPv6) and serves no DHCP itself."""
    ns = site.host.client(site.router["mac_address"], site.stateless["id"])
    iproute.ip("addr", "add", site.router["fixed_ips"][0]["ip_address"] + "/64", "dev", "eth0",
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
    assert _global_addresses(client) == [site.slaac_vm["fixed_ips"][0]["ip_address"]]
    assert dhcp6(client, tmp_path, stateless=True) == {
        "ip": [], "dns": [SUBNET_DNS], "domain": ["openstacklocal."]}

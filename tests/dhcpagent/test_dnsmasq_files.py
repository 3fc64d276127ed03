"""What dnsmasq is given for a network: exactly upstream's files and arguments."""
from __future__ import annotations

from typing import Any

from neutrino.agents.dhcp import dnsmasq
from neutrino.agents.dhcp.dnsmasq import Files, Settings

NET = "9a4b6c1e-0000-4000-8000-000000000001"
S4 = "5b0d1f8e-0000-4000-8000-0000000000a4"
S6 = "5b0d1f8e-0000-4000-8000-0000000000a6"
P1 = "7c8e9f10-0000-4000-8000-000000000011"
P2 = "7c8e9f10-0000-4000-8000-000000000012"
DHCP = "7c8e9f10-0000-4000-8000-0000000000dd"
RTR = "7c8e9f10-0000-4000-8000-0000000000ee"
FILES = Files("/var/dhcp/" + NET)


def subnet4(**kw: Any) -> dict[str, Any]:
    return {"id": S4, "cidr": "10.0.0.0/24", "ip_version": 4, "enable_dhcp": True,
            "gateway_ip": "10.0.0.1", "dns_nameservers": [], "host_routes": [],
            "ipv6_address_mode": None, "ipv6_ra_mode": None, **kw}


def subnet6(mode: str | None, **kw: Any) -> dict[str, Any]:
    return {"id": S6, "cidr": "fd00::/64", "ip_version": 6, "enable_dhcp": True,
            "gateway_ip": "fd00::1", "dns_nameservers": [], "host_routes": [],
            "ipv6_address_mode": mode, "ipv6_ra_mode": mode, **kw}


def port(pid: str, mac: str, *ips: tuple[str, str], owner: str = "compute:nova",
         **kw: Any) -> dict[str, Any]:
    return {"id": pid, "mac_address": mac, "device_owner": owner, "extra_dhcp_opts": [],
            "fixed_ips": [{"subnet_id": s, "ip_address": ip} for s, ip in ips], **kw}


def network(subnets: list[dict[str, Any]], ports: list[dict[str, Any]],
            mtu: int = 1450) -> dict[str, Any]:
    return {"id": NET, "mtu": mtu, "subnets": subnets, "ports": ports}


def test_hosts_file_lists_each_fixed_ip_with_upstreams_host_names() -> None:
    net = network([subnet4()], [
        port(P1, "fa:16:3e:00:00:11", (S4, "10.0.0.11")),
        port(P2, "fa:16:3e:00:00:12", (S4, "10.0.0.12")),
        port(DHCP, "fa:16:3e:00:00:02", (S4, "10.0.0.2"), owner="network:dhcp")])
    assert dnsmasq.hosts_file(net, Settings()) == (
        "fa:16:3e:00:00:11,host-10-0-0-11.openstacklocal,10.0.0.11\n"
        "fa:16:3e:00:00:12,host-10-0-0-12.openstacklocal,10.0.0.12\n")
    assert dnsmasq.addn_hosts_file(net, Settings()) == (
        "10.0.0.11\thost-10-0-0-11.openstacklocal host-10-0-0-11\n"
        "10.0.0.12\thost-10-0-0-12.openstacklocal host-10-0-0-12\n")


def test_hosts_use_the_servers_dns_assignment_and_skip_dhcp_disabled_subnets() -> None:
    assigned = port(P1, "fa:16:3e:00:00:11", (S4, "10.0.0.11"), dns_assignment=[
        {"ip_address": "10.0.0.11", "hostname": "vm1", "fqdn": "vm1.example.org."}])
    net = network([subnet4()], [assigned])
    assert dnsmasq.hosts_file(net, Settings()) == "fa:16:3e:00:00:11,vm1.example.org.,10.0.0.11\n"
    off = network([subnet4(enable_dhcp=False)], [assigned])
    assert dnsmasq.hosts_file(off, Settings()) == ""
    assert dnsmasq.addn_hosts_file(off, Settings()) == "10.0.0.11\tvm1.example.org. vm1\n"


def test_no_domain_gives_bare_host_names() -> None:
    net = network([subnet4()], [port(P1, "fa:16:3e:00:00:11", (S4, "10.0.0.11"))])
    assert dnsmasq.hosts_file(net, Settings(dns_domain="")) == \
        "fa:16:3e:00:00:11,host-10-0-0-11,10.0.0.11\n"


def test_extra_dhcp_opts_tag_the_host_and_become_port_options() -> None:
    p = port(P1, "fa:16:3e:00:00:11", (S4, "10.0.0.11"), extra_dhcp_opts=[
        {"opt_name": "bootfile-name", "opt_value": "pxelinux.0", "ip_version": 4},
        {"opt_name": "150", "opt_value": "10.0.0.9", "ip_version": 4},
        {"opt_name": "tag:ipxe,bootfile-name", "opt_value": "http://b/ipxe", "ip_version": 4},
        {"opt_name": "dns-server", "opt_value": "[fd00::9]", "ip_version": 6}])
    net = network([subnet4()], [p])
    assert dnsmasq.hosts_file(net, Settings()) == (
        f"fa:16:3e:00:00:11,host-10-0-0-11.openstacklocal,10.0.0.11,set:port-{P1}\n")
    assert dnsmasq.opts_file(net, Settings()).split("\n")[-3:] == [
        f"tag:port-{P1},option:bootfile-name,pxelinux.0",
        f"tag:port-{P1},150,10.0.0.9",
        f"tag:port-{P1},tag:ipxe,option:bootfile-name,http://b/ipxe"]  # no IPv6 address: no v6 opt


def test_a_client_id_option_goes_into_the_host_line() -> None:
    only = port(P1, "fa:16:3e:00:00:11", (S4, "10.0.0.11"), extra_dhcp_opts=[
        {"opt_name": "client-id", "opt_value": "cid1", "ip_version": 4}])
    more = port(P2, "fa:16:3e:00:00:12", (S4, "10.0.0.12"), extra_dhcp_opts=[
        {"opt_name": "61", "opt_value": "cid2", "ip_version": 4},
        {"opt_name": "mtu", "opt_value": "1400", "ip_version": 4}])
    net = network([subnet4()], [only, more])
    assert dnsmasq.hosts_file(net, Settings()) == (
        "fa:16:3e:00:00:11,id:cid1,host-10-0-0-11.openstacklocal,10.0.0.11\n"
        f"fa:16:3e:00:00:12,id:cid2,host-10-0-0-12.openstacklocal,10.0.0.12,set:port-{P2}\n")
    assert dnsmasq.opts_file(net, Settings()).endswith(f"\ntag:port-{P2},option:mtu,1400")


def test_subnet_options_router_dns_and_classless_routes_with_host_routes() -> None:
    sub = subnet4(dns_nameservers=["8.8.8.8", "1.1.1.1"], host_routes=[
        {"destination": "192.168.5.0/24", "nexthop": "10.0.0.254"}])
    net = network([sub], [])
    tag = f"tag:subnet-{S4}"
    routes = "192.168.5.0/24,10.0.0.254,0.0.0.0/0,10.0.0.1"
    assert dnsmasq.opts_file(net, Settings()) == "\n".join([
        f"{tag},option:dns-server,8.8.8.8,1.1.1.1",
        f"{tag},option:classless-static-route,{routes}",
        f"{tag},249,{routes}",
        f"{tag},option:router,10.0.0.1"])


def test_a_routed_subnet_gets_the_metadata_route_via_its_gateway() -> None:
    router = port(RTR, "fa:16:3e:00:00:01", (S4, "10.0.0.1"), owner="network:router_interface")
    tag = f"tag:subnet-{S4}"
    routes = "169.254.169.254/32,10.0.0.1,0.0.0.0/0,10.0.0.1"
    assert dnsmasq.opts_file(network([subnet4()], [router]), Settings()) == "\n".join([
        f"{tag},option:classless-static-route,{routes}", f"{tag},249,{routes}",
        f"{tag},option:router,10.0.0.1"])
    # router port present, the hosts file still lists it (routers resolve by name)
    assert "10.0.0.1" in dnsmasq.hosts_file(network([subnet4()], [router]), Settings())


def test_no_gateway_announces_an_empty_router_and_a_default_host_route_stands_in() -> None:
    tag = f"tag:subnet-{S4}"
    assert dnsmasq.opts_file(network([subnet4(gateway_ip=None)], []), Settings()) == \
        f"{tag},option:router"
    via_route = subnet4(gateway_ip=None, host_routes=[
        {"destination": "0.0.0.0/0", "nexthop": "10.0.0.254"}])
    assert dnsmasq.opts_file(network([via_route], []), Settings()) == \
        f"{tag},option:router,10.0.0.254"


def test_dns_server_any_address_announces_none_and_two_dhcp_ports_announce_both() -> None:
    tag = f"tag:subnet-{S4}"
    no_dns = network([subnet4(dns_nameservers=["0.0.0.0"])], [])
    assert dnsmasq.opts_file(no_dns, Settings()) == (
        f"{tag},option:dns-server\n{tag},option:router,10.0.0.1")
    ports = [port(DHCP, "fa:16:3e:00:00:02", (S4, "10.0.0.2"), owner="network:dhcp"),
             port(P2, "fa:16:3e:00:00:03", (S4, "10.0.0.3"), owner="network:dhcp")]
    assert dnsmasq.opts_file(network([subnet4()], ports), Settings()).split("\n")[-1] == \
        f"{tag},option:dns-server,10.0.0.2,10.0.0.3"


def test_other_ipv4_subnets_of_the_network_are_on_link_routes() -> None:
    other = subnet4(id="other", cidr="10.1.0.0/24", gateway_ip="10.1.0.1")
    opts = dnsmasq.opts_file(network([subnet4(), other], []), Settings()).split("\n")
    assert opts[0] == (f"tag:subnet-{S4},option:classless-static-route,"
                       "10.1.0.0/24,0.0.0.0,0.0.0.0/0,10.0.0.1")


def test_command_line_as_upstream_for_an_ipv4_subnet() -> None:
    net = network([subnet4()], [], mtu=1450)
    d = FILES.conf_dir
    assert dnsmasq.command_line(net, Settings(), FILES) == [
        "dnsmasq", "--no-hosts", "--no-resolv", f"--pid-file={d}/pid",
        f"--dhcp-hostsfile={d}/host", f"--addn-hosts={d}/addn_hosts",
        f"--dhcp-optsfile={d}/opts", f"--dhcp-leasefile={d}/leases",
        "--dhcp-match=set:ipxe,175", "--dhcp-userclass=set:ipxe6,iPXE", "--local-service",
        "--bind-dynamic",
        f"--dhcp-range=set:subnet-{S4},10.0.0.0,static,255.255.255.0,86400s",
        "--dhcp-option-force=option:mtu,1450", "--dhcp-lease-max=256",
        "--conf-file=/dev/null", "--domain=openstacklocal"]


def test_command_line_options_follow_the_settings() -> None:
    net = network([subnet4(), subnet4(id="off", cidr="10.9.0.0/24", enable_dhcp=False)],
                  [], mtu=0)
    argv = dnsmasq.command_line(net, Settings(
        dhcp_lease_duration=-1, dnsmasq_lease_max=100, dnsmasq_dns_servers=("9.9.9.9",),
        dnsmasq_local_resolv=True, dnsmasq_config_file="/etc/dm.conf", dns_domain="",
        dhcp_broadcast_reply=True, dhcp_renewal_time=60, dhcp_rebinding_time=90), FILES)
    assert [a for a in argv if a.startswith("--dhcp-range")] == [
        f"--dhcp-range=set:subnet-{S4},10.0.0.0,static,255.255.255.0,infinite"]
    assert "--no-resolv" in argv  # forwarders given: never the host's resolv.conf
    assert not any(a.startswith("--dhcp-option-force=option:mtu") for a in argv)
    assert argv[argv.index("--dhcp-lease-max=100"):] == [
        "--dhcp-lease-max=100", "--dhcp-option-force=option:T1,60s",
        "--dhcp-option-force=option:T2,90s", "--conf-file=/etc/dm.conf",
        "--server=9.9.9.9", "--dhcp-broadcast"]
    assert "--no-resolv" not in dnsmasq.command_line(
        net, Settings(dnsmasq_local_resolv=True), FILES)


def test_ipv6_stateful_and_stateless_get_ranges_slaac_does_not() -> None:
    for mode in ("dhcpv6-stateful", "dhcpv6-stateless", None):
        for ra_mode in {mode, None}:  # an external router when only the address mode is set
            sub = subnet6(mode, ipv6_ra_mode=ra_mode)
            argv = dnsmasq.command_line(network([sub], []), Settings(), FILES)
            assert f"--dhcp-range=set:subnet-{S6},fd00::,static,64,86400s" in argv, mode
    for slaac in (subnet6("slaac"), subnet6(None, ipv6_ra_mode="slaac")):
        argv = dnsmasq.command_line(network([slaac], []), Settings(), FILES)
        assert not any(a.startswith("--dhcp-range") for a in argv)
    short = subnet6("dhcpv6-stateful", cidr="fd00::/56")
    assert not any(a.startswith("--dhcp-range") for a in
                   dnsmasq.command_line(network([short], []), Settings(), FILES))


def test_ipv6_hosts_stateful_leases_stateless_and_slaac_do_not() -> None:
    p = port(P1, "fa:16:3e:00:00:11", (S4, "10.0.0.11"), (S6, "fd00::11"))
    stateful = network([subnet4(), subnet6("dhcpv6-stateful")], [p])
    assert dnsmasq.hosts_file(stateful, Settings()) == (
        "fa:16:3e:00:00:11,host-10-0-0-11.openstacklocal,10.0.0.11\n"
        "fa:16:3e:00:00:11,tag:dhcpv6,host-fd00--11.openstacklocal,[fd00::11]\n")
    stateless = network([subnet4(), subnet6("dhcpv6-stateless")], [p])
    assert dnsmasq.hosts_file(stateless, Settings()) == (
        "fa:16:3e:00:00:11,host-10-0-0-11.openstacklocal,10.0.0.11\n")
    with_opts = dict(p, extra_dhcp_opts=[
        {"opt_name": "dns-server", "opt_value": "[fd00::9]", "ip_version": 6}])
    stateless_opts = network([subnet4(), subnet6("dhcpv6-stateless")], [with_opts])
    assert dnsmasq.hosts_file(stateless_opts, Settings()) == (  # the stateless entry first
        f"fa:16:3e:00:00:11,tag:dhcpv6,set:port-{P1}\n"
        f"fa:16:3e:00:00:11,host-10-0-0-11.openstacklocal,10.0.0.11,set:port-{P1}\n")
    assert dnsmasq.opts_file(stateless_opts, Settings()).endswith(
        f"tag:port-{P1},option6:dns-server,[fd00::9]")


def test_ipv6_subnet_options_use_option6_and_bracketed_addresses() -> None:
    sub = subnet6("dhcpv6-stateful", dns_nameservers=["fd00::53"])
    assert dnsmasq.opts_file(network([sub], []), Settings(dns_domain="")) == \
        f"tag:subnet-{S6},option6:dns-server,[fd00::53]"
    assert dnsmasq.opts_file(network([subnet6("slaac", dns_nameservers=["fd00::53"])], []),
                             Settings()) == ""


def test_ipv6_subnets_announce_the_dns_domain_as_domain_search() -> None:
    for mode in ("dhcpv6-stateful", "dhcpv6-stateless"):
        assert dnsmasq.opts_file(network([subnet4(), subnet6(mode)], []),
                                 Settings(dns_domain="example.org")).split("\n") == [
            f"tag:subnet-{S4},option:router,10.0.0.1",
            f"tag:subnet-{S6},option6:domain-search,example.org"]


def test_initial_leases_list_ipv4_hosts_expiring_one_lease_from_now() -> None:
    net = network([subnet4()], [port(P1, "fa:16:3e:00:00:11", (S4, "10.0.0.11"))])
    assert dnsmasq.leases_file(net, Settings(), now=1000) == \
        "87400 fa:16:3e:00:00:11 10.0.0.11 host-10-0-0-11 *\n"
    assert dnsmasq.leases_file(net, Settings(dhcp_lease_duration=-1), now=1000).startswith("0 ")


def test_render_bundles_all_files_and_the_command_line() -> None:
    net = network([subnet4()], [port(P1, "fa:16:3e:00:00:11", (S4, "10.0.0.11"))])
    out = dnsmasq.render(net, Settings(), FILES)
    assert (out.hosts, out.opts, out.argv[0]) == (
        dnsmasq.hosts_file(net, Settings()), dnsmasq.opts_file(net, Settings()), "dnsmasq")

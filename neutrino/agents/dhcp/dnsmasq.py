"""What dnsmasq is given for one network: files and a command line (pure).

The input is the network as the server's DHCP RPC describes it
(``get_network_info``: the network with its subnets and ports, plain dicts)
plus the agent's settings; the output is text and a list of arguments.
Nothing here touches the host, so tests compare exactly what is produced.
The formats are upstream's, so a guest sees the same leases and options
from this agent as from Neutron's: one ``dhcp-host`` line per fixed IP
(``MAC,host-10-0-0-5.openstacklocal,10.0.0.5``), options tagged by subnet
(``tag:subnet-<id>``) and by port (``tag:port-<id>``, for extra DHCP
options), and one ``--dhcp-range`` per DHCP-enabled subnet in ``static``
mode (only the addresses listed in the hosts file are leased).
"""
from __future__ import annotations

import dataclasses
import ipaddress
import os
from typing import Any, Iterator

DEVICE_OWNER_DHCP = "network:dhcp"
ROUTER_INTERFACE_OWNERS = ("network:router_interface",
                           "network:ha_router_replicated_interface",
                           "network:router_interface_distributed")
# Ports that never ask for a lease (upstream's DHCP_CONFIG_NOT_REQUIRED_OWNERS).
NO_DHCP_OWNERS = ("network:router_ha_interface", "network:floatingip",
                  DEVICE_OWNER_DHCP, "network:distributed")
SLAAC, STATEFUL, STATELESS = "slaac", "dhcpv6-stateful", "dhcpv6-stateless"
CLIENT_ID_OPTS = ("client-id", "61")
METADATA_CIDR = "169.254.169.254/32"
WIN2K3_STATIC_ROUTES = 249  # Windows reads classless routes from option 249
HOST_DHCPV6_TAG = "tag:dhcpv6,"


@dataclasses.dataclass(frozen=True)
class Settings:
    """The agent options the files depend on (upstream's option names)."""

    dns_domain: str = "openstacklocal"
    dhcp_lease_duration: int = 86400  # seconds; -1 is infinite
    dnsmasq_lease_max: int = 2 ** 24
    dnsmasq_dns_servers: tuple[str, ...] = ()
    dnsmasq_local_resolv: bool = False
    dnsmasq_config_file: str = ""
    dhcp_broadcast_reply: bool = False
    dhcp_renewal_time: int = 0
    dhcp_rebinding_time: int = 0


@dataclasses.dataclass(frozen=True)
class Files:
    """The file names of one network's dnsmasq, all in ``conf_dir``."""

    conf_dir: str

    def __getattr__(self, kind: str) -> str:
        if kind in ("host", "addn_hosts", "opts", "leases", "pid"):
            return os.path.join(self.conf_dir, kind)
        raise AttributeError(kind)


@dataclasses.dataclass(frozen=True)
class Rendered:
    hosts: str
    addn_hosts: str
    opts: str
    argv: list[str]


@dataclasses.dataclass(frozen=True)
class _Host:
    port: dict[str, Any]
    ip_address: str
    subnet_id: str
    hostname: str
    fqdn: str
    no_dhcp: bool  # SLAAC or stateless DHCPv6: the guest picks its own address
    no_opts: bool  # SLAAC: the guest asks nothing at all
    tag: str


def render(network: dict[str, Any], settings: Settings, files: Files,
           metadata_ips: dict[str, str] | None = None) -> Rendered:
    return Rendered(hosts_file(network, settings), addn_hosts_file(network, settings),
                    opts_file(network, settings, metadata_ips),
                    command_line(network, settings, files))


def dhcp_subnets(network: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in network.get("subnets") or [] if s.get("enable_dhcp")]


def needs_dhcp(port: dict[str, Any]) -> bool:
    return port.get("device_owner") not in NO_DHCP_OWNERS


# -- hosts ---------------------------------------------------------------------------------

def _names(ip: str, port: dict[str, Any], settings: Settings) -> tuple[str, str]:
    """The server's DNS assignment for ``ip`` if it made one, else ``host-<ip>``."""
    for assignment in port.get("dns_assignment") or []:
        if assignment.get("ip_address") == ip:
            return assignment["hostname"], assignment["fqdn"]
    hostname = "host-" + ip.replace(".", "-").replace(":", "-")
    fqdn = f"{hostname}.{settings.dns_domain}" if settings.dns_domain else hostname
    return hostname, fqdn


def _hosts(network: dict[str, Any], settings: Settings) -> Iterator[_Host]:
    v6 = {s["id"]: s for s in network.get("subnets") or [] if s.get("ip_version") == 6}

    def stateless_first(fixed: dict[str, Any]) -> bool:
        subnet = v6.get(fixed.get("subnet_id", ""))
        return bool(subnet) and subnet.get("ipv6_address_mode") == STATELESS

    for port in network.get("ports") or []:
        if not needs_dhcp(port):
            continue
        # dnsmasq reads a MAC's entries from the end: an address-less
        # stateless entry must come first or it hides the IPv4 one.
        for fixed in sorted(port.get("fixed_ips") or [], key=stateless_first, reverse=True):
            mode = v6[fixed["subnet_id"]].get("ipv6_address_mode") \
                if fixed.get("subnet_id") in v6 else None
            hostname, fqdn = _names(fixed["ip_address"], port, settings)
            yield _Host(port, fixed["ip_address"], fixed.get("subnet_id", ""), hostname, fqdn,
                        no_dhcp=mode in (SLAAC, STATELESS), no_opts=mode == SLAAC,
                        tag=HOST_DHCPV6_TAG if fixed.get("subnet_id") in v6 else "")


def _client_id(port: dict[str, Any]) -> str | None:
    for opt in port.get("extra_dhcp_opts") or []:
        if str(opt.get("opt_name")) in CLIENT_ID_OPTS:
            return str(opt.get("opt_value"))
    return None


def _literal(ip: str) -> str:
    return f"[{ip}]" if ":" in ip else ip


def hosts_file(network: dict[str, Any], settings: Settings) -> str:
    """``--dhcp-hostsfile``: who gets which address; ports with extra DHCP
    options also get their ``set:port-<id>`` tag."""
    enabled = {s["id"] for s in dhcp_subnets(network)}
    lines = []
    for host in _hosts(network, settings):
        port, mac = host.port, host.port["mac_address"]
        port_tag = f"set:port-{port['id']}"
        extra = port.get("extra_dhcp_opts") or []
        if host.no_dhcp:
            if not host.no_opts and extra:
                lines.append(f"{mac},{host.tag}{port_tag}")
            continue
        if host.subnet_id not in enabled:
            continue
        ip = _literal(host.ip_address)
        client_id = _client_id(port) if extra else None
        if client_id:
            entry = f"{mac},{host.tag}id:{client_id},{host.fqdn},{ip}"
            lines.append(entry + (f",{port_tag}" if len(extra) > 1 else ""))
        elif extra:
            lines.append(f"{mac},{host.tag}{host.fqdn},{ip},{port_tag}")
        else:
            lines.append(f"{mac},{host.tag}{host.fqdn},{ip}")
    return "".join(line + "\n" for line in lines)


def addn_hosts_file(network: dict[str, Any], settings: Settings) -> str:
    """``--addn-hosts``: names this dnsmasq answers for, leased here or not
    (the FQDN first so that reverse lookups return it)."""
    return "".join(f"{h.ip_address}\t{h.fqdn} {h.hostname}\n"
                   for h in _hosts(network, settings))


def leases_file(network: dict[str, Any], settings: Settings, now: int) -> str:
    """A lease file to start dnsmasq with: the IPv4 hosts already leased, so
    that a restarted dnsmasq acknowledges their renewals instead of refusing
    them. ``now`` is the current Unix time, passed in to keep this pure."""
    expiry = 0 if settings.dhcp_lease_duration == -1 else now + settings.dhcp_lease_duration
    enabled = {s["id"] for s in dhcp_subnets(network) if s.get("ip_version") == 4}
    return "".join(
        f"{expiry} {h.port['mac_address']} {h.ip_address} {h.hostname} "
        f"{_client_id(h.port) or '*'}\n"
        for h in _hosts(network, settings) if h.subnet_id in enabled)


# -- options -------------------------------------------------------------------------------

def option(ip_version: int, tag: str, name: Any, *values: str) -> str:
    """One ``--dhcp-optsfile`` line: IPv6 options are ``option6:``, named
    IPv4 ones ``option:``, numbered IPv4 ones bare; a ``tag:x,`` prefix in
    the option's name is kept as a second tag."""
    text = str(name).split("\n", 1)[0]
    extra_tag = ""
    if text.startswith("tag:") and "," in text:
        extra_tag, text = text.split(",", 1)
    if ip_version == 6:
        text = f"option6:{text}"
    elif not text.isdigit():
        text = f"option:{text}"
    parts = [f"tag:{tag}"] + ([extra_tag] if extra_tag else []) + [text]
    return ",".join(parts + [v.split("\n", 1)[0] for v in values])


def isolated_subnets(network: dict[str, Any]) -> dict[str, bool]:
    """A subnet is isolated unless a router interface holds its gateway IP."""
    gateways = {s["id"]: s.get("gateway_ip") for s in network.get("subnets") or []}
    routed = {f.get("subnet_id") for p in network.get("ports") or []
              if p.get("device_owner") in ROUTER_INTERFACE_OWNERS
              for f in p.get("fixed_ips") or []
              if gateways.get(f.get("subnet_id")) == f.get("ip_address")}
    return {sid: sid not in routed for sid in gateways}


def _any_address(servers: list[str], ip_version: int) -> bool:
    return any(ipaddress.ip_address(s).is_unspecified and
               ipaddress.ip_address(s).version == ip_version for s in servers)


def _subnet_options(network: dict[str, Any], settings: Settings,
                    metadata_ips: dict[str, str]) -> tuple[list[str], set[str]]:
    """Per subnet: DNS servers, IPv6 domain search list, routes (option 121
    and 249), router. The metadata route goes to the DHCP port's address
    where ``metadata_ips`` names one (the namespace serves metadata), else
    to a router's gateway."""
    lines: list[str] = []
    without_dns: set[str] = set()
    isolated = isolated_subnets(network)
    subnets = network.get("subnets") or []
    for subnet in subnets:
        version, tag = subnet.get("ip_version", 4), f"subnet-{subnet['id']}"
        if not subnet.get("enable_dhcp") or (
                version == 6 and subnet.get("ipv6_address_mode") == SLAAC):
            continue
        servers = list(subnet.get("dns_nameservers") or [])
        if servers and _any_address(servers, version):
            lines.append(option(version, tag, "dns-server"))  # announce none
        elif servers:
            lines.append(option(version, tag, "dns-server",
                                ",".join(_literal(s) if version == 6 else s for s in servers)))
        else:
            without_dns.add(subnet["id"])
        if version != 4:
            # dnsmasq's --domain reaches DHCPv4 clients only; a DHCPv6 client
            # learns the domain from this option alone.
            if settings.dns_domain:
                lines.append(option(6, tag, "domain-search", settings.dns_domain))
            continue
        gateway = subnet.get("gateway_ip")
        routes = []
        for route in subnet.get("host_routes") or []:
            if route["destination"] == "0.0.0.0/0":
                gateway = gateway or route["nexthop"]
            else:
                routes.append(f"{route['destination']},{route['nexthop']}")
        if metadata_ips.get(subnet["id"]):
            routes.append(f"{METADATA_CIDR},{metadata_ips[subnet['id']]}")
        elif not isolated.get(subnet["id"], True) and gateway:
            routes.append(f"{METADATA_CIDR},{gateway}")
        for other in subnets:  # on-link: the network's other IPv4 subnets
            if (other.get("ip_version") == 4 and other["cidr"] != subnet["cidr"]
                    and other.get("segment_id") == subnet.get("segment_id")):
                routes.insert(0, f"{other['cidr']},0.0.0.0")
        if routes:
            if gateway:
                routes.append(f"0.0.0.0/0,{gateway}")
            lines.append(option(4, tag, "classless-static-route", ",".join(routes)))
            lines.append(option(4, tag, WIN2K3_STATIC_ROUTES, ",".join(routes)))
        lines.append(option(4, tag, "router", *([gateway] if gateway else [])))
    return lines, without_dns


def _port_options(network: dict[str, Any], without_dns: set[str]) -> list[str]:
    """Per port: its extra DHCP options; and, for subnets served by several
    DHCP ports and given no DNS servers, every DHCP port's address."""
    lines = []
    dhcp_ips: dict[str, list[str]] = {}
    for port in network.get("ports") or []:
        versions = {ipaddress.ip_address(f["ip_address"]).version
                    for f in port.get("fixed_ips") or []}
        for opt in port.get("extra_dhcp_opts") or []:
            if str(opt.get("opt_name")) in CLIENT_ID_OPTS:
                continue
            version = int(opt.get("ip_version") or 4)
            if version in versions:
                lines.append(option(version, f"port-{port['id']}", opt["opt_name"],
                                    str(opt["opt_value"])))
        if port.get("device_owner") == DEVICE_OWNER_DHCP:
            for fixed in port.get("fixed_ips") or []:
                if fixed.get("subnet_id") in without_dns:
                    dhcp_ips.setdefault(fixed["subnet_id"], []).append(fixed["ip_address"])
    for subnet_id, ips in dhcp_ips.items():
        for version in (4, 6):
            same = [ip for ip in ips if ipaddress.ip_address(ip).version == version]
            if len(same) > 1:
                lines.append(option(version, f"subnet-{subnet_id}", "dns-server",
                                    ",".join(_literal(ip) for ip in same)))
    return lines


def opts_file(network: dict[str, Any], settings: Settings,
              metadata_ips: dict[str, str] | None = None) -> str:
    """``--dhcp-optsfile``: subnet options, then port options (no final newline,
    as upstream writes it)."""
    lines, without_dns = _subnet_options(network, settings, metadata_ips or {})
    return "\n".join(lines + _port_options(network, without_dns))


# -- command line ---------------------------------------------------------------------------

def _range(subnet: dict[str, Any], lease: str) -> tuple[str | None, int]:
    """The ``--dhcp-range`` of a subnet (None when it gets none) and how many
    leases it may hand out."""
    net = ipaddress.ip_network(subnet["cidr"], strict=False)
    tag = f"set:subnet-{subnet['id']}"
    if subnet.get("ip_version", 4) == 4:
        return f"--dhcp-range={tag},{net.network_address},static,{net.netmask},{lease}", \
            net.num_addresses
    mode, ra = subnet.get("ipv6_address_mode"), subnet.get("ipv6_ra_mode")
    if not (mode in (STATEFUL, STATELESS) or (not mode and not ra)):
        return None, 0  # SLAAC: router advertisements, no DHCP
    if net.prefixlen < 64:
        return None, 0
    return f"--dhcp-range={tag},{net.network_address},static,{net.prefixlen},{lease}", \
        net.num_addresses


def command_line(network: dict[str, Any], settings: Settings, files: Files) -> list[str]:
    argv = ["dnsmasq", "--no-hosts"]
    if settings.dnsmasq_dns_servers or not settings.dnsmasq_local_resolv:
        argv.append("--no-resolv")
    argv += [f"--pid-file={files.pid}", f"--dhcp-hostsfile={files.host}",
             f"--addn-hosts={files.addn_hosts}", f"--dhcp-optsfile={files.opts}",
             f"--dhcp-leasefile={files.leases}", "--dhcp-match=set:ipxe,175",
             "--dhcp-userclass=set:ipxe6,iPXE", "--local-service", "--bind-dynamic"]
    lease = ("infinite" if settings.dhcp_lease_duration == -1
             else f"{settings.dhcp_lease_duration}s")
    possible = 0
    for subnet in dhcp_subnets(network):
        arg, size = _range(subnet, lease)
        if arg:
            argv.append(arg)
            possible += size
    mtu = network.get("mtu") or 0
    if mtu > 0:
        argv.append(f"--dhcp-option-force=option:mtu,{mtu}")
    argv.append(f"--dhcp-lease-max={min(possible, settings.dnsmasq_lease_max)}")
    if settings.dhcp_renewal_time > 0:
        argv.append(f"--dhcp-option-force=option:T1,{settings.dhcp_renewal_time}s")
    if settings.dhcp_rebinding_time > 0:
        argv.append(f"--dhcp-option-force=option:T2,{settings.dhcp_rebinding_time}s")
    argv.append(f"--conf-file={settings.dnsmasq_config_file.strip() or '/dev/null'}")
    argv += [f"--server={server}" for server in settings.dnsmasq_dns_servers]
    if settings.dns_domain:
        argv.append(f"--domain={settings.dns_domain}")
    if settings.dhcp_broadcast_reply:
        argv.append("--dhcp-broadcast")
    return argv

"""The packet-path tracer's model: where one packet goes and what decides it.

A pure function of the cloud's facts as the API shows them (ports with
their security groups, port security and allowed address pairs; security
group rules; subnets; routers with their routes and gateways; floating
IPs) and of one packet (a source, a destination address, a protocol and a
destination port). It walks the path an ML2/OVS cloud gives that packet:
the source port's anti-spoofing and egress rules, its network, the router
interface and the router's routes, SNAT or a floating IP's translation,
the destination port's ingress rules. Each step is a hop naming the fact
that decided it, so a refusal says which rule is missing and a translation
says which address it became. Security groups are stateful here, as with
the ``openvswitch`` firewall driver, so only the first packet's direction
is traced.
"""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Any

ROUTER_INTERFACE_OWNERS = ("network:router_interface", "network:router_interface_distributed",
                           "network:ha_router_replicated_interface")
GATEWAY_OWNER = "network:router_gateway"
PROTOCOL_NUMBERS = {"icmp": 1, "tcp": 6, "udp": 17, "sctp": 132, "ipv6-icmp": 58}

ALLOWED = "allowed"
DENIED = "denied"
UNREACHABLE = "unreachable"


@dataclass(frozen=True)
class Packet:
    """The first packet of a connection: ``port_id`` or ``source_ip`` (an
    address outside the cloud, or a floating IP, whose port then sends)."""

    destination_ip: str
    protocol: str
    destination_port: int | None = None
    port_id: str | None = None
    source_ip: str | None = None


@dataclass
class Facts:
    ports: list[dict[str, Any]]
    rules: list[dict[str, Any]]
    subnets: list[dict[str, Any]]
    routers: list[dict[str, Any]] = field(default_factory=list)
    floatingips: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Trace:
    verdict: str = ALLOWED
    reason: str = ""
    hops: list[dict[str, Any]] = field(default_factory=list)

    def hop(self, kind: str, detail: str, **facts: Any) -> None:
        self.hops.append({"kind": kind, "detail": detail, **facts})

    def stop(self, verdict: str, reason: str) -> Trace:
        self.verdict, self.reason = verdict, reason
        return self

    def as_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "reason": self.reason, "hops": self.hops}


def _ip(address: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    return ipaddress.ip_address(address)


def _in(address: str, cidr: str | None) -> bool:
    if not cidr:
        return True
    try:
        return _ip(address) in ipaddress.ip_network(cidr, strict=False)
    except ValueError:
        return False


def _ethertype(address: str) -> str:
    return "IPv6" if _ip(address).version == 6 else "IPv4"


class _Cloud:
    """Indexes over the facts the walk keeps asking."""

    def __init__(self, facts: Facts) -> None:
        self.facts = facts
        self.ports = {p["id"]: p for p in facts.ports}
        self.subnets = {s["id"]: s for s in facts.subnets}
        self.routers = {r["id"]: r for r in facts.routers}

    def subnet_of(self, network_id: str, address: str) -> dict[str, Any] | None:
        for subnet in self.facts.subnets:
            if subnet["network_id"] == network_id and _in(address, subnet["cidr"]):
                return subnet
        return None

    def holder(self, address: str, network_id: str | None = None) -> dict[str, Any] | None:
        """The port with ``address`` as a fixed IP (on ``network_id``)."""
        for port in self.facts.ports:
            if network_id is not None and port["network_id"] != network_id:
                continue
            if port.get("device_owner") in ROUTER_INTERFACE_OWNERS + (GATEWAY_OWNER,):
                continue
            if any(ip["ip_address"] == address for ip in port.get("fixed_ips", ())):
                return port
        return None

    def members(self, group_id: str) -> list[dict[str, Any]]:
        return [p for p in self.facts.ports if group_id in (p.get("security_groups") or ())]

    def router_interface(self, subnet_id: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """The router attached to ``subnet_id`` and its interface port there."""
        for port in self.facts.ports:
            if port.get("device_owner") not in ROUTER_INTERFACE_OWNERS:
                continue
            if any(ip["subnet_id"] == subnet_id for ip in port.get("fixed_ips", ())):
                router = self.routers.get(port.get("device_id", ""))
                if router is not None:
                    return router, port
        return None

    def router_subnets(self, router_id: str) -> list[dict[str, Any]]:
        found = []
        for port in self.facts.ports:
            if port.get("device_id") == router_id and port.get("device_owner") in (
                    ROUTER_INTERFACE_OWNERS):
                found += [self.subnets[ip["subnet_id"]] for ip in port.get("fixed_ips", ())
                          if ip["subnet_id"] in self.subnets]
        return found

    def floating_ip_of(self, port_id: str, fixed_ip: str) -> dict[str, Any] | None:
        for fip in self.facts.floatingips:
            if fip.get("port_id") == port_id and fip.get("fixed_ip_address") == fixed_ip:
                return fip
        return None

    def floating_ip(self, address: str) -> dict[str, Any] | None:
        for fip in self.facts.floatingips:
            if fip.get("floating_ip_address") == address:
                return fip
        return None


def _first_ip(port: dict[str, Any], version: int) -> str | None:
    for ip in port.get("fixed_ips", ()):
        if _ip(ip["ip_address"]).version == version:
            return str(ip["ip_address"])
    return None


def _protected(port: dict[str, Any]) -> bool:
    return port.get("port_security_enabled", True) is not False


def _rule_matches(rule: dict[str, Any], direction: str, packet: Packet, remote: str,
                  cloud: _Cloud) -> bool:
    if rule["direction"] != direction or rule["ethertype"] != _ethertype(remote):
        return False
    protocol = rule.get("protocol")
    if protocol not in (None, "any", "0"):
        wanted = PROTOCOL_NUMBERS.get(packet.protocol)
        named = PROTOCOL_NUMBERS.get(str(protocol), None)
        number = named if named is not None else (
            int(protocol) if str(protocol).isdigit() else None)
        if protocol == "icmpv6":
            number = 58
        if number != wanted:
            return False
        if packet.protocol in ("tcp", "udp", "sctp") and packet.destination_port is not None:
            low, high = rule.get("port_range_min"), rule.get("port_range_max")
            if low is not None and not (low <= packet.destination_port <= (high or low)):
                return False
        if packet.protocol in ("icmp", "ipv6-icmp") and rule.get("port_range_min") is not None:
            echo = 8 if packet.protocol == "icmp" else 128  # the type a ping sends
            if rule["port_range_min"] != echo:
                return False
    if not _in(remote, rule.get("remote_ip_prefix")):
        return False
    group = rule.get("remote_group_id")
    if group and not any(any(ip["ip_address"] == remote for ip in p.get("fixed_ips", ()))
                         for p in cloud.members(group)):
        return False
    if rule.get("remote_address_group_id"):
        return False  # address groups are not among the facts the tracer reads
    return True


def _security_groups(trace: Trace, cloud: _Cloud, port: dict[str, Any], direction: str,
                     packet: Packet, remote: str) -> bool:
    """Whether ``port``'s groups let the packet go ``direction``; a hop says which rule."""
    if not _protected(port):
        trace.hop(f"security_group_{direction}", "port security is disabled on the port: "
                  "no security group applies", port_id=port["id"])
        return True
    groups = list(port.get("security_groups") or ())
    for rule in cloud.facts.rules:
        if rule["security_group_id"] in groups and _rule_matches(
                rule, direction, packet, remote, cloud):
            trace.hop(f"security_group_{direction}",
                      f"{direction} rule {rule['id']} of security group "
                      f"{rule['security_group_id']} allows it",
                      port_id=port["id"], security_group_rule_id=rule["id"],
                      security_group_id=rule["security_group_id"])
            return True
    what = packet.protocol + (f" port {packet.destination_port}"
                              if packet.destination_port is not None
                              and packet.protocol in ("tcp", "udp", "sctp") else "")
    trace.hop(f"security_group_{direction}",
              f"no {direction} rule of security groups {groups} allows {what} "
              f"{'to' if direction == 'egress' else 'from'} {remote}",
              port_id=port["id"], security_group_ids=groups)
    return False


def _anti_spoofing(trace: Trace, port: dict[str, Any], source: str) -> bool:
    if not _protected(port):
        trace.hop("port_security", "port security is disabled: any source address leaves",
                  port_id=port["id"])
        return True
    if any(ip["ip_address"] == source for ip in port.get("fixed_ips", ())):
        trace.hop("port_security", f"{source} is a fixed IP of the port", port_id=port["id"])
        return True
    for pair in port.get("allowed_address_pairs") or ():
        if _in(source, pair["ip_address"]):
            trace.hop("port_security", f"{source} is allowed by the address pair "
                      f"{pair['ip_address']}", port_id=port["id"])
            return True
    trace.hop("port_security", f"{source} is neither a fixed IP nor an allowed address pair "
              "of the port: dropped as spoofed", port_id=port["id"])
    return False


def _deliver(trace: Trace, cloud: _Cloud, packet: Packet, network_id: str, source: str,
             destination: str) -> Trace:
    """The last hop: the port holding ``destination`` on ``network_id`` and its ingress."""
    target = cloud.holder(destination, network_id)
    if target is None:
        return trace.stop(UNREACHABLE, f"no port on network {network_id} holds {destination}")
    trace.hop("destination_port", f"port {target['id']} holds {destination}",
              port_id=target["id"], network_id=network_id)
    if not _security_groups(trace, cloud, target, "ingress", packet, source):
        return trace.stop(DENIED, trace.hops[-1]["detail"])
    return trace.stop(ALLOWED, f"delivered to port {target['id']}")


def _from_outside(trace: Trace, cloud: _Cloud, packet: Packet, source: str) -> Trace:
    """A packet from an external address: only a floating IP lets it in."""
    fip = cloud.floating_ip(packet.destination_ip)
    if fip is None or not fip.get("port_id"):
        return trace.stop(UNREACHABLE, f"{packet.destination_ip} is no associated floating IP: "
                          "nothing inside answers for it")
    router = cloud.routers.get(fip.get("router_id") or "")
    trace.hop("floating_ip", f"router {fip.get('router_id')} translates destination "
              f"{fip['floating_ip_address']} to {fip['fixed_ip_address']} (floating IP "
              f"{fip['id']})", floatingip_id=fip["id"], router_id=fip.get("router_id"),
              translated_destination=fip["fixed_ip_address"])
    if router is None:
        return trace.stop(UNREACHABLE, "the floating IP has no router")
    port = cloud.ports.get(fip["port_id"])
    if port is None:
        return trace.stop(UNREACHABLE, f"the floating IP's port {fip['port_id']} is gone")
    return _deliver(trace, cloud, packet, port["network_id"], source, fip["fixed_ip_address"])


def _routed(trace: Trace, cloud: _Cloud, packet: Packet, port: dict[str, Any],
            subnet: dict[str, Any], source: str) -> Trace:
    """Off the source's subnet: its router's interfaces, routes and gateway."""
    destination = packet.destination_ip
    attached = cloud.router_interface(subnet["id"])
    if attached is None:
        return trace.stop(UNREACHABLE, f"{destination} is off subnet {subnet['id']} and no "
                          "router has an interface on it")
    router, interface = attached
    trace.hop("router_interface", f"to router {router['id']} through its interface "
              f"{subnet.get('gateway_ip')} (port {interface['id']})",
              router_id=router["id"], port_id=interface["id"])
    for inner in cloud.router_subnets(router["id"]):
        if inner["id"] != subnet["id"] and _in(destination, inner["cidr"]):
            trace.hop("route", f"{destination} is on the router's connected subnet "
                      f"{inner['cidr']}", router_id=router["id"], subnet_id=inner["id"])
            return _deliver(trace, cloud, packet, inner["network_id"], source, destination)
    for route in router.get("routes") or ():
        if _in(destination, route["destination"]):
            trace.hop("route", f"extra route {route['destination']} via {route['nexthop']}",
                      router_id=router["id"], nexthop=route["nexthop"])
            return trace.stop(ALLOWED, f"forwarded to next hop {route['nexthop']}")
    gateway = router.get("external_gateway_info") or None
    if not gateway:
        return trace.stop(UNREACHABLE, f"router {router['id']} has no route to {destination} "
                          "and no external gateway")
    fip = cloud.floating_ip_of(port["id"], source)
    if fip is not None:
        trace.hop("floating_ip", f"source {source} translated to floating IP "
                  f"{fip['floating_ip_address']} (floating IP {fip['id']})",
                  router_id=router["id"], floatingip_id=fip["id"],
                  translated_source=fip["floating_ip_address"])
        seen_as = fip["floating_ip_address"]
    elif gateway.get("enable_snat", True):
        external = [ip["ip_address"] for ip in gateway.get("external_fixed_ips", ())
                    if _ip(ip["ip_address"]).version == _ip(source).version]
        if not external:
            return trace.stop(UNREACHABLE, "the router's gateway has no address of the "
                              "packet's IP version to translate to")
        seen_as = external[0]
        trace.hop("snat", f"source {source} translated to the router's gateway IP {seen_as}",
                  router_id=router["id"], translated_source=seen_as)
    else:
        seen_as = source
        trace.hop("gateway", "SNAT is disabled: the source leaves untranslated",
                  router_id=router["id"])
    trace.hop("external_gateway", f"out through network {gateway['network_id']}",
              router_id=router["id"], network_id=gateway["network_id"])
    if cloud.floating_ip(destination) is not None:
        return _from_outside(trace, cloud, packet, seen_as)
    return trace.stop(ALLOWED, f"leaves the cloud on external network "
                      f"{gateway['network_id']} from {seen_as}")


def trace(facts: Facts, packet: Packet) -> Trace:
    """The hop-by-hop path of ``packet`` and its verdict."""
    cloud = _Cloud(facts)
    result = Trace()
    version = _ip(packet.destination_ip).version
    if packet.port_id is None:
        source = str(packet.source_ip)
        fip = cloud.floating_ip(source)
        if fip is None or not fip.get("port_id"):
            result.hop("source", f"{source} is outside the cloud", source_ip=source)
            return _from_outside(result, cloud, packet, source)
        port = cloud.ports[fip["port_id"]]
        packet = Packet(packet.destination_ip, packet.protocol, packet.destination_port,
                        port_id=port["id"])
        source = fip["fixed_ip_address"]
    else:
        port = cloud.ports[packet.port_id]
        source = packet.source_ip or _first_ip(port, version) or ""
        if not source:
            return result.stop(UNREACHABLE, f"the port has no IPv{version} address")
    result.hop("source", f"port {port['id']} on network {port['network_id']} sends from "
               f"{source}", port_id=port["id"], network_id=port["network_id"],
               source_ip=source)
    if not _anti_spoofing(result, port, source):
        return result.stop(DENIED, result.hops[-1]["detail"])
    if not _security_groups(result, cloud, port, "egress", packet, packet.destination_ip):
        return result.stop(DENIED, result.hops[-1]["detail"])
    subnet = cloud.subnet_of(port["network_id"], source)
    if subnet is not None and _in(packet.destination_ip, subnet["cidr"]):
        result.hop("network", f"{packet.destination_ip} is on the source's subnet "
                   f"{subnet['cidr']}: switched on network {port['network_id']}",
                   network_id=port["network_id"], subnet_id=subnet["id"])
        return _deliver(result, cloud, packet, port["network_id"], source,
                        packet.destination_ip)
    if subnet is None:
        return result.stop(UNREACHABLE, f"{source} is on no subnet of the port's network")
    return _routed(result, cloud, packet, port, subnet, source)

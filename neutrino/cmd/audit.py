"""``neutrino audit [--repair]``: what the database says each host should
have, next to what its Open vSwitch and DHCP agents report they have.

Run with the server's configuration (its database and ``transport_url``).
For each live OVS agent, the ports bound to its host (``binding:host_id``,
VIF type ``ovs``) are compared with the agent's answer to a
``realised_state`` call (``topics.AUDIT_OVS``): a port the host should have
and the agent has not wired, a wired port no longer bound there, a port
whose br-int tag is not the local VLAN the agent set (or that is gone from
the switch), a br-int port the agent has not wired (a stray one), and a
bridge holding fewer or more flows under the agent's cookie than it
programmed. For each live DHCP agent, the networks scheduled to it with
the (MAC, address) entries their dnsmasq should hold are compared with its
answer (``topics.AUDIT_DHCP``): a network not served, a missing ``qdhcp-``
namespace or dnsmasq, a missing or stale host entry, a network served but
not scheduled there. For each live L3 agent, what its router namespaces
should hold (``audit_l3``: a legacy router's ``qrouter-`` with its ports'
and floating IPs' addresses, the NAT of each floating IP and port
forwarding, the gateway's SNAT, its extra routes; an HA router's namespace
and keepalived on every host of its bindings, the addresses, NAT and
routes on the one the database says is active and none of the addresses
on a standby, where they would be a split brain; a distributed router's
``qrouter-`` on each compute host with a port it serves, that host's
``fip-`` with a route per floating IP of its instances, the ``snat-`` on
the ``dvr_snat`` node) is compared with the namespaces, addresses, routes,
NAT rules and keepalived processes on the host (``topics.AUDIT_L3``).
``--repair`` casts ``resync`` to the agents with differences (a full pass:
every flow and tag, every dnsmasq file, every router; an HA router's agent
then puts back what keepalived's state says) and audits again until they
are gone or the wait ends. Exit status: 0 nothing differs (after
the repair), 1 differences remain, 2 the question could not be asked.
"""
from __future__ import annotations

import argparse
import datetime as dt
import sys
import time
from typing import Any, Collection

import sqlalchemy as sa
from oslo_config import cfg

from neutrino.agents.dhcp.dnsmasq import NO_DHCP_OWNERS, STATEFUL
from neutrino.cmd import audit_l3
from neutrino.cmd.audit_l3 import l3_differences
from neutrino.conf.options import database_url
from neutrino.db import tables as t
from neutrino.db.engine import make_engine
from neutrino.plugins.ml2 import devices_db
from neutrino.rpc import topics
from neutrino.rpc.transport import rpc_transport
from neutrino.service import make_conf

OVS_AGENT = "Open vSwitch agent"
DHCP_AGENT = "DHCP agent"
L3_AGENT = "L3 agent"
TOPIC = {OVS_AGENT: topics.AUDIT_OVS, DHCP_AGENT: topics.AUDIT_DHCP, L3_AGENT: topics.AUDIT_L3}


def differences(host: str, bound: set[str], report: dict[str, Any] | None,
                shared: Collection[str] = ()) -> list[str]:
    """Every way ``report`` (None: the agent did not answer) differs from
    the ``bound`` ports the database gives ``host``; one line each.
    ``shared``: ports every host of their router wires (an HA router's,
    a distributed router's interfaces), bound to one host or none, so
    wired elsewhere too without being strays."""
    if report is None:
        return [f"{host}: the agent did not answer"]
    out = []
    ports = report.get("ports", {})
    for pid in sorted(bound - set(ports)):
        out.append(f"{host}: port {pid} is bound here but the agent has not wired it")
    for pid in sorted(set(ports) - bound - set(shared)):
        out.append(f"{host}: port {pid} is wired but no longer bound to this host")
    for pid, port in sorted(ports.items()):
        if not port["present"]:
            out.append(f"{host}: port {pid} is gone from br-int")
        elif port["switch_vlan"] != port["vlan"]:
            out.append(f"{host}: port {pid} is tagged {port['switch_vlan']} on the switch, "
                       f"the agent set local VLAN {port['vlan']}")
    for pid in report.get("unwired", ()):
        if pid in shared:
            continue
        out.append(f"{host}: br-int has a port for {pid}, which the agent has not wired "
                   "(a stray port, or one the server does not bind here)")
    for bridge, count in sorted(report.get("flows", {}).items()):
        if count["present"] != count["programmed"]:
            out.append(f"{host}: {bridge} holds {count['present']} flows under the agent's "
                       f"cookie, it programmed {count['programmed']}")
    return out


def dhcp_differences(host: str, served: dict[str, set[tuple[str, str]]],
                     report: dict[str, Any] | None) -> list[str]:
    """Every way a DHCP agent's ``report`` differs from the networks the
    database schedules to it, each with the (MAC, address) entries its
    dnsmasq should hold."""
    if report is None:
        return [f"{host}: the DHCP agent did not answer"]
    out = []
    networks = report.get("networks", {})
    for network_id, entries in sorted(served.items()):
        found = networks.get(network_id)
        if found is None:
            out.append(f"{host}: network {network_id} is scheduled here but not served")
            continue
        if not found["namespace"]:
            out.append(f"{host}: namespace qdhcp-{network_id} is missing")
        if not found["dnsmasq"]:
            out.append(f"{host}: dnsmasq of network {network_id} is not running")
        held = {(mac, ip) for mac, ip in found["hosts"]}
        for mac, ip in sorted(entries - held):
            out.append(f"{host}: dnsmasq of network {network_id} has no host entry "
                       f"{mac} {ip}")
        for mac, ip in sorted(held - entries):
            out.append(f"{host}: dnsmasq of network {network_id} has a stale host entry "
                       f"{mac} {ip}")
    for network_id in sorted(set(networks) - set(served)):
        out.append(f"{host}: network {network_id} is served here but not scheduled here")
    return out


def expected_l3(engine: Any, down_time: int) -> dict[str, dict[str, Any]]:
    """Host of a live L3 agent -> what its router namespaces should hold
    (``audit_l3.expected_l3``)."""
    with engine.connect() as conn:
        return audit_l3.expected_l3(conn, _live_hosts(conn, L3_AGENT, down_time))


def _live_hosts(conn: Any, agent_type: str, down_time: int) -> list[str]:
    since = (dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
             - dt.timedelta(seconds=down_time))
    return list(conn.execute(sa.select(t.agents.c.host).where(
        t.agents.c.agent_type == agent_type,
        t.agents.c.heartbeat_timestamp >= since)).scalars().all())


def expected_dhcp(engine: Any, down_time: int) -> dict[str, dict[str, set[tuple[str, str]]]]:
    """Host of a live DHCP agent -> network scheduled to it (with a DHCP
    subnet) -> the (MAC, address) entries its dnsmasq should hold: each
    port's address on a DHCP-enabled IPv4 or stateful DHCPv6 subnet."""
    with engine.connect() as conn:
        hosts = _live_hosts(conn, DHCP_AGENT, down_time)
        scheduled = conn.execute(
            sa.select(t.agents.c.host, t.networkdhcpagentbindings.c.network_id)
            .join(t.agents, t.agents.c.id == t.networkdhcpagentbindings.c.dhcp_agent_id)
            .where(t.agents.c.host.in_(hosts))).all()
        sub = t.subnets.c
        dhcp_subnets = conn.execute(sa.select(sub.id, sub.network_id).where(
            sub.enable_dhcp.is_(True),
            sa.or_(sub.ip_version == 4, sub.ipv6_address_mode == STATEFUL))).all()
        ip = t.ipallocations.c
        entries = conn.execute(
            sa.select(ip.network_id, ip.subnet_id, ip.ip_address, t.ports.c.mac_address)
            .join(t.ports, t.ports.c.id == ip.port_id)
            .where(t.ports.c.device_owner.not_in(NO_DHCP_OWNERS))).all()
    with_dhcp = {network_id for _, network_id in dhcp_subnets}
    enabled = {subnet_id for subnet_id, _ in dhcp_subnets}
    per_network: dict[str, set[tuple[str, str]]] = {}
    for network_id, subnet_id, address, mac in entries:
        if subnet_id in enabled:
            per_network.setdefault(network_id, set()).add((mac.lower(), address))
    out: dict[str, dict[str, set[tuple[str, str]]]] = {host: {} for host in hosts}
    for host, network_id in scheduled:
        if network_id in with_dhcp:
            out[host][network_id] = per_network.get(network_id, set())
    return out


def expected(engine: Any, down_time: int) -> dict[str, set[str]]:
    """Host -> the ports bound to it, for the hosts of live OVS agents."""
    with engine.connect() as conn:
        hosts = _live_hosts(conn, OVS_AGENT, down_time)
        bound: dict[str, set[str]] = {host: set() for host in hosts}
        rows = conn.execute(sa.select(t.ml2_port_bindings.c.port_id, t.ml2_port_bindings.c.host)
                            .where(t.ml2_port_bindings.c.vif_type == "ovs",
                                   t.ml2_port_bindings.c.host.in_(hosts))).all()
    for pid, host in rows:
        bound[host].add(pid)
    return bound


def shared_router_ports(engine: Any, bound: set[str],
                        report: dict[str, Any] | None) -> set[str]:
    """The ports a host wired or holds that are not bound to it but that
    every host of their router wires (``devices_db.router_ports_on_many_hosts``)."""
    if report is None:
        return set()
    others = (set(report.get("ports", {})) | set(report.get("unwired", ()))) - bound
    if not others:
        return set()
    with engine.connect() as conn:
        return devices_db.router_ports_on_many_hosts(conn, sorted(others))


class Agents:
    """Calls and casts to the agents of hosts, on their type's audit topic."""

    def __init__(self, conf: cfg.ConfigOpts, timeout: float) -> None:
        # deferred: only this command and the agents need oslo.messaging
        import oslo_messaging
        self._messaging = oslo_messaging
        self.transport = rpc_transport(conf)
        self.timeout = timeout

    def _client(self, host: str, agent_type: str) -> Any:
        target = self._messaging.Target(topic=TOPIC[agent_type], server=host, version="1.0")
        return self._messaging.get_rpc_client(self.transport, target, timeout=self.timeout)

    def realised(self, host: str, agent_type: str) -> dict[str, Any] | None:
        try:
            return dict(self._client(host, agent_type).call({}, "realised_state"))
        except self._messaging.MessagingException:
            return None

    def resync(self, host: str, agent_type: str) -> None:
        self._client(host, agent_type).cast({}, "resync")

    def close(self) -> None:
        self.transport.cleanup()


def audit(engine: Any, agents: Agents, down_time: int) -> dict[tuple[str, str], list[str]]:
    """(host, agent type) -> its differences (agents without any are left out)."""
    found: dict[tuple[str, str], list[str]] = {}
    for host, bound in sorted(expected(engine, down_time).items()):
        report = agents.realised(host, OVS_AGENT)
        diff = differences(host, bound, report, shared_router_ports(engine, bound, report))
        if diff:
            found[host, OVS_AGENT] = diff
    for host, served in sorted(expected_dhcp(engine, down_time).items()):
        diff = dhcp_differences(host, served, agents.realised(host, DHCP_AGENT))
        if diff:
            found[host, DHCP_AGENT] = diff
    for host, routers in sorted(expected_l3(engine, down_time).items()):
        diff = l3_differences(host, routers, agents.realised(host, L3_AGENT))
        if diff:
            found[host, L3_AGENT] = diff
    return found


def _show(found: dict[tuple[str, str], list[str]]) -> None:
    for lines in found.values():
        for line in lines:
            print(line)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="neutrino audit", description=(
        "compare what the database says each host should have with what its agents report"))
    parser.add_argument("--repair", action="store_true",
                        help="ask the agents that differ for a resync, then audit again")
    parser.add_argument("--wait", type=float, default=60,
                        help="how long a repair may take, in seconds (default 60)")
    parser.add_argument("--timeout", type=float, default=10,
                        help="how long an agent may take to answer, in seconds (default 10)")
    args, rest = parser.parse_known_args(argv)
    try:
        conf = make_conf(rest)
    except (cfg.Error, ValueError) as exc:
        print(f"neutrino audit: configuration error: {exc}", file=sys.stderr)
        return 2
    engine = make_engine(database_url(conf), reads_only=True)
    agents = Agents(conf, args.timeout)
    try:
        found = audit(engine, agents, conf.agent_down_time)
        _show(found)
        if not found:
            print("no differences")
            return 0
        if not args.repair:
            return 1
        for host, agent_type in found:
            agents.resync(host, agent_type)
            print(f"{host}: resync asked of the {agent_type}")
        deadline = time.monotonic() + args.wait
        while found and time.monotonic() < deadline:
            time.sleep(1)
            found = audit(engine, agents, conf.agent_down_time)
        _show(found)
        print("repaired: no differences" if not found else "differences remain")
        return 0 if not found else 1
    finally:
        agents.close()
        engine.dispose()

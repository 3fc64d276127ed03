"""``neutrino audit``'s L3 half: what the database says each L3 agent's host
should hold, per router kind, and how an agent's report differs from it.

The expectation of one namespace is a dict: ``addresses`` it must hold,
``absent`` addresses it must not (an HA standby's VIPs: holding them is a
split brain), ``nat`` the translations its table must do exactly (in the
words of ``agents/l3/audit.translations``), ``routes`` the next-hop routes
it must hold (``D via N``; None: not looked at), ``keepalived`` whether an
HA router's keepalived must run there, ``role`` the HA state the database
gives that host (named in the lines). Per host: ``routers`` (``qrouter-``),
``snat`` (a distributed router's ``snat-``) and ``fip`` (the host's
``fip-`` per external network).

- legacy router: on the host of its binding, every address of its ports
  and floating IPs (port forwardings' too), their NAT, its extra routes;
- HA router: on each host of an HA binding, the namespace, keepalived and
  the host's own ``ha-`` address; the table's NAT on all of them (the agent
  writes it everywhere, ready for a failover); on the active host the
  addresses and extra routes (keepalived's VIPs and virtual routes), on a
  standby none of those addresses;
- distributed router: on every ``dvr``/``dvr_snat`` host with a port it
  serves and on its SNAT host, ``qrouter-`` with the distributed
  interfaces' addresses, its extra routes and the 1:1 NAT of the floating
  IPs whose port is bound there; that host's ``fip-`` with its agent
  gateway port's address and a route per floating IP to the router's
  ``rfp-`` end; on the SNAT host ``snat-`` with the gateway's and the SNAT
  ports' addresses and the gateway's SNAT (neutrino's distributed routers
  do not forward ports).
"""
from __future__ import annotations

from typing import Any

import netaddr
import sqlalchemy as sa

from neutrino.agents.l3 import dvr
from neutrino.db import tables as t
from neutrino.plugins.l3 import common, dvr_hosts, dvr_sync
from neutrino.plugins.l3 import scheduler as sched
from neutrino.plugins.l3.ha import HA_INTERFACE

KINDS = {"routers": "qrouter-", "snat": "snat-", "fip": "fip-"}
NOT_QROUTER = (HA_INTERFACE, dvr_sync.CENTRALIZED_SNAT)


def _ports_text(start: int, end: int) -> str:
    return str(start) if start == end else f"{start}-{end}"


def _namespace(addresses: set[str] | None = None, nat: set[str] | None = None,
               routes: set[str] | None = None, **more: Any) -> dict[str, Any]:
    return {"addresses": addresses or set(), "nat": nat, "routes": routes,
            "absent": set(), "keepalived": False, "role": "", **more}


class _Facts:
    """The rows the expectation is made of, read in one connection."""

    def __init__(self, conn: Any, hosts: list[str]) -> None:
        r, a = t.routers.c, t.agents.c
        self.routers = {row.id: row for row in conn.execute(
            sa.select(r.id, r.ha, r.distributed, r.enable_snat, r.gw_port_id)
            .where(r.admin_state_up.is_(True)))}
        self.modes = {row.host: sched.agent_mode(row) for row in conn.execute(
            sa.select(t.agents).where(a.agent_type == "L3 agent", a.host.in_(hosts)))}
        bind = t.routerl3agentbindings.c
        self.bound = conn.execute(
            sa.select(a.host, bind.router_id).join(t.agents, a.id == bind.l3_agent_id)
            .where(a.host.in_(hosts))).all()
        ha = t.ha_router_agent_port_bindings.c
        self.ha = conn.execute(
            sa.select(a.host, ha.router_id, ha.state, ha.port_id)
            .join(t.agents, a.id == ha.l3_agent_id).where(a.host.in_(hosts))).all()
        ip, rp = t.ipallocations.c, t.routerports.c
        self.router_ports = conn.execute(
            sa.select(rp.router_id, rp.port_id, rp.port_type, ip.ip_address)
            .join(t.ipallocations, ip.port_id == rp.port_id)).all()
        self.port_addresses: dict[str, list[str]] = {}
        for row in self.router_ports:
            self.port_addresses.setdefault(row.port_id, []).append(row.ip_address)
        f, b = t.floatingips.c, t.ml2_port_bindings.c
        self.fips = conn.execute(
            sa.select(f.router_id, f.floating_ip_address, f.fixed_ip_address,
                      f.floating_network_id, b.host)
            .outerjoin(t.ml2_port_bindings, b.port_id == f.fixed_port_id)
            .where(f.fixed_port_id.is_not(None), f.router_id.is_not(None))).all()
        pf = t.portforwardings.c
        self.forwardings = conn.execute(
            sa.select(f.router_id, f.floating_ip_address, pf.protocol, pf.internal_ip_address,
                      pf.external_port_start, pf.external_port_end, pf.internal_port_start,
                      pf.internal_port_end)
            .join(t.floatingips, f.id == pf.floatingip_id)
            .where(f.router_id.is_not(None))).all()
        rr = t.routerroutes.c
        self.extra_routes: dict[str, set[str]] = {}
        for row in conn.execute(sa.select(rr.router_id, rr.destination, rr.nexthop)):
            self.extra_routes.setdefault(row.router_id, set()).add(
                f"{netaddr.IPNetwork(row.destination).cidr} via {row.nexthop}")
        p = t.ports.c
        self.fip_gateways = conn.execute(
            sa.select(b.host, p.network_id, ip.ip_address)
            .join(t.ports, p.id == b.port_id).join(t.ipallocations, ip.port_id == p.id)
            .where(p.device_owner == dvr_hosts.FIP_AGENT_GATEWAY,
                   b.host.in_(hosts))).all()
        ha_ports = [row.port_id for row in self.ha]
        self.ha_addresses: dict[str, list[str]] = {}
        if ha_ports:
            for row in conn.execute(sa.select(ip.port_id, ip.ip_address)
                                    .where(ip.port_id.in_(ha_ports))):
                self.ha_addresses.setdefault(row.port_id, []).append(row.ip_address)
        distributed = sorted(i for i, row in self.routers.items() if row.distributed)
        self.dvr_hosts = dvr_hosts.hosts_of(conn, distributed) if distributed else {}
        self.snat_hosts = dvr_sync.snat_hosts(conn, distributed) if distributed else {}

    def gateway_ips(self, router_id: str) -> list[str]:
        gw = self.routers[router_id].gw_port_id
        return sorted(self.port_addresses.get(gw, [])) if gw else []

    def snat_source(self, router_id: str) -> str | None:
        """The gateway's first IPv4 address, as the agent's SNAT takes it."""
        for address in [row.ip_address for row in self.router_ports
                        if row.port_id == self.routers[router_id].gw_port_id]:
            if ":" not in address:
                return str(address)
        return None

    def legacy_view(self, router_id: str) -> tuple[set[str], set[str]]:
        """A non-distributed router's addresses (its ports', its floating
        IPs', its forwarded floating IPs') and translations."""
        addresses = {row.ip_address for row in self.router_ports
                     if row.router_id == router_id and row.port_type not in NOT_QROUTER}
        nat: set[str] = set()
        has_gw = bool(self.routers[router_id].gw_port_id)
        for fip in self.fips:
            if fip.router_id == router_id and has_gw:
                addresses.add(fip.floating_ip_address)
                nat |= {f"dnat {fip.floating_ip_address} to {fip.fixed_ip_address}",
                        f"snat {fip.fixed_ip_address} to {fip.floating_ip_address}"}
        for pf in self.forwardings:
            if pf.router_id == router_id and has_gw:
                addresses.add(pf.floating_ip_address)
                nat.add(f"dnat {pf.protocol.lower()} {pf.floating_ip_address}:"
                        f"{_ports_text(pf.external_port_start, pf.external_port_end)} to "
                        f"{pf.internal_ip_address}:"
                        f"{_ports_text(pf.internal_port_start, pf.internal_port_end)}")
        source = self.snat_source(router_id)
        if self.routers[router_id].enable_snat and source:
            nat.add(f"snat to {source}")
        return addresses, nat


def _legacy(facts: _Facts, out: dict[str, dict[str, Any]]) -> None:
    for host, router_id in facts.bound:
        row = facts.routers.get(router_id)
        if row is None or row.ha or row.distributed:
            continue
        addresses, nat = facts.legacy_view(router_id)
        out[host]["routers"][router_id] = _namespace(
            addresses, nat, set(facts.extra_routes.get(router_id, ())))


def _ha(facts: _Facts, out: dict[str, dict[str, Any]]) -> None:
    for host, router_id, state, port_id in facts.ha:
        row = facts.routers.get(router_id)
        if row is None or not row.ha:
            continue
        vips, nat = facts.legacy_view(router_id)
        own = set(facts.ha_addresses.get(port_id, ()))
        active = state == "active"
        out[host]["routers"][router_id] = _namespace(
            own | (vips if active else set()), nat,
            set(facts.extra_routes.get(router_id, ())) if active else None,
            absent=vips if state == "standby" else set(), keepalived=True, role=state)


def _distributed(facts: _Facts, out: dict[str, dict[str, Any]]) -> None:
    for router_id, row in sorted(facts.routers.items()):
        if not row.distributed:
            continue
        interfaces = {r.ip_address for r in facts.router_ports if r.router_id == router_id
                      and r.port_type == dvr_hosts.INTERFACE_DISTRIBUTED}
        snat_host = facts.snat_hosts.get(router_id)
        hosts = facts.dvr_hosts.get(router_id, set()) | ({snat_host} if snat_host else set())
        rfp_address = dvr.pair_addresses(router_id)[0]
        for host in sorted(h for h in hosts if facts.modes.get(h) in dvr_hosts.DVR_MODES):
            local = [f for f in facts.fips if f.router_id == router_id and f.host == host
                     and row.gw_port_id and ":" not in f.floating_ip_address]
            gateways = {g.ip_address for g in facts.fip_gateways
                        if g.host == host and local
                        and g.network_id == local[0].floating_network_id}
            nat: set[str] = set()
            if gateways:  # the agent links the router to fip- once it has a gateway port
                for fip in local:
                    nat |= {f"dnat {fip.floating_ip_address} to {fip.fixed_ip_address}",
                            f"snat {fip.fixed_ip_address} to {fip.floating_ip_address}"}
                    fip_ns = out[host]["fip"].setdefault(
                        fip.floating_network_id, _namespace(set(gateways), None, set()))
                    fip_ns["routes"].add(f"{fip.floating_ip_address}/32 via {rfp_address}")
            out[host]["routers"][router_id] = _namespace(
                set(interfaces), nat, set(facts.extra_routes.get(router_id, ())))
            if (host == snat_host and facts.modes.get(host) == dvr_hosts.DVR_SNAT
                    and row.gw_port_id):
                sources = {r.ip_address for r in facts.router_ports if r.router_id == router_id
                           and r.port_type in (common.GATEWAY, dvr_sync.CENTRALIZED_SNAT)}
                source = facts.snat_source(router_id)
                out[host]["snat"][router_id] = _namespace(
                    sources, {f"snat to {source}"} if row.enable_snat and source else set())


def expected_l3(conn: Any, hosts: list[str]) -> dict[str, dict[str, Any]]:
    """Host of a live L3 agent -> ``routers``/``snat``/``fip`` -> id -> what
    that namespace should hold (the module's docstring says what)."""
    facts = _Facts(conn, hosts)
    out: dict[str, dict[str, Any]] = {host: {kind: {} for kind in KINDS} for host in hosts}
    _legacy(facts, out)
    _ha(facts, out)
    _distributed(facts, out)
    return out


def _label(kind: str, found_id: str) -> str:
    if kind == "routers":
        return f"router {found_id}"
    return f"{KINDS[kind]}{found_id}"


def _namespace_differences(host: str, kind: str, found_id: str, wanted: dict[str, Any],
                           found: dict[str, Any]) -> list[str]:
    out = []
    label = _label(kind, found_id)
    if wanted.get("role"):
        label += f" ({wanted['role']} here)"
    held = set(found.get("addresses", ()))
    for address in sorted(set(wanted["addresses"]) - held):
        out.append(f"{host}: {label} lacks address {address}")
    for address in sorted(set(wanted.get("absent", ())) & held):
        out.append(f"{host}: {label} holds address {address}, which only the active "
                   "host may (split brain)")
    if wanted.get("keepalived") and not found.get("keepalived"):
        out.append(f"{host}: {label}: keepalived is not running")
    if wanted.get("nat") is not None:
        out += _set_differences(f"{host}: {label}", "NAT", wanted["nat"],
                                set(found.get("nat", ())))
    if wanted.get("routes") is not None:
        # the default route is the gateway's, which the agent adds on its own
        out += _set_differences(f"{host}: {label}", "route", wanted["routes"],
                                set(found.get("routes", ())), own_prefix="default ")
    return out


def _set_differences(subject: str, noun: str, wanted: set[str], found: set[str],
                     own_prefix: str | None = None) -> list[str]:
    """What ``subject`` lacks of ``wanted`` and holds beyond it, in sorted
    order; a found entry starting with ``own_prefix`` is the agent's own
    doing, not a stray, so it is never reported as extra."""
    out = [f"{subject} lacks {noun} {entry}" for entry in sorted(wanted - found)]
    out += [f"{subject} has {noun} {entry} it should not" for entry in sorted(found - wanted)
            if own_prefix is None or not entry.startswith(own_prefix)]
    return out


def l3_differences(host: str, wanted: dict[str, dict[str, Any]],
                   report: dict[str, Any] | None) -> list[str]:
    """Every way an L3 agent's ``report`` differs from what the database
    says its host should hold (``expected_l3``'s for that host)."""
    if report is None:
        return [f"{host}: the L3 agent did not answer"]
    out = []
    for kind, prefix in KINDS.items():
        found = report.get(kind, {})
        for found_id, namespace in sorted(wanted.get(kind, {}).items()):
            if found_id not in found:
                out.append(f"{host}: namespace {prefix}{found_id} is missing")
                continue
            out += _namespace_differences(host, kind, found_id, namespace, found[found_id])
        for found_id in sorted(set(found) - set(wanted.get(kind, {}))):
            out.append(f"{host}: namespace {prefix}{found_id} is here but "
                       + ("no floating IP of this host needs it" if kind == "fip"
                          else "the router is not scheduled here"))
    return out

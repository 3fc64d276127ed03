"""Subnets: CIDR (explicit or from a pool), gateway, pools, DNS and routes."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import netaddr
import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.db import lookups, writes
from neutrino.db import tables as t
from neutrino.ipam import subnet_rules as rules
from neutrino.plugins import (
    address_scopes,
    networks,
    peer_routes,
    rbac,
    routed,
    store,
    subnetpools,
)
from neutrino.plugins.handler import Handler
from neutrino.plugins.joined import Aggregated, Computed
from neutrino.plugins.subnetpools import SubnetPools
from neutrino.resources.attributes import AUTO

ROUTER_OWNERS = ("network:router_interface", "network:router_interface_distributed",
                 "network:ha_router_replicated_interface")


def not_found(subnet_id: str) -> errors.SubnetNotFound:
    return errors.SubnetNotFound(subnet_id=subnet_id)


def visible_clause(ctx: Context) -> Any:
    """Own subnets, subnets on own networks and on networks shared with the caller."""
    if ctx.is_admin:
        return None
    owned = sa.select(t.networks.c.id).where(t.networks.c.project_id == ctx.project_id)
    return sa.or_(t.subnets.c.project_id == ctx.project_id,
                  t.subnets.c.network_id.in_(owned),
                  rbac.network_access_clause(ctx.project_id, t.subnets.c.network_id))


_POOLS = Aggregated(t.allocation_pools, "subnet_id", ("first_ip", "last_ip"), order_by=("id",))
_DNS = Aggregated(t.dns_nameservers, "subnet_id", ("address",), order_by=("position",))
_ROUTES = Aggregated(t.subnet_routes, "subnet_id", ("destination", "nexthop"))
_SERVICE_TYPES = Aggregated(t.subnet_service_types, "subnet_id", ("service_type",),
                            order_by=("service_type",))
# ``subnet-external-network``: whether the subnet's network is external;
# a new subnet's is the flag its create read (``create``).
_EXTERNAL = Computed("network__external",
                     lambda subnets: rbac.is_external_clause(subnets.c.network_id),
                     noted=("network_id", (t.externalnetworks,)))
# The network's external flag as a create reads it: one of the values the
# create's first read brings (``db/lookups.py``), in the transaction's
# snapshot as the read-back of the new subnet would.
_NETWORK_EXTERNAL = sa.select(rbac.is_external_clause(sa.bindparam("network")))
# The subnet's own child tables and facts, read with a single subnet's row.
CHILDREN = (store.TAGS, _POOLS, _DNS, _ROUTES, _SERVICE_TYPES, _EXTERNAL)


def to_dicts(conn: Connection, rows: Sequence[Any]) -> list[dict[str, Any]]:
    """API dicts of subnet rows. The child tables come from the rows when
    they were read with them (``CHILDREN``), else one batch query each."""
    ids = store.row_ids(rows)
    tags = store.child_rows(conn, rows, ids, store.TAGS)
    pools = store.child_rows(conn, rows, ids, _POOLS)
    dns = store.child_rows(conn, rows, ids, _DNS)
    routes = store.child_rows(conn, rows, ids, _ROUTES)
    service_types = store.child_rows(conn, rows, ids, _SERVICE_TYPES)
    if rows and _EXTERNAL.labels[0] in rows[0]._fields:
        at = [rows[0]._fields.index(_EXTERNAL.labels[0])]
        external = {r.network_id for r in rows if _EXTERNAL.read(r, at)}
    else:
        external = rbac.external_ids(conn, [r.network_id for r in rows]) if rows else set()
    out = store.empty_page_of(rows)
    for row in rows:
        d = store.standard_dict(row)
        d.update(network_id=row.network_id, ip_version=row.ip_version, cidr=row.cidr,
                 gateway_ip=row.gateway_ip, enable_dhcp=row.enable_dhcp,
                 ipv6_ra_mode=row.ipv6_ra_mode, ipv6_address_mode=row.ipv6_address_mode,
                 subnetpool_id=row.subnetpool_id, segment_id=row.segment_id,
                 allocation_pools=[{"start": first, "end": last}
                                   for _, first, last in pools[row.id]],
                 dns_nameservers=[address for _, address in dns[row.id]],
                 host_routes=[{"destination": dest, "nexthop": hop}
                              for _, dest, hop in routes[row.id]],
                 service_types=sorted(kind for _, kind in service_types[row.id]),
                 tags=[tag for _, tag in tags[row.id]])
        d["router:external"] = row.network_id in external
        out.append(d)
    return out


_SIBLINGS = sa.select(t.subnets.c.id, t.subnets.c.cidr, t.subnets.c.subnetpool_id,
                      t.subnets.c.ip_version, t.subnets.c.segment_id) \
    .where(t.subnets.c.network_id == sa.bindparam("network"))


class Subnets(Handler):
    table = t.subnets

    def __init__(self, conf: Any, pools: SubnetPools) -> None:
        self.conf = conf
        self.pools = pools

    def follows_revision(self, item: dict[str, Any]) -> bool:
        """A subnet on a segment has its peer routes rewritten when another
        segment's subnet comes or goes, its revision kept (as upstream);
        the others' pools, servers, routes and tags change with their
        revision. (``router:external``, its network's flag, is then as the
        request's read saw it.)"""
        return item.get("segment_id") is None

    def _check_pool_visible(self, conn: Connection, ctx: Context, pool_id: str,
                            version: int) -> None:
        """Another project's private pool does not exist for the caller; a
        pool of the other IP version is refused before anything is
        allocated from it (as upstream)."""
        row = store.get_row(conn, t.subnetpools, pool_id,
                            lambda: errors.SubnetPoolNotFound(subnetpool_id=pool_id))
        if not subnetpools.visible_to(conn, ctx, row):
            raise errors.SubnetPoolNotFound(subnetpool_id=pool_id)
        if row.ip_version != version:
            raise errors.BadRequest(resource="subnets", msg=(
                f"Cannot allocate IPv{version} subnet from IPv{row.ip_version} subnet pool"))

    def _resolve_cidr(self, conn: Connection, ctx: Context,
                      data: dict[str, Any]) -> tuple[str, str | None]:
        pool_id = data.get("subnetpool_id")
        version = data["ip_version"]
        if pool_id is not None:
            self._check_pool_visible(conn, ctx, pool_id, version)
        if pool_id is None and data.get("use_default_subnetpool"):
            pool_id = self.pools.default_pool(conn, version)
            if pool_id is None:
                raise errors.BadRequest(resource="subnets",
                                        msg=f"No default subnetpool found for IPv{version}")
        if pool_id is None:
            if data.get("cidr") is None:
                raise errors.BadRequest(resource="subnets",
                                        msg="a subnetpool must be specified in the "
                                            "absence of a cidr")
            if data.get("prefixlen") is not None:
                raise errors.BadRequest(resource="subnets",
                                        msg="prefixlen can only be used with a subnet pool")
            return data["cidr"], None
        if data.get("cidr") is not None and data.get("prefixlen") is not None:
            raise errors.BadRequest(resource="subnets",
                                    msg="cidr and prefixlen must not be supplied together")
        cidr = self.pools.allocate(conn, pool_id, data.get("project_id"),
                                   data.get("cidr"), data.get("prefixlen"))
        return cidr, pool_id

    def _check_overlap(self, conn: Connection, network_id: str, cidr: str,
                       exclude: str | None = None, siblings: Sequence[Any] | None = None) -> None:
        """``cidr`` overlaps no subnet of the network (of any network without
        ``allow_overlapping_ips``); ``siblings``: the network's, if read."""
        if self.conf.allow_overlapping_ips and siblings is not None:
            rows: Any = siblings
        else:
            stmt = sa.select(t.subnets.c.id, t.subnets.c.cidr)
            if self.conf.allow_overlapping_ips:
                stmt = stmt.where(t.subnets.c.network_id == network_id)
            rows = conn.execute(stmt)
        new = netaddr.IPNetwork(cidr)
        for row in rows:
            if row.id != exclude and netaddr.IPNetwork(row.cidr) in _supernets(new):
                raise rules.invalid(f"Requested subnet with cidr: {cidr} for network: "
                                    f"{network_id} overlaps with another subnet")

    def create(self, conn: Connection, ctx: Context, data: dict[str, Any]) -> str:
        network_id = data["network_id"]
        network = store.get_row(conn, t.networks, network_id,
                                lambda: networks.not_found(network_id), for_update=True)
        segment_id = data.get("segment_id")
        if segment_id:
            routed.segment_row(conn, segment_id)
        version = data["ip_version"]
        if data.get("cidr") is not None:
            rules.check_version(data["cidr"], version)
        cidr, pool_id = self._resolve_cidr(conn, ctx, data)
        net = rules.check_version(cidr, version)
        rules.check_usable(net, data.get("enable_dhcp", True), data.get("ipv6_ra_mode"),
                           data.get("ipv6_address_mode"))
        rules.check_ipv6_modes(version, data.get("ipv6_ra_mode"),
                               data.get("ipv6_address_mode"), net)
        gateway = data.get("gateway_ip", AUTO)
        gateway = rules.default_gateway(net) if gateway is AUTO else gateway
        rules.check_gateway(net, gateway)
        if data.get("allocation_pools") is None:
            pools = rules.default_pools(net, gateway)
        else:
            pools = rules.check_pools(net, data["allocation_pools"], gateway)
        # Upstream starts subnets at revision 0: nothing bumps them on create.
        row = store.standard_row(ctx.project_id, data, revision=0)
        dns = data.get("dns_nameservers") or []
        routes = data.get("host_routes") or []
        rules.check_nameservers("new subnet", dns, version)
        rules.check_routes("new subnet", routes, version)
        rules.check_mtu_fits(network_id, network.mtu or None, {version})
        # The network's subnets once, for the overlap, pool and segment rules
        # (the network's row is locked: none is added meanwhile).
        siblings = conn.execute(_SIBLINGS, {"network": network_id}).all()
        if segment_id is not None and data.get("gateway_ip", AUTO) not in (AUTO, None):
            # Routes to the other segments' subnets through the given gateway.
            peers = peer_routes.calculate(siblings, version, segment_id, routes, gateway)
            if not routes or peer_routes.differ(routes, peers):
                routes = peers
                rules.check_routes("new subnet", routes, version)
        self._check_overlap(conn, network_id, cidr, siblings=siblings)
        address_scopes.check_network_subnetpools(conn, network_id, version, pool_id, siblings)
        row.update(network_id=network_id, ip_version=version, cidr=cidr, gateway_ip=gateway,
                   enable_dhcp=data.get("enable_dhcp", True),
                   ipv6_ra_mode=data.get("ipv6_ra_mode"),
                   ipv6_address_mode=data.get("ipv6_address_mode"),
                   subnetpool_id=pool_id, segment_id=segment_id)
        store.insert(conn, t.subnets, row)
        routed.check_subnet_segment(conn, network_id, segment_id, siblings=siblings)
        self._write_children(conn, row["id"], pools, dns, routes, replace=False)
        _write_service_types(conn, row["id"], data.get("service_types") or [], replace=False)
        if segment_id is not None and siblings:
            peer_routes.refresh(conn, network_id)
        if data.get("tags"):
            store.tag_new(conn, row["id"], data["tags"])
        store.bump(conn, t.networks, network_id)
        written = writes.current()
        if written is not None:  # the read-back's external flag, known
            _EXTERNAL.note(written, network_id, lookups.scalar(
                conn, _NETWORK_EXTERNAL, {"network": network_id}))
        return row["id"]

    def lookups(self, data: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return (_NETWORK_EXTERNAL,), {"network": data.get("network_id")}

    def _write_children(self, conn: Connection, subnet_id: str,
                        pools: list[dict[str, str]] | None, dns: list[str] | None,
                        routes: list[dict[str, str]] | None, replace: bool = True) -> None:
        """Pools, DNS servers and routes given (None: unchanged); ``replace``
        deletes the old ones first (a new subnet has none)."""
        if pools is not None:
            if replace:
                conn.execute(sa.delete(t.allocation_pools)
                             .where(t.allocation_pools.c.subnet_id == subnet_id))
            if pools:
                store.insert(conn, t.allocation_pools, [
                    {"subnet_id": subnet_id, "first_ip": p["start"], "last_ip": p["end"]}
                    for p in pools])
        if dns is not None:
            if replace:
                conn.execute(sa.delete(t.dns_nameservers)
                             .where(t.dns_nameservers.c.subnet_id == subnet_id))
            if dns:
                conn.execute(sa.insert(t.dns_nameservers), [
                    {"subnet_id": subnet_id, "address": a, "position": i}
                    for i, a in enumerate(dns)])
        if routes is not None:
            if replace:
                conn.execute(sa.delete(t.subnet_routes)
                             .where(t.subnet_routes.c.subnet_id == subnet_id))
            if routes:
                conn.execute(sa.insert(t.subnet_routes), [
                    {"subnet_id": subnet_id, **r} for r in routes])

    def get(self, conn: Connection, subnet_id: str) -> dict[str, Any]:
        row = store.get_row(conn, t.subnets, subnet_id, lambda: not_found(subnet_id),
                            joined=CHILDREN)
        return to_dicts(conn, [row])[0]

    def list(self, conn: Connection, ctx: Context, query: store.ListQuery) -> tuple[list[dict[str, Any]], bool]:
        # ``shared`` is the network's sharing as the caller sees it (policy
        # targets get it from ``networks_of``; the attribute is never shown).
        special = {"shared": lambda vals: rbac.bool_filter(ctx.project_id,
                                                           t.subnets.c.network_id, vals),
                   "router:external": lambda vals: rbac.is_external_filter(
                       t.subnets.c.network_id, vals)}
        clauses = store.column_clauses(t.subnets, query.filters, special)
        scope = visible_clause(ctx)
        if scope is not None:
            clauses.append(scope)
        rows, more = store.paged_select(conn, t.subnets, clauses, query,
                                        columns=_EXTERNAL.columns(t.subnets))
        if len(rows) <= store.SHOWN_ALONE:
            return store.shown_alone(rows, lambda rid: self.get(conn, rid)), more
        return to_dicts(conn, rows), more

    def update(self, conn: Connection, ctx: Context, subnet_id: str, data: dict[str, Any],
               revision: int | None) -> None:
        store.get_row(conn, t.subnets, subnet_id, lambda: not_found(subnet_id), for_update=True)
        current = self.get(conn, subnet_id)
        if "segment_id" in data:
            # ``subnet-segmentid-writable``: bind a subnet to its network's segment.
            routed.check_subnet_segment(conn, current["network_id"], data["segment_id"],
                                        old_segment_id=current["segment_id"])
        net = netaddr.IPNetwork(current["cidr"])
        gateway = data.get("gateway_ip", current["gateway_ip"])
        rules.check_gateway(net, gateway)
        if "gateway_ip" in data:
            _check_gateway_not_routed(conn, subnet_id, current["gateway_ip"], gateway)
        if "enable_dhcp" in data:
            rules.check_usable(net, data["enable_dhcp"], current["ipv6_ra_mode"],
                               current["ipv6_address_mode"])
        pools = data.get("allocation_pools")
        if pools is not None:
            pools = rules.check_pools(net, pools, gateway)
        elif "gateway_ip" in data:
            rules.check_pools(net, current["allocation_pools"], gateway)
        if data.get("dns_nameservers") is not None:
            rules.check_nameservers(subnet_id, data["dns_nameservers"], current["ip_version"])
        if data.get("host_routes") is not None:
            rules.check_routes(subnet_id, data["host_routes"], current["ip_version"])
        values = {k: data[k] for k in ("name", "description", "enable_dhcp", "gateway_ip",
                                       "segment_id") if k in data}
        dns = data["dns_nameservers"] or [] if "dns_nameservers" in data else None
        routes = data["host_routes"] or [] if "host_routes" in data else None
        routes = self._with_peer_routes(conn, current, data, routes)
        self._write_children(conn, subnet_id, pools, dns, routes)
        if "service_types" in data:
            _write_service_types(conn, subnet_id, data["service_types"] or [])
        store.bump(conn, t.subnets, subnet_id, values, revision)

    def delete(self, conn: Connection, subnet_id: str, revision: int | None) -> None:
        row = store.get_row(conn, t.subnets, subnet_id, lambda: not_found(subnet_id),
                            for_update=True)
        store.check_revision(conn, t.subnets, subnet_id, revision)
        if rules.is_auto_address_subnet(dict(row._mapping)):
            # Addresses a port derived by itself (SLAAC) go with the subnet,
            # as upstream; only router ports keep such a subnet in use.
            not_router = t.ports.c.device_owner.not_like("network:router%")
            _bump_ports_with(conn, subnet_id, not_router)
            a = t.ipallocations
            conn.execute(sa.delete(a).where(a.c.subnet_id == subnet_id, sa.exists().where(
                t.ports.c.id == a.c.port_id, not_router)))
        # SLAAC addresses are derived, not allocated: only router ports
        # (which hold the subnet's gateway) keep an auto-address subnet alive.
        harmless = (networks.AUTO_DELETE_OWNERS if not rules.is_auto_address_subnet(
            row._mapping) else None)
        owner = t.ports.c.device_owner
        users = sa.select(t.ports.c.id).where(
            t.ports.c.id.in_(sa.select(t.ipallocations.c.port_id)
                             .where(t.ipallocations.c.subnet_id == subnet_id)),
            owner.not_in(harmless) if harmless else owner.in_(ROUTER_OWNERS))
        if conn.execute(users.limit(1)).first() is not None:
            raise errors.SubnetInUse(subnet_id=subnet_id,
                                     reason="One or more ports have an IP allocation "
                                            "from this subnet")
        _bump_ports_with(conn, subnet_id)
        conn.execute(sa.delete(t.ipallocations).where(t.ipallocations.c.subnet_id == subnet_id))
        store.delete_tags(conn, subnet_id)
        conn.execute(sa.delete(t.subnets).where(t.subnets.c.id == subnet_id))
        if row.segment_id:  # the other segments' subnets drop their routes to it
            peer_routes.refresh(conn, row.network_id, deleted_cidr=row.cidr)
        store.bump(conn, t.networks, row.network_id)

    @staticmethod
    def _with_peer_routes(conn: Connection, current: dict[str, Any], data: dict[str, Any],
                          routes: list[dict[str, str]] | None) -> list[dict[str, str]] | None:
        """The routes an update writes on a segment's subnet whose routes or
        gateway change: its peer routes through the (new) gateway."""
        segment_id = data.get("segment_id", current["segment_id"])
        asked = current["host_routes"] if routes is None else routes
        gateway, old_gateway = data.get("gateway_ip", current["gateway_ip"]), current["gateway_ip"]
        if not segment_id or (asked == current["host_routes"] and gateway == old_gateway):
            return routes
        peers = peer_routes.calculate(
            peer_routes.network_subnets(conn, current["network_id"]), current["ip_version"],
            segment_id, asked, gateway,
            old_gateway_ip=old_gateway if gateway != old_gateway else None)
        return peers if peer_routes.differ(asked, peers) else routes


def _write_service_types(conn: Connection, subnet_id: str, kinds: list[str],
                         replace: bool = True) -> None:
    if replace:
        conn.execute(sa.delete(t.subnet_service_types)
                     .where(t.subnet_service_types.c.subnet_id == subnet_id))
    if len(set(kinds)) != len(kinds):
        twice = next(k for k in kinds if kinds.count(k) > 1)
        raise errors.NeutronDbObjectDuplicateEntry(
            object_type="SubnetServiceType", attributes="['PRIMARY']",
            values=f"{subnet_id}-{twice}")
    if kinds:
        store.insert(conn, t.subnet_service_types,
                     [{"subnet_id": subnet_id, "service_type": k} for k in kinds])


def _check_gateway_not_routed(conn: Connection, subnet_id: str, old: str | None,
                              new: str | None) -> None:
    """A router's port holding the subnet's gateway address is what makes
    it the gateway: moving or removing the gateway under it would leave
    the subnet's hosts routing to an address nobody answers."""
    if old is None or (new is not None and netaddr.IPAddress(new) == netaddr.IPAddress(old)):
        return
    a, rp = t.ipallocations.c, t.routerports.c
    holder = conn.execute(sa.select(a.port_id).join_from(
        t.ipallocations, t.routerports, rp.port_id == a.port_id)
        .where(a.subnet_id == subnet_id, a.ip_address == old).limit(1)).first()
    if holder is not None:
        raise errors.GatewayIpInUse(ip_address=old, port_id=holder.port_id)


def _bump_ports_with(conn: Connection, subnet_id: str, *which: Any) -> None:
    """The ports (``which`` of them) with an address on the subnet lose it
    with the subnet: a change of each port, which advances its revision as
    upstream's port update does (and as ``row_memo`` relies on)."""
    # A join, not ``id IN (SELECT ...)``: MariaDB runs an UPDATE's IN
    # subquery once per row of ports, the whole table; joined it starts from
    # the subnet's addresses. (A port with two addresses there still
    # advances once: every backend updates a row once per statement.)
    a = t.ipallocations
    store.bump_where(conn, t.ports, t.ports.c.id == a.c.port_id, a.c.subnet_id == subnet_id,
                     *which)


def _supernets(net: netaddr.IPNetwork) -> _Overlap:
    return _Overlap(net)


class _Overlap:
    """``other in _Overlap(net)`` is true when the two networks overlap."""

    def __init__(self, net: netaddr.IPNetwork) -> None:
        self.net = net

    def __contains__(self, other: netaddr.IPNetwork) -> bool:
        return (other.version == self.net.version and other.first <= self.net.last
                and self.net.first <= other.last)

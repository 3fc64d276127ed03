"""What the router and floating IP modules share: names, lookups, checks.

The L3 plugin creates, updates and deletes its ports through the core
plugin (``core.create(ctx, "ports", ...)``), each in the core's own
transaction with the ML2 drivers' pre- and postcommit, as upstream does;
its own rows change in separate transactions, and a failure after a port
was made undoes the port. The ports it owns are protected from the ports
API by ``guards``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable

import netaddr
import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import rbac, store

if TYPE_CHECKING:
    from neutrino.plugins.core import CorePlugin

INTERFACE = "network:router_interface"
GATEWAY = "network:router_gateway"
FLOATINGIP = "network:floatingip"
INTERFACE_OWNERS = (INTERFACE, "network:router_interface_distributed",
                    "network:ha_router_replicated_interface")


def enforce_quota(core: CorePlugin, conn: Connection, ctx: Context) -> None:
    """The caller's quota reservation, checked in the L3 plugin's own transaction."""
    quota = core.quota
    if quota is None:
        return
    for project, deltas in sorted(ctx.quota_request.items()):
        quota.enforce(conn, project, deltas)


def check_route_limit(core: CorePlugin, conn: Connection, project_id: str | None,
                      count: int) -> None:
    """A router of ``project_id`` may hold ``count`` routes (``router_route``)."""
    quota = core.quota
    if quota is not None and project_id:
        quota.check_limit(conn, project_id, "router_route", count)


def create_all(items: list[dict[str, Any]],
               create_one: Callable[[dict[str, Any], bool], dict[str, Any]],
               delete: Callable[[str], None]) -> list[dict[str, Any]]:
    """A bulk create, one item after the other (each makes its ports through
    the core, in transactions of their own): ``create_one(item, quota)``
    checks the quota reservation, which covers the whole bulk, with the
    first item only; after a failure what was made is deleted again, so a
    bulk create leaves nothing behind."""
    done: list[dict[str, Any]] = []
    try:
        for i, item in enumerate(items):
            done.append(create_one(item, i == 0))
    except Exception:
        for obj in done:
            delete(obj["id"])
        raise
    return done


def internal() -> Context:
    """The context of the plugin's own port operations: admin, and outside
    the caller's quota reservation (upstream does not count them either)."""
    return Context.admin()


def router_not_found(router_id: str) -> errors.RouterNotFound:
    return errors.RouterNotFound(router_id=router_id)


def lock_router(conn: Connection, router_id: str) -> Any:
    """The router row, locked: changes to one router's ports serialise here."""
    return store.get_row(conn, t.routers, router_id, lambda: router_not_found(router_id),
                         for_update=True)


def bad_router(msg: str) -> errors.BadRequest:
    return errors.BadRequest(resource="router", msg=msg)


def bad_fip(msg: str) -> errors.BadRequest:
    return errors.BadRequest(resource="floatingip", msg=msg)


def subnet_rows(conn: Connection, ids: Iterable[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for part in store.chunks(list(dict.fromkeys(ids))):
        for row in conn.execute(sa.select(t.subnets).where(t.subnets.c.id.in_(part))):
            out[row.id] = row
    return out


def port_ips(conn: Connection, port_ids: Iterable[str]) -> dict[str, list[Any]]:
    """(subnet_id, ip_address) rows per port, IPv4 first, in one query."""
    grouped = store.children(conn, t.ipallocations, "port_id", list(port_ids), (),
                             ("port_id", "subnet_id", "ip_address"))
    return {pid: sorted(rows, key=lambda r: (netaddr.IPAddress(r.ip_address).version,
                                             netaddr.IPAddress(r.ip_address)))
            for pid, rows in grouped.items()}


def router_ports(conn: Connection, router_id: str, kind: str | None = None) -> list[Any]:
    """The router's ports (routerports joined to ports)."""
    rp, p = t.routerports.c, t.ports.c
    stmt = (sa.select(p.id, p.network_id, p.project_id, p.device_owner, rp.port_type)
            .join(t.ports, p.id == rp.port_id).where(rp.router_id == router_id)
            .order_by(p.created_at, p.id))
    if kind is not None:
        stmt = stmt.where(rp.port_type == kind)
    return list(conn.execute(stmt))


def router_subnets(conn: Connection, router_id: str) -> list[Any]:
    """Subnets the router is on: its interfaces' and its gateway network's."""
    ports = router_ports(conn, router_id)
    ips = port_ips(conn, [p.id for p in ports])
    ids: list[str] = []
    for port in ports:
        if port.port_type == GATEWAY:
            ids += [r.id for r in conn.execute(sa.select(t.subnets.c.id).where(
                t.subnets.c.network_id == port.network_id))]
        else:
            ids += [a.subnet_id for a in ips.get(port.id, [])]
    rows = subnet_rows(conn, ids)
    return [rows[i] for i in dict.fromkeys(ids) if i in rows]


def check_overlap(existing: Iterable[Any], new: Iterable[Any]) -> None:
    """Two subnets of one router may not overlap (upstream's message)."""
    for sub in existing:
        for other in new:
            if sub.id == other.id:
                continue
            a, b = netaddr.IPNetwork(sub.cidr), netaddr.IPNetwork(other.cidr)
            if a.version == b.version and a.first <= b.last and b.first <= a.last:
                raise bad_router(f"Cidr {other.cidr} of subnet {other.id} overlaps with "
                                 f"cidr {sub.cidr} of subnet {sub.id}")


def check_new_subnets(conn: Connection, router_id: str, new: list[Any]) -> None:
    """Adding ``new`` subnets: none may already be on the router, nor overlap."""
    current = router_subnets(conn, router_id)
    ips = port_ips(conn, [p.id for p in router_ports(conn, router_id)])
    on_router = {a.subnet_id for rows in ips.values() for a in rows}
    for sub in new:
        if sub.id in on_router:
            raise bad_router(f"Router already has a port on subnet {sub.id}")
    check_overlap(current, new)


def check_address_mode(subnet: Any) -> None:
    if (subnet.ip_version == 6 and subnet.ipv6_ra_mode is None
            and subnet.ipv6_address_mode is not None):
        raise bad_router(f"IPv6 subnet {subnet.id} configured to receive RAs from an "
                         f"external router cannot be added to Neutron Router.")


def visible_subnet(conn: Connection, ctx: Context, subnet_id: str) -> Any:
    """A subnet as the caller may see it (else 404, as upstream)."""
    row = store.get_row(conn, t.subnets, subnet_id,
                        lambda: errors.SubnetNotFound(subnet_id=subnet_id))
    if ctx.is_admin or row.project_id == ctx.project_id:
        return row
    owner = conn.execute(sa.select(t.networks.c.project_id)
                         .where(t.networks.c.id == row.network_id)).scalar()
    if owner == ctx.project_id or rbac.shared_ids(conn, ctx.project_id, [row.network_id]):
        return row
    raise errors.SubnetNotFound(subnet_id=subnet_id)


def visible_port(conn: Connection, ctx: Context, port_id: str) -> Any:
    """A port as the caller may see it: its own, or one on its network."""
    row = store.get_row(conn, t.ports, port_id, lambda: errors.PortNotFound(port_id=port_id))
    if ctx.is_admin or row.project_id == ctx.project_id:
        return row
    owner = conn.execute(sa.select(t.networks.c.project_id)
                         .where(t.networks.c.id == row.network_id)).scalar()
    if owner == ctx.project_id:
        return row
    raise errors.PortNotFound(port_id=port_id)


def external_network(conn: Connection, network_id: str, bad: Any,
                     ctx: Context | None = None) -> Any:
    """The network row, which must exist for the caller (404: not its own,
    nor shared with it or external to it by an RBAC entry, as upstream
    reads it with the caller's context) and be external (``bad``)."""
    row = store.get_row(conn, t.networks, network_id,
                        lambda: errors.NetworkNotFound(net_id=network_id))
    if (ctx is not None and not ctx.is_admin and row.project_id != ctx.project_id
            and not conn.execute(sa.select(sa.literal(1)).where(
                rbac.network_access_clause(ctx.project_id, sa.literal(network_id)))).first()):
        raise errors.NetworkNotFound(net_id=network_id)
    if not rbac.external_ids(conn, [network_id]):
        raise bad(network_id)
    return row


def shared_with_project(conn: Connection, network_id: str, project_id: str | None) -> bool:
    """An RBAC entry shares the network with exactly this project."""
    e = t.networkrbacs.c
    return conn.execute(sa.select(e.id).where(
        e.object_id == network_id, e.action == rbac.ACCESS_AS_SHARED,
        e.target_tenant == project_id).limit(1)).first() is not None

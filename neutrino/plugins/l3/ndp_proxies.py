"""The ``ndp_proxies`` collection and the routers' ``enable_ndp_proxy`` state.

A proxy is allowed only where the router can really forward to the
address: the router's proxying enabled (which needs a gateway on an
external network with IPv6 in an address scope), the port on a subnet the
router is attached to, the address one of the port's IPv6 addresses, and
the internal network in the gateway network's IPv6 address scope (routed,
not NATed). The checks and their order are upstream's, so the same bad
request gets the same error.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence, TypeVar

import netaddr
import sqlalchemy as sa
from sqlalchemy import Connection
from sqlalchemy import exc as sa_exc

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import store
from neutrino.plugins.l3 import common as c
from neutrino.plugins.table_collection import TableCollection

T = TypeVar("T")
N = t.ndp_proxies
S = t.router_ndp_proxy_state
UPDATABLE = ("name", "description")


def _not_found(rid: str) -> Callable[[], Exception]:
    return lambda: errors.NDPProxyNotFound(id=rid)


def to_dict(row: Any) -> dict[str, Any]:
    d = store.standard_dict(row)
    d.update(router_id=row.router_id, port_id=row.port_id, ip_address=row.ip_address)
    return d


def _v6(allocs: Iterable[Any]) -> list[Any]:
    return [a for a in allocs if netaddr.IPAddress(a.ip_address).version == 6]


def v6_scope(conn: Connection, network_id: str) -> str | None:
    """The network's IPv6 address scope (``ipv6_address_scope``): its IPv6
    subnets' pool's scope."""
    s, p = t.subnets.c, t.subnetpools.c
    return conn.execute(
        sa.select(p.address_scope_id).join(t.subnetpools, p.id == s.subnetpool_id)
        .where(s.network_id == network_id, s.ip_version == 6,
               p.address_scope_id.is_not(None)).limit(1)).scalar()


def network_supports(conn: Connection, network_id: str) -> bool:
    """An external network a router can proxy on: IPv6 in an address scope."""
    return v6_scope(conn, network_id) is not None


def gateway_supports(conn: Connection, gw_port_id: str | None) -> bool:
    """The router's gateway port has an IPv6 address on such a network."""
    if not gw_port_id:
        return False
    net = conn.execute(sa.select(t.ports.c.network_id)
                       .where(t.ports.c.id == gw_port_id)).scalar()
    if net is None or not network_supports(conn, net):
        return False
    return bool(_v6(c.port_ips(conn, [gw_port_id]).get(gw_port_id, [])))


def requested_gateway_supports(conn: Connection, info: dict[str, Any] | None,
                               gw_port_id: str | None) -> bool:
    """What ``gateway_supports`` will say once a router update's gateway
    (``info``; None: removed) is made, judged before it is."""
    if not info:
        return False
    if not network_supports(conn, info["network_id"]):
        return False
    fixed = info.get("external_fixed_ips")
    if not fixed:
        current = conn.execute(sa.select(t.ports.c.network_id)
                               .where(t.ports.c.id == gw_port_id)).scalar()
        # kept on the same network, the port keeps its addresses; a new one
        # takes an address on the network's IPv6 subnet
        return gateway_supports(conn, gw_port_id) if current == info["network_id"] else True
    subnets = [f["subnet_id"] for f in fixed if f.get("subnet_id")]
    v6_subnets = conn.execute(sa.select(t.subnets.c.id).where(
        t.subnets.c.id.in_(subnets), t.subnets.c.ip_version == 6)).first() if subnets else None
    return v6_subnets is not None or any(
        f.get("ip_address") and netaddr.IPAddress(f["ip_address"]).version == 6 for f in fixed)


def state(conn: Connection, router_ids: list[str]) -> dict[str, bool]:
    out: dict[str, bool] = {}
    for part in store.chunks(router_ids):
        out.update(conn.execute(sa.select(S.c.router_id, S.c.enable_ndp_proxy)
                                .where(S.c.router_id.in_(part))).tuples().all())
    return out


def set_state(conn: Connection, router_id: str, enabled: bool) -> None:
    found = conn.execute(sa.update(S).where(S.c.router_id == router_id)
                         .values(enable_ndp_proxy=enabled)).rowcount
    if not found:
        conn.execute(sa.insert(S).values(router_id=router_id, enable_ndp_proxy=enabled))


def of_routers(conn: Connection, router_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
    """What the L3 agent applies: each router's proxied addresses and ports."""
    out: dict[str, list[dict[str, Any]]] = {}
    for part in store.chunks(router_ids):
        for row in conn.execute(sa.select(N.c.id, N.c.router_id, N.c.port_id, N.c.ip_address)
                                .where(N.c.router_id.in_(part)).order_by(N.c.ip_address)):
            out.setdefault(row.router_id, []).append(
                {"id": row.id, "port_id": row.port_id, "ip_address": row.ip_address})
    return out


class NdpProxies(TableCollection):
    """Serves ``ndp_proxies`` with the service collections' interface."""

    table = N

    def write(self, fn: Callable[[Connection], T]) -> T:
        return self.plugin.core.write(fn)

    # -- reading -----------------------------------------------------------------

    def not_found(self, rid: str) -> Exception:
        return _not_found(rid)()

    def to_dicts(self, conn: Connection, rows: Sequence[Any]) -> list[dict[str, Any]]:
        return [to_dict(r) for r in rows]

    # -- checks ------------------------------------------------------------------

    def _router_ports(self, conn: Connection, ctx: Context, router_id: str,
                      network_id: str) -> list[Any]:
        """The router's ports on the network, those the caller sees."""
        ports = [p for p in c.router_ports(conn, router_id) if p.network_id == network_id]
        if ctx.is_admin:
            return ports
        owner = conn.execute(sa.select(t.networks.c.project_id)
                             .where(t.networks.c.id == network_id)).scalar()
        return [p for p in ports if ctx.project_id in (p.project_id, owner)]

    def _address(self, port_id: str, router_id: str, wanted: str | None,
                 port_v6: list[Any], router_subnets: set[str]) -> str:
        if not wanted:
            for alloc in port_v6:
                if alloc.subnet_id in router_subnets:
                    return str(alloc.ip_address)
            raise errors.PortUnreachableRouter(port_id=port_id, router_id=router_id)
        ip = netaddr.IPAddress(wanted)
        mine = [a for a in port_v6 if netaddr.IPAddress(a.ip_address) == ip]
        if not mine:
            raise errors.InvalidAddress(address=wanted,
                                        reason=f"This address not belong to the port {port_id}")
        if mine[0].subnet_id not in router_subnets:
            raise errors.InvalidAddress(
                address=wanted, reason=f"This address cannot reach the router {router_id}")
        return str(mine[0].ip_address)

    def _checked(self, conn: Connection, ctx: Context, data: dict[str, Any]) -> str:
        """The address to proxy, once every upstream check passed."""
        router_id, port_id = data["router_id"], data["port_id"]
        port = c.visible_port(conn, ctx, port_id)
        router_ports = self._router_ports(conn, ctx, router_id, port.network_id)
        if not router_ports:
            raise errors.PortUnreachableRouter(router_id=router_id, port_id=port_id)
        router = store.get_row(conn, t.routers, router_id, lambda: c.router_not_found(router_id))
        if not ctx.is_admin and router.project_id != ctx.project_id:
            raise c.router_not_found(router_id)
        if not state(conn, [router_id]).get(router_id) or router.gw_port_id is None:
            raise errors.RouterNDPProxyNotEnable(router_id=router_id)
        gw_net = conn.execute(sa.select(t.ports.c.network_id)
                              .where(t.ports.c.id == router.gw_port_id)).scalar()
        ext_scope = v6_scope(conn, gw_net) if gw_net else None
        port_v6 = _v6(c.port_ips(conn, [port_id]).get(port_id, []))
        if not port_v6:
            raise errors.BadRequest(resource="ndp_proxy", msg=(
                f"Requested port {port_id} must allocate one IPv6 address at least"))
        ips = c.port_ips(conn, [p.id for p in router_ports])
        router_subnets = {a.subnet_id for p in router_ports for a in _v6(ips.get(p.id, []))}
        address = self._address(port_id, router_id, data.get("ip_address"), port_v6,
                                router_subnets)
        internal_scope = v6_scope(conn, port.network_id)
        if ext_scope != internal_scope:
            raise errors.AddressScopeConflict(ext_address_scope=ext_scope,
                                              internal_address_scope=internal_scope)
        return address

    # -- writing -----------------------------------------------------------------

    def create(self, ctx: Context, plural: str,
               items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        def op(conn: Connection) -> list[dict[str, Any]]:
            out = []
            for item in items:
                address = self._checked(conn, ctx, item)
                row = store.standard_row(ctx.project_id, item, revision=0)
                row.update(router_id=item["router_id"], port_id=item["port_id"],
                           ip_address=address)
                try:
                    with conn.begin_nested():
                        conn.execute(sa.insert(N).values(**row))
                except sa_exc.IntegrityError:
                    raise errors.NeutronDbObjectDuplicateEntry(
                        object_type="NDPProxy", attributes=["router_id", "ip_address"],
                        values=f"{item['router_id']}-{address}") from None
                out.append(to_dict(self.row(conn, Context.admin(), row["id"])))
            return out
        created = self.write(op)
        self.plugin.routers_changed([p["router_id"] for p in created])
        return created

    def update(self, ctx: Context, plural: str, rid: str, data: dict[str, Any],
               revision: int | None = None) -> dict[str, Any]:
        values = {k: data[k] for k in UPDATABLE if k in data}

        def op(conn: Connection) -> dict[str, Any]:
            self.row(conn, ctx, rid, for_update=True)
            store.bump(conn, N, rid, values, revision)
            return to_dict(self.row(conn, ctx, rid))
        return self.write(op)

    def delete(self, ctx: Context, plural: str, rid: str, revision: int | None = None) -> None:
        def op(conn: Connection) -> str:
            row = self.row(conn, ctx, rid, for_update=True)
            store.check_revision(conn, N, rid, revision)
            conn.execute(sa.delete(N).where(N.c.id == rid))
            return str(row.router_id)
        self.plugin.routers_changed([self.write(op)])

"""Static routes of routers (``extraroute``, ``extraroute-atomic``).

A route's next hop must be on a subnet the router is connected to, and
must not be one of the router's own addresses; a router has at most
``[quotas] quota_router_route`` routes (upstream's ``router_route`` quota,
which replaced ``[DEFAULT] max_routes``). The atomic actions compute the
new set from the stored one inside the transaction that writes it, so two
concurrent additions both land.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import netaddr
import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import store
from neutrino.plugins.l3 import common as c
from neutrino.resources import l3 as l3_defs
from neutrino.resources import validators as v

if TYPE_CHECKING:
    from neutrino.plugins.core import CorePlugin
    from neutrino.plugins.l3.routers import Routers


def stored(conn: Connection, router_id: str) -> list[dict[str, str]]:
    rr = t.routerroutes.c
    return [{"destination": r.destination, "nexthop": r.nexthop} for r in conn.execute(
        sa.select(rr.destination, rr.nexthop).where(rr.router_id == router_id)
        .order_by(rr.destination, rr.nexthop))]


def _connected(conn: Connection, router_id: str) -> tuple[list[netaddr.IPNetwork], set[str]]:
    """CIDRs of the subnets the router's ports are on, and the ports' addresses."""
    ports = c.router_ports(conn, router_id)
    ips = c.port_ips(conn, [p.id for p in ports])
    allocs = [a for rows in ips.values() for a in rows]
    subnets = c.subnet_rows(conn, [a.subnet_id for a in allocs])
    return ([netaddr.IPNetwork(s.cidr) for s in subnets.values()],
            {a.ip_address for a in allocs})


def validate(conn: Connection, router_id: str, routes: list[dict[str, str]]) -> None:
    cidrs, own = _connected(conn, router_id)
    for route in routes:
        hop = netaddr.IPAddress(route["nexthop"])
        if not any(hop in cidr for cidr in cidrs):
            raise errors.InvalidRoutes(routes=routes,
                                       reason="the nexthop is not connected with router")
        if route["nexthop"] in own:
            raise errors.InvalidRoutes(routes=routes, reason="the nexthop is used by router")


def replace(core: CorePlugin, conn: Connection, router_id: str,
            routes: list[dict[str, str]]) -> None:
    """Make the router's routes ``routes`` (the caller holds the router lock)."""
    validate(conn, router_id, routes)
    project = conn.execute(sa.select(t.routers.c.project_id)
                           .where(t.routers.c.id == router_id)).scalar()
    c.check_route_limit(core, conn, project, len(routes))
    old = stored(conn, router_id)
    rr = t.routerroutes.c
    for route in old:
        if route not in routes:
            conn.execute(sa.delete(t.routerroutes).where(
                rr.router_id == router_id, rr.destination == route["destination"],
                rr.nexthop == route["nexthop"]))
    added = [r for r in routes if r not in old]
    if added:
        conn.execute(sa.insert(t.routerroutes), [{"router_id": router_id, **r} for r in added])


def check_not_nexthop(conn: Connection, router_id: str, subnet: Any) -> None:
    """An interface whose subnet holds a route's next hop stays."""
    cidr = netaddr.IPNetwork(subnet.cidr)
    for route in stored(conn, router_id):
        if netaddr.IPAddress(route["nexthop"]) in cidr:
            raise errors.RouterInterfaceInUseByRoute(router_id=router_id, subnet_id=subnet.id)


def _body_routes(body: Any) -> list[dict[str, str]]:
    router = body.get("router") if isinstance(body, dict) else None
    if not isinstance(router, dict) or "routes" not in router:
        raise errors.HTTPBadRequest(msg="Unable to find 'routes' in request body")
    try:
        return l3_defs.routes(router["routes"])
    except v.Invalid as exc:
        raise errors.HTTPBadRequest(msg=f"Invalid input for routes. Reason: {exc}.") from None


def _union(old: list[dict[str, str]], add: list[dict[str, str]]) -> list[dict[str, str]]:
    return old + [r for r in add if r not in old]


def _difference(old: list[dict[str, str]], remove: list[dict[str, str]]) -> list[dict[str, str]]:
    # Removing a route that is not there is fine: the end state is what counts.
    return [r for r in old if r not in remove]


class RouteActions:
    """``add_extraroutes`` / ``remove_extraroutes``: edit the set in place."""

    def __init__(self, core: CorePlugin, routers: Routers) -> None:
        self.core = core
        self.routers = routers

    def add(self, ctx: Context, router_id: str, body: Any) -> dict[str, Any]:
        return self._edit(ctx, router_id, _body_routes(body), _union)

    def remove(self, ctx: Context, router_id: str, body: Any) -> dict[str, Any]:
        return self._edit(ctx, router_id, _body_routes(body), _difference)

    def _edit(self, ctx: Context, router_id: str, given: list[dict[str, str]],
              combine: Any) -> dict[str, Any]:
        def op(conn: Connection) -> None:
            c.lock_router(conn, router_id)
            new = combine(stored(conn, router_id), given)
            replace(self.core, conn, router_id, new)
            store.bump(conn, t.routers, router_id)
        self.core.write(op)
        return {"router": self.routers.get(ctx, "routers", router_id)}

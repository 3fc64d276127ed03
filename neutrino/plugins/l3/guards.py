"""What the L3 plugin has to say about core resources (``plugins.events``).

Run inside the core plugin's transactions:

- a port a router owns (gateway, interface) or a floating IP owns cannot
  be deleted through the ports API (409 ``ServicePortInUse``);
- a port being deleted loses its floating IPs' associations, atomically;
- a port whose associated fixed IP is being removed keeps it (400);
- a router's interface port keeps its IPv4 addresses (400
  ``l3-port-ip-change-not-allowed``; IPv6 prefixes may come and go);
- an external network being deleted takes its unassociated floating IPs
  with it (upstream's behaviour; associated ones keep it in use).
"""
from __future__ import annotations

from typing import Any

import netaddr
import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import events as ev
from neutrino.plugins import store


def subscribe(core: Any) -> None:
    core.events.subscribe("ports", ev.PRECOMMIT_DELETE, port_deleting)
    core.events.subscribe("ports", ev.PRECOMMIT_UPDATE, port_updating)
    core.events.subscribe("ports", ev.PRECOMMIT_UPDATED, router_port_ips_kept)
    core.events.subscribe("networks", ev.PRECOMMIT_DELETE,
                          lambda conn, ctx, net: network_deleting(core, conn, ctx, net))


def _service_port_in_use(port: dict[str, Any]) -> errors.ServicePortInUse:
    return errors.ServicePortInUse(port_id=port["id"],
                                   reason=f"has device owner {port['device_owner']}")


_PORT = sa.bindparam("port")
# What a port's delete must know of routers and floating IPs, in one
# statement built once: every port delete runs it.
_PORT_USE = sa.select(
    sa.exists().where(t.routerports.c.port_id == _PORT).label("router_port"),
    sa.exists().where(t.floatingips.c.floating_port_id == _PORT).label("floating_port"),
    sa.exists().where(t.floatingips.c.fixed_port_id == _PORT).label("associated"))


def port_deleting(conn: Connection, ctx: Context, port: dict[str, Any]) -> None:
    use = conn.execute(_PORT_USE, {"port": port["id"]}).one()
    if use.router_port or use.floating_port:
        raise _service_port_in_use(port)
    if use.associated:
        disassociate(conn, port["id"])


def disassociate(conn: Connection, port_id: str) -> None:
    """Floating IPs of the port let go of it (their revision moves on)."""
    f = t.floatingips.c
    for row in conn.execute(sa.select(f.id).where(f.fixed_port_id == port_id)).all():
        store.bump(conn, t.floatingips, row.id, {"fixed_port_id": None,
                                                  "fixed_ip_address": None,
                                                  "router_id": None})


def port_updating(conn: Connection, ctx: Context, port: dict[str, Any],
                  changes: dict[str, Any]) -> None:
    if "fixed_ips" not in changes:
        return
    router_port_of_a_router(conn, port, changes)
    f = t.floatingips.c
    held = {r.fixed_ip_address for r in conn.execute(
        sa.select(f.fixed_ip_address).where(f.fixed_port_id == port["id"]))}
    if not held:
        return
    kept = {i.get("ip_address") for i in changes["fixed_ips"] or []}
    if not held & kept:
        raise errors.BadRequest(resource="port", msg=(
            f"Cannot update the fixed_ips of the port {port['id']}, because its original "
            f"fixed_ip has been associated to a floating ip"))


# Router ports whose IPv4 addresses only the router's own operations set
# (upstream's IP_UPDATE_NOT_ALLOWED_LIST); the gateway's may change.
IP_UPDATE_NOT_ALLOWED = ("network:router_interface", "network:router_ha_interface",
                         "network:ha_router_replicated_interface",
                         "network:router_centralized_snat",
                         "network:router_interface_distributed")


def _v4(port: dict[str, Any]) -> set[tuple[str, str]]:
    return {(i["subnet_id"], i["ip_address"]) for i in port.get("fixed_ips") or []
            if netaddr.IPAddress(i["ip_address"]).version == 4}


def router_port_of_a_router(conn: Connection, port: dict[str, Any],
                            changes: dict[str, Any]) -> None:
    """Fixed IPs asked of a router port name its router, which must exist
    (upstream looks it up: 404 otherwise)."""
    owner = changes.get("device_owner", port.get("device_owner"))
    if "fixed_ips" not in changes or owner not in IP_UPDATE_NOT_ALLOWED:
        return
    router_id = changes.get("device_id", port.get("device_id"))
    if not conn.execute(sa.select(sa.exists().where(t.routers.c.id == router_id))).scalar():
        raise errors.RouterNotFound(router_id=router_id)


def router_port_ips_kept(conn: Connection, ctx: Context, original: dict[str, Any],
                         current: dict[str, Any]) -> None:
    """An IPv4 address added to or removed from a router port is refused,
    whoever asks (an IPv6 change is the router's own multi-prefix interface
    at work)."""
    if current.get("device_owner") in IP_UPDATE_NOT_ALLOWED and _v4(original) != _v4(current):
        raise errors.BadRequest(resource="ports",
                                msg=f"IP updates for port {current['id']} are not allowed")


def network_deleting(core: Any, conn: Connection, ctx: Context,
                     network: dict[str, Any]) -> None:
    f = t.floatingips.c
    rows = conn.execute(sa.select(f.id, f.floating_port_id).where(
        f.floating_network_id == network["id"], f.fixed_port_id.is_(None))).all()
    for row in rows:
        store.delete_tags(conn, row.id)
        conn.execute(sa.delete(t.floatingips).where(f.id == row.id))
        core.handlers["ports"].delete(conn, row.floating_port_id, None)

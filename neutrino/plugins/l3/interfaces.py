"""Router interfaces: ``add_router_interface`` / ``remove_router_interface``.

By subnet, a new port takes the subnet's gateway address (IPv6 subnets of
a network the router already has an IPv6 port on join that port, as
upstream); by port, an unused port of the caller becomes the interface.
The link (a ``routerports`` row) is written under the router's row lock
and the subnets are checked for overlaps again there, so two interfaces
added at once can neither overlap nor be lost.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import netaddr
import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import events as ev
from neutrino.plugins import store
from neutrino.plugins.l3 import common as c
from neutrino.plugins.l3 import dvr
from neutrino.plugins.l3 import routes as routes_mod
from neutrino.resources import validators as v

if TYPE_CHECKING:
    from neutrino.db.engine import Database
    from neutrino.plugins.core import CorePlugin
    from neutrino.plugins.l3.dvr import Distributed
    from neutrino.plugins.l3.notifier import L3AgentNotifier

# The event (``plugins.events``) other plugins hear before a subnet leaves a
# router: (conn, ctx, {"router_id", "subnet_id"}); raising keeps it.
ROUTER_INTERFACES = "router_interfaces"


def _interface_info(body: Any, removing: bool) -> tuple[str | None, str | None]:
    if not isinstance(body, dict):
        raise errors.HTTPBadRequest(msg="Body contains invalid data")
    port_id, subnet_id = body.get("port_id"), body.get("subnet_id")
    if "port_id" not in body and "subnet_id" not in body:
        raise c.bad_router("Either subnet_id or port_id must be specified")
    for key in ("port_id", "subnet_id"):
        if key in body:
            try:
                v.uuid(body[key])
            except v.Invalid as exc:
                raise c.bad_router(str(exc)) from None
    if not removing and "port_id" in body and "subnet_id" in body:
        raise c.bad_router("Cannot specify both subnet-id and port-id")
    return port_id, subnet_id


def _info(router_id: str, port: dict[str, Any], subnet_ids: list[str]) -> dict[str, Any]:
    return {"id": router_id, "project_id": port["project_id"], "port_id": port["id"],
            "network_id": port["network_id"], "subnet_id": subnet_ids[-1],
            "subnet_ids": subnet_ids}


def _has_v6(ips: list[Any]) -> bool:
    return any(netaddr.IPAddress(a.ip_address).version == 6 for a in ips)


@dataclass(eq=False)
class Interfaces:
    core: CorePlugin
    db: Database
    distributed: Distributed
    notifier: L3AgentNotifier

    # -- adding ------------------------------------------------------------------

    def add(self, ctx: Context, router_id: str, body: Any) -> dict[str, Any]:
        port_id, subnet_id = _interface_info(body, removing=False)
        if port_id is not None:
            info = self._add_port(ctx, router_id, port_id)
        else:
            assert subnet_id is not None
            info = self._add_subnet(ctx, router_id, subnet_id)
        self.notifier.routers_updated([router_id])
        return info

    def _add_subnet(self, ctx: Context, router_id: str, subnet_id: str) -> dict[str, Any]:
        with self.db.reader() as conn:
            router = store.get_row(conn, t.routers, router_id,
                                   lambda: c.router_not_found(router_id))
            subnet = c.visible_subnet(conn, ctx, subnet_id)
            if not subnet.gateway_ip:
                raise c.bad_router("Subnet for router interface must have a gateway IP")
            if (subnet.project_id != ctx.project_id and not ctx.is_admin
                    and not c.shared_with_project(conn, subnet.network_id, ctx.project_id)):
                raise c.bad_router(f"Cannot add interface to router because subnet "
                                   f"{subnet_id} is not owned by project making the request")
            c.check_address_mode(subnet)
            c.check_new_subnets(conn, router_id, [subnet])
            v6_port = self._v6_port(conn, router_id, subnet) if subnet.ip_version == 6 else None
        fixed = {"subnet_id": subnet.id, "ip_address": subnet.gateway_ip}
        if v6_port is not None:
            # Another prefix on the router's IPv6 port of this network.
            port = self.core.get(c.internal(), "ports", v6_port)
            wanted = [*({"subnet_id": i["subnet_id"], "ip_address": i["ip_address"]}
                        for i in port["fixed_ips"]), fixed]
            self.core.update(c.internal(), "ports", v6_port, {"fixed_ips": wanted})
            self.core.write(lambda conn: self._relink(conn, router_id, v6_port))
            self.distributed.sync(router_id)
            return _info(router_id, port, [subnet.id])
        port = self.core.create(c.internal(), "ports", [{
            "project_id": router.project_id, "network_id": subnet.network_id, "name": "",
            "admin_state_up": True, "device_id": router_id,
            "device_owner": dvr.interface_owner(router.distributed, router.ha),
            "fixed_ips": [fixed], "port_security_enabled": False}])[0]
        try:
            self.core.write(lambda conn: self._link(conn, router_id, port["id"]))
        except Exception:
            self.core.delete(c.internal(), "ports", port["id"])
            raise
        self.distributed.sync(router_id)
        return _info(router_id, port, [subnet.id])

    def _v6_port(self, conn: Connection, router_id: str, subnet: Any) -> str | None:
        ports = [p for p in c.router_ports(conn, router_id, c.INTERFACE)
                 if p.network_id == subnet.network_id]
        ips = c.port_ips(conn, [p.id for p in ports])
        for port in ports:
            if _has_v6(ips.get(port.id, [])):
                return port.id
        return None

    def _add_port(self, ctx: Context, router_id: str, port_id: str) -> dict[str, Any]:
        with self.db.reader() as conn:
            router = store.get_row(conn, t.routers, router_id,
                                   lambda: c.router_not_found(router_id))
            port = c.visible_port(conn, ctx, port_id)
            subnets = self._check_port(conn, ctx, router_id, port)
        original = {"device_id": port.device_id, "device_owner": port.device_owner}
        self.core.update(c.internal(), "ports", port_id,
                         {"device_id": router_id,
                          "device_owner": dvr.interface_owner(router.distributed, router.ha)})
        try:
            self.core.write(lambda conn: self._link(conn, router_id, port_id))
        except Exception:
            self.core.update(c.internal(), "ports", port_id, original)
            raise
        self.distributed.sync(router_id)
        info = {"id": port.id, "project_id": port.project_id, "network_id": port.network_id}
        return _info(router_id, info, [s.id for s in subnets])

    def _check_port(self, conn: Connection, ctx: Context, router_id: str,
                    port: Any) -> list[Any]:
        if port.device_id:
            raise errors.PortInUse(net_id=port.network_id, port_id=port.id,
                                   device_id=port.device_id)
        allocs = c.port_ips(conn, [port.id])[port.id]
        if not allocs:
            raise c.bad_router("Router port must have at least one fixed IP")
        rows = c.subnet_rows(conn, [a.subnet_id for a in allocs])
        subnets = [rows[a.subnet_id] for a in allocs]
        for subnet in subnets:
            c.check_address_mode(subnet)
        if _has_v6(allocs):
            for other in c.router_ports(conn, router_id, c.INTERFACE):
                if other.network_id == port.network_id and _has_v6(
                        c.port_ips(conn, [other.id])[other.id]):
                    raise c.bad_router(
                        f"Router already contains IPv6 port {other.id} belonging to network "
                        f"id {other.network_id}. Only one IPv6 port from the same network "
                        f"subnet can be connected to a router.")
        c.check_new_subnets(conn, router_id, subnets)
        if len([s for s in subnets if s.ip_version == 4]) > 1:
            raise c.bad_router("Cannot have multiple IPv4 subnets on router port")
        if not ctx.is_admin:
            self._check_in_pools(conn, ctx, port.id, allocs, rows)
        return subnets

    def _check_in_pools(self, conn: Connection, ctx: Context, port_id: str,
                        allocs: list[Any], subnets: dict[str, Any]) -> None:
        """An address outside the pools of another project's subnet (its
        gateway, say) is not the caller's to give a router."""
        pools = store.children(conn, t.allocation_pools, "subnet_id", list(subnets))
        for alloc in allocs:
            ranges = [netaddr.IPRange(p.first_ip, p.last_ip)
                      for p in pools.get(alloc.subnet_id, [])]
            inside = any(netaddr.IPAddress(alloc.ip_address) in r for r in ranges)
            if not inside and subnets[alloc.subnet_id].project_id != ctx.project_id:
                raise c.bad_router(
                    f"Cannot add interface to router because specified port {port_id} has "
                    f"an IP address out of the allocation pool of subnet {alloc.subnet_id}, "
                    f"which is not owned by the project making the request")

    def _link(self, conn: Connection, router_id: str, port_id: str) -> None:
        c.lock_router(conn, router_id)
        if conn.execute(sa.select(t.routerports.c.port_id)
                        .where(t.routerports.c.port_id == port_id)).first() is not None:
            port = conn.execute(sa.select(t.ports).where(t.ports.c.id == port_id)).first()
            raise errors.PortInUse(net_id=port.network_id, port_id=port_id,
                                   device_id=port.device_id)
        conn.execute(sa.insert(t.routerports).values(router_id=router_id, port_id=port_id,
                                                     port_type=c.INTERFACE))
        # Checked again now that the router is locked: a concurrent add of an
        # overlapping subnet, committed meanwhile, is refused here.
        c.check_overlap(c.router_subnets(conn, router_id),
                        list(c.subnet_rows(conn, [a.subnet_id for a in c.port_ips(
                            conn, [port_id])[port_id]]).values()))
        store.bump(conn, t.routers, router_id)

    def _relink(self, conn: Connection, router_id: str, port_id: str) -> None:
        c.lock_router(conn, router_id)
        store.bump(conn, t.routers, router_id)

    # -- removing ----------------------------------------------------------------

    def remove(self, ctx: Context, router_id: str, body: Any) -> dict[str, Any]:
        port_id, subnet_id = _interface_info(body, removing=True)
        with self.db.reader() as conn:
            store.get_row(conn, t.routers, router_id, lambda: c.router_not_found(router_id))
            if port_id is not None:
                port, subnets = self._by_port(conn, router_id, port_id, subnet_id)
            else:
                assert subnet_id is not None
                port, subnets = self._by_subnet(conn, ctx, router_id, subnet_id)
            for subnet in subnets:
                self._check_unused(conn, router_id, subnet)
        remaining = [a for a in port["fixed_ips"]
                     if a["subnet_id"] not in {s.id for s in subnets}]
        if remaining and port_id is None:
            # One prefix of a multi-prefix IPv6 port: the port stays.
            self.core.update(c.internal(), "ports", port["id"], {"fixed_ips": remaining})
            self.core.write(lambda conn: self._relink(conn, router_id, port["id"]))
        else:
            self.core.write(lambda conn: self._unlink(conn, router_id, port["id"], subnets))
            try:
                self.core.delete(c.internal(), "ports", port["id"])
            except errors.PortNotFound:
                pass
        self.distributed.sync(router_id)
        self.notifier.routers_updated([router_id])
        return _info(router_id, port, [s.id for s in subnets])

    def _port_dict(self, conn: Connection, port_id: str) -> dict[str, Any]:
        row = conn.execute(sa.select(t.ports).where(t.ports.c.id == port_id)).first()
        ips = c.port_ips(conn, [port_id])[port_id]
        return {"id": row.id, "project_id": row.project_id, "network_id": row.network_id,
                "fixed_ips": [{"subnet_id": a.subnet_id, "ip_address": a.ip_address}
                              for a in ips]}

    def _by_port(self, conn: Connection, router_id: str, port_id: str,
                 subnet_id: str | None) -> tuple[dict[str, Any], list[Any]]:
        if not any(p.id == port_id for p in c.router_ports(conn, router_id, c.INTERFACE)):
            raise errors.RouterInterfaceNotFound(router_id=router_id, port_id=port_id)
        port = self._port_dict(conn, port_id)
        subnet_ids = [a["subnet_id"] for a in port["fixed_ips"]]
        if subnet_id is not None and subnet_id not in subnet_ids:
            raise errors.SubnetMismatchForPort(port_id=port_id, subnet_id=subnet_id)
        rows = c.subnet_rows(conn, subnet_ids)
        return port, [rows[i] for i in subnet_ids if i in rows]

    def _by_subnet(self, conn: Connection, ctx: Context, router_id: str,
                   subnet_id: str) -> tuple[dict[str, Any], list[Any]]:
        subnet = c.visible_subnet(conn, ctx, subnet_id)
        for port in c.router_ports(conn, router_id, c.INTERFACE):
            if port.network_id != subnet.network_id:
                continue
            found = self._port_dict(conn, port.id)
            if any(a["subnet_id"] == subnet_id for a in found["fixed_ips"]):
                return found, [subnet]
        raise errors.RouterInterfaceNotFoundForSubnet(router_id=router_id, subnet_id=subnet_id)

    def _check_unused(self, conn: Connection, router_id: str, subnet: Any) -> None:
        """Floating IPs and routes through this subnet keep the interface."""
        cidr = netaddr.IPNetwork(subnet.cidr)
        on_subnet = sa.select(t.ipallocations.c.port_id).where(
            t.ipallocations.c.subnet_id == subnet.id)
        f = t.floatingips.c
        for fip in conn.execute(sa.select(f.fixed_ip_address).where(
                f.router_id == router_id, f.fixed_port_id.in_(on_subnet))):
            if fip.fixed_ip_address and netaddr.IPAddress(fip.fixed_ip_address) in cidr:
                raise errors.RouterInterfaceInUseByFloatingIP(router_id=router_id,
                                                              subnet_id=subnet.id)
        routes_mod.check_not_nexthop(conn, router_id, subnet)
        self.core.events.notify(ROUTER_INTERFACES, ev.PRECOMMIT_DELETE, conn, c.internal(),
                                {"router_id": router_id, "subnet_id": subnet.id})

    def _unlink(self, conn: Connection, router_id: str, port_id: str,
                subnets: list[Any]) -> None:
        c.lock_router(conn, router_id)
        for subnet in subnets:  # again, under the lock
            self._check_unused(conn, router_id, subnet)
        conn.execute(sa.delete(t.routerports).where(t.routerports.c.port_id == port_id,
                                                    t.routerports.c.router_id == router_id))
        store.bump(conn, t.routers, router_id)

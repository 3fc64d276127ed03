"""The ``floatingips`` collection: addresses of external networks mapped to
fixed IPs of internal ports through a router.

A floating IP holds a port of its external network (``network:floatingip``,
no project, as upstream). Associating it needs a router with a gateway on
that network and an interface on the fixed IP's subnet; a fixed IP has at
most one floating IP per external network (a unique key decides races).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import netaddr
import sqlalchemy as sa
from sqlalchemy import Connection
from sqlalchemy import exc as sa_exc

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import events as ev
from neutrino.plugins import store
from neutrino.plugins.l3 import common as c
from neutrino.plugins.l3 import qos

if TYPE_CHECKING:
    from neutrino.db.engine import Database
    from neutrino.plugins.core import CorePlugin
    from neutrino.plugins.l3.notifier import L3AgentNotifier

DOWN = "DOWN"
NOT_APPLICABLE = "N/A"


def not_found(fip_id: str) -> errors.FloatingIPNotFound:
    return errors.FloatingIPNotFound(floatingip_id=fip_id)


_PORT_DETAILS = ("name", "network_id", "mac_address", "admin_state_up", "status",
                 "device_id", "device_owner")


def port_details(conn: Connection, port_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``fip-port-details``: a summary of each associated port, in bulk."""
    p = t.ports.c
    out: dict[str, dict[str, Any]] = {}
    for part in store.chunks(list(dict.fromkeys(port_ids))):
        for row in conn.execute(sa.select(p.id, *[p[k] for k in _PORT_DETAILS])
                                .where(p.id.in_(part))):
            out[row.id] = {k: getattr(row, k) for k in _PORT_DETAILS}
    return out


def to_dicts(conn: Connection, rows: Sequence[Any], with_qos: bool = False
             ) -> list[dict[str, Any]]:
    """``with_qos``: with ``qos_policy_id`` (``qos-fip``)."""
    tags = store.load_tags(conn, [r.id for r in rows])
    policies = qos.fip_policies(conn, [r.id for r in rows]) if with_qos else {}
    details = port_details(conn, [r.fixed_port_id for r in rows if r.fixed_port_id])
    out = []
    for row in rows:
        d = store.standard_dict(row)
        del d["name"]
        d.update(floating_ip_address=row.floating_ip_address,
                 floating_network_id=row.floating_network_id, router_id=row.router_id,
                 port_id=row.fixed_port_id, fixed_ip_address=row.fixed_ip_address,
                 status=row.status, tags=tags.get(row.id, []),
                 port_details=details.get(row.fixed_port_id) if row.fixed_port_id else None)
        if with_qos:
            d[qos.POLICY_ID] = policies.get(row.id)
        out.append(d)
    return out


def _not_forwarded(conn: Connection, fip_id: str) -> None:
    """A floating IP with port forwardings can neither be associated with a
    port nor deleted (409, as upstream)."""
    p = t.portforwardings.c
    if conn.execute(sa.select(p.id).where(p.floatingip_id == fip_id).limit(1)).first():
        raise errors.FipInUseByPortForwarding(id=fip_id)


def _not_external(network_id: str) -> errors.BadRequest:
    return c.bad_fip(f"Network {network_id} is not a valid external network")


@dataclass(eq=False)
class FloatingIps:
    """Serves ``floatingips`` with the core collections' interface."""

    table = t.floatingips

    core: CorePlugin
    db: Database
    notifier: L3AgentNotifier
    with_qos: bool = False  # ``qos-fip``: the QoS plugin is loaded

    # -- reading -----------------------------------------------------------------

    def get(self, ctx: Context, plural: str, fip_id: str) -> dict[str, Any]:
        with self.db.reader() as conn:
            row = store.get_row(conn, t.floatingips, fip_id, lambda: not_found(fip_id))
            return to_dicts(conn, [row], self.with_qos)[0]

    def list(self, ctx: Context, plural: str,
             query: store.ListQuery) -> tuple[list[dict[str, Any]], bool]:
        f = t.floatingips.c
        clauses = store.column_clauses(t.floatingips, query.filters, {
            "port_id": lambda vals: f.fixed_port_id.in_(vals)})
        if not ctx.is_admin:
            clauses.append(f.project_id == ctx.project_id)
        with self.db.reader() as conn:
            rows, more = store.paged_select(conn, t.floatingips, clauses, query)
            return to_dicts(conn, rows, self.with_qos), more

    # -- association ---------------------------------------------------------------

    def _association(self, conn: Connection, ctx: Context, fip_id: str, project_id: str,
                     network_id: str, port_id: str | None, fixed_ip: str | None,
                     current_port: str | None = None,
                     requested_router: str | None = None) -> tuple[Any, Any, Any]:
        """(port_id, fixed_ip_address, router_id) for the request, or Nones;
        ``requested_router`` (``floating-ip-router-writable``) is taken
        instead of the router joining the port's subnet to the network."""
        if fixed_ip and not port_id:
            raise c.bad_fip("fixed_ip_address cannot be specified without a port_id")
        if not port_id:
            return None, None, None
        port = c.visible_port(conn, ctx, port_id)
        if port.project_id != project_id and not ctx.is_admin:
            raise c.bad_fip(f"Cannot process floating IP association with Port {port_id}, "
                            f"since that port is owned by a different project")
        if port.device_owner.startswith("network:"):
            raise c.bad_fip(f"Port {port_id} is unable to be assigned a floating IP")
        allocs = c.port_ips(conn, [port_id])[port_id]
        if fixed_ip:
            if netaddr.IPAddress(fixed_ip).version != 4:
                raise c.bad_fip(f"Cannot process floating IP association with {fixed_ip}, "
                                f"since that is not an IPv4 address")
            chosen = [a for a in allocs if a.ip_address == fixed_ip]
            if not chosen:
                raise c.bad_fip(f"Port {port_id} does not have fixed ip {fixed_ip}")
        else:
            chosen = [a for a in allocs if netaddr.IPAddress(a.ip_address).version == 4]
            if not chosen:
                raise c.bad_fip(f"Cannot add floating IP to port {port_id} that has no "
                                f"fixed IPv4 addresses")
            if len(chosen) > 1:
                raise c.bad_fip(f"Port {port_id} has multiple fixed IPv4 addresses.  Must "
                                f"provide a specific IPv4 address when assigning a "
                                f"floating IP")
        alloc = chosen[0]
        if requested_router:
            self._check_requested_router(conn, ctx, requested_router, network_id)
            return port_id, alloc.ip_address, requested_router
        router_id = self._router_for(conn, port, alloc.subnet_id, network_id)
        return port_id, alloc.ip_address, router_id

    def _check_requested_router(self, conn: Connection, ctx: Context, router_id: str,
                                network_id: str) -> None:
        """A router the caller sees, with its gateway on the floating IP's
        network; whether it reaches the port is the operator's business (an
        indirect topology: the port behind another router)."""
        r = t.routers.c
        found = conn.execute(sa.select(r.project_id).where(r.id == router_id)).first()
        if found is None or not ctx.is_admin and found.project_id != ctx.project_id:
            raise errors.RouterNotFound(router_id=router_id)
        p = t.ports.c
        gateway = conn.execute(sa.select(p.id).where(
            p.network_id == network_id, p.device_id == router_id,
            p.device_owner == c.GATEWAY).limit(1)).first()
        if gateway is None:
            # Upstream raises a Conflict with keywords its message lacks:
            # clients see the generic text.
            raise errors.Conflict(errors.NeutronException.message)

    def _router_for(self, conn: Connection, port: Any, subnet_id: str,
                    network_id: str) -> str:
        """A router with an interface on the subnet and a gateway on the
        external network; the one holding the subnet's gateway IP first."""
        rp, p, ip = t.routerports.c, t.ports.c, t.ipallocations.c
        gw_port = t.ports.alias("gw_port")
        stmt = (sa.select(rp.router_id, ip.ip_address).distinct()
                .join(t.ports, p.id == rp.port_id)
                .join(t.ipallocations, ip.port_id == p.id)
                .join(t.routers, t.routers.c.id == rp.router_id)
                .join(gw_port, gw_port.c.id == t.routers.c.gw_port_id)
                .where(rp.port_type.in_(c.INTERFACE_OWNERS), p.network_id == port.network_id,
                       ip.subnet_id == subnet_id, gw_port.c.network_id == network_id)
                .order_by(rp.router_id))
        found = list(conn.execute(stmt))
        if not found:
            raise errors.ExternalGatewayForFloatingIPNotFound(
                subnet_id=subnet_id, external_network_id=network_id, port_id=port.id)
        gateway_ip = conn.execute(sa.select(t.subnets.c.gateway_ip)
                                  .where(t.subnets.c.id == subnet_id)).scalar()
        for row in found:
            if row.ip_address == gateway_ip:
                return row.router_id
        return found[0].router_id

    def _already(self, conn: Connection, fip: dict[str, Any], port_id: str,
                 fixed_ip: str) -> errors.FloatingIPPortAlreadyAssociated:
        return errors.FloatingIPPortAlreadyAssociated(
            port_id=port_id, fip_id=fip["id"], floating_ip_address=fip["address"],
            fixed_ip=fixed_ip, net_id=fip["network_id"])

    def _check_free(self, conn: Connection, fip: dict[str, Any], port_id: str | None,
                    fixed_ip: str | None) -> None:
        if port_id is None:
            return
        f = t.floatingips.c
        taken = conn.execute(sa.select(f.id).where(
            f.floating_network_id == fip["network_id"], f.fixed_port_id == port_id,
            f.fixed_ip_address == fixed_ip, f.id != fip["id"]).limit(1)).first()
        if taken is not None:
            raise self._already(conn, fip, port_id, fixed_ip or "")

    # -- writing -------------------------------------------------------------------

    def create(self, ctx: Context, plural: str,
               items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        done = c.create_all(items, lambda item, quota: self._create_one(ctx, item, quota=quota),
                            lambda fip_id: self.delete(c.internal(), plural, fip_id))
        for fip in done:
            self.core.events.notify(plural, ev.AFTER_CREATE, ctx, fip)
        return done

    def _create_one(self, ctx: Context, data: dict[str, Any],
                    quota: bool = True) -> dict[str, Any]:
        network_id = data["floating_network_id"]
        project = data["project_id"]
        fip_id = store.new_id()
        with self.db.reader() as conn:
            c.external_network(conn, network_id, _not_external, ctx)
            v4 = conn.execute(sa.select(t.subnets.c.id).where(
                t.subnets.c.network_id == network_id, t.subnets.c.ip_version == 4)
                .limit(1)).first()
            if v4 is None:
                raise c.bad_fip(f"Network {network_id} does not contain any IPv4 subnet")
            if self.with_qos:
                qos.check_usable(conn, ctx, data.get(qos.POLICY_ID))
            # Refuse a bad association before an address is taken for it.
            self._association(conn, ctx, fip_id, project, network_id, data.get("port_id"),
                              data.get("fixed_ip_address"),
                              requested_router=data.get("router_id"))
        fixed: dict[str, Any] = {}
        if data.get("subnet_id"):
            fixed["subnet_id"] = data["subnet_id"]
        if data.get("floating_ip_address"):
            fixed["ip_address"] = data["floating_ip_address"]
        port = self.core.create(c.internal(), "ports", [{
            "project_id": "", "network_id": network_id, "name": "", "admin_state_up": True,
            "device_id": fip_id, "device_owner": c.FLOATINGIP,
            "fixed_ips": [fixed] if fixed else None, "port_security_enabled": False}])[0]
        try:
            self.core.write(lambda conn: self._insert(conn, ctx, fip_id, data, port, quota))
        except Exception:
            self.core.delete(c.internal(), "ports", port["id"])
            raise
        fip = self.get(ctx, "floatingips", fip_id)
        self.notifier.routers_updated([fip["router_id"]])
        return fip

    def _insert(self, conn: Connection, ctx: Context, fip_id: str, data: dict[str, Any],
                port: dict[str, Any], quota: bool) -> None:
        if quota:
            c.enforce_quota(self.core, conn, ctx)
        network_id = data["floating_network_id"]
        v4 = [i for i in port["fixed_ips"] if netaddr.IPAddress(i["ip_address"]).version == 4]
        if not v4:
            raise errors.ExternalIpAddressExhausted(net_id=network_id)
        fip = {"id": fip_id, "address": v4[0]["ip_address"], "network_id": network_id}
        port_id, fixed_ip, router_id = self._association(
            conn, ctx, fip_id, data["project_id"], network_id, data.get("port_id"),
            data.get("fixed_ip_address"), requested_router=data.get("router_id"))
        self._check_free(conn, fip, port_id, fixed_ip)
        with_policy = bool(self.with_qos and data.get(qos.POLICY_ID))
        # upstream's binding revises the floating IP it was made with
        row = store.standard_row(ctx.project_id, {**data, "id": fip_id},
                                 revision=1 if with_policy else 0)
        row.update(floating_ip_address=fip["address"], floating_network_id=network_id,
                   floating_port_id=port["id"], fixed_port_id=port_id,
                   fixed_ip_address=fixed_ip, router_id=router_id, status=DOWN)
        try:
            with conn.begin_nested():
                conn.execute(sa.insert(t.floatingips).values(**row))
        except sa_exc.IntegrityError:
            if port_id is not None:
                raise self._already(conn, fip, port_id, fixed_ip) from None
            raise
        if data.get("tags"):
            store.tag_new(conn, fip_id, data["tags"])
        if with_policy:
            qos.check_usable(conn, ctx, data[qos.POLICY_ID])
            qos.set_fip_policy(conn, fip_id, data[qos.POLICY_ID])
        store.bump(conn, t.ports, port["id"], {"status": NOT_APPLICABLE})

    def update(self, ctx: Context, plural: str, fip_id: str, data: dict[str, Any],
               revision: int | None = None) -> dict[str, Any]:
        after = self.core.events.wants(plural, ev.AFTER_UPDATE)
        original = self.get(c.internal(), plural, fip_id) if after else None
        # An empty update is a disassociation: a floating IP once had nothing
        # but its association to change, and upstream keeps it so.
        data = data or {"port_id": None}

        def op(conn: Connection) -> str | None:
            row = store.get_row(conn, t.floatingips, fip_id, lambda: not_found(fip_id),
                                for_update=True)
            store.check_revision(conn, t.floatingips, fip_id, revision)
            values = {k: data[k] for k in ("description",) if k in data}
            if self.with_qos and qos.POLICY_ID in data:
                qos.check_usable(conn, ctx, data[qos.POLICY_ID])
                qos.set_fip_policy(conn, fip_id, data[qos.POLICY_ID])
            if data.get("port_id"):
                _not_forwarded(conn, fip_id)
            # A router asked of an associated floating IP moves it there.
            moving = bool(data.get("router_id")) and row.fixed_port_id is not None
            if "port_id" in data or "fixed_ip_address" in data or moving:
                port_id = data.get("port_id", row.fixed_port_id)
                fixed = data.get("fixed_ip_address")
                if "port_id" not in data and fixed is None:
                    fixed = row.fixed_ip_address
                fip = {"id": fip_id, "address": row.floating_ip_address,
                       "network_id": row.floating_network_id}
                port_id, fixed, router_id = self._association(
                    conn, ctx, fip_id, row.project_id, row.floating_network_id, port_id, fixed,
                    requested_router=data.get("router_id"))
                if port_id is None and row.fixed_port_id is None:
                    # Its port forwardings' router stays (upstream's rule).
                    router_id = row.router_id
                self._check_free(conn, fip, port_id, fixed)
                values.update(fixed_port_id=port_id, fixed_ip_address=fixed,
                              router_id=router_id)
            try:
                with conn.begin_nested():
                    store.bump(conn, t.floatingips, fip_id, values)
            except sa_exc.IntegrityError:
                raise self._already(conn, {"id": fip_id, "address": row.floating_ip_address,
                                           "network_id": row.floating_network_id},
                                    values.get("fixed_port_id") or "",
                                    values.get("fixed_ip_address") or "") from None
            return row.router_id
        before = self.core.write(op)
        current = self.get(ctx, plural, fip_id)
        self.notifier.routers_updated([before, current["router_id"]])
        if after:
            self.core.events.notify(plural, ev.AFTER_UPDATE, ctx, original, current)
        return current

    def delete(self, ctx: Context, plural: str, fip_id: str,
               revision: int | None = None) -> None:
        def op(conn: Connection) -> tuple[str, str | None]:
            row = store.get_row(conn, t.floatingips, fip_id, lambda: not_found(fip_id),
                                for_update=True)
            store.check_revision(conn, t.floatingips, fip_id, revision)
            _not_forwarded(conn, fip_id)
            store.delete_tags(conn, fip_id)
            qos.set_fip_policy(conn, fip_id, None)
            conn.execute(sa.delete(t.floatingips).where(t.floatingips.c.id == fip_id))
            return row.floating_port_id, row.router_id
        after = self.core.events.wants(plural, ev.AFTER_DELETE)
        gone = self.get(c.internal(), plural, fip_id) if after else None
        port_id, router_id = self.core.write(op)
        self.notifier.routers_updated([router_id])
        try:
            self.core.delete(c.internal(), "ports", port_id)
        except errors.PortNotFound:
            pass
        if gone is not None:
            self.core.events.notify(plural, ev.AFTER_DELETE, ctx, gone)

    def set_tags(self, ctx: Context, plural: str, rid: str, add: list[str] | None = None,
                 remove: list[str] | None = None,
                 replace: list[str] | None = None) -> list[str]:
        return self.core.write(lambda conn: store.edit_tags(
            conn, t.floatingips, "floatingip", rid, lambda: not_found(rid),
            add, remove, replace))

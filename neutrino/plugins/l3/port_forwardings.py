"""The ``port_forwardings`` collection under a floating IP.

A forwarding sends a protocol's external port range of a floating IP to a
fixed IPv4 address and port range of an internal port, through the router
that joins the port's subnet to the floating IP's network. A floating IP
either has forwardings or a port association, never both; the first
forwarding decides the floating IP's router, the last one gone clears it.
Ports are kept as ranges (a single port is ``N:N``); the relation between
internal and external ranges is N-N or 1-N, as upstream.
"""
from __future__ import annotations

from typing import Any, Sequence

import netaddr
import sqlalchemy as sa
from sqlalchemy import Connection
from sqlalchemy import exc as sa_exc

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import store
from neutrino.plugins.l3 import common as c
from neutrino.resources.port_forwarding import PF_PARENT_KEY

Range = tuple[int, int]
_PORT_FIELDS = ("internal_port", "internal_port_range", "external_port", "external_port_range")


def bad(msg: str) -> errors.BadRequest:
    return errors.BadRequest(resource="port_forwarding", msg=msg)


def _text(rng: Range) -> str:
    return f"{rng[0]}:{rng[1]}"


def _single(start: int, end: int) -> int | None:
    return start if start == end else None


def to_dict(row: Any, owner: str | None, with_none: bool = False) -> dict[str, Any]:
    """The API shape; a port of a true range shows no single port (upstream
    omits it when reading, and answers ``null`` on create and update)."""
    out: dict[str, Any] = {"id": row.id}
    ext = _single(row.external_port_start, row.external_port_end)
    if ext is not None or with_none:
        out["external_port"] = ext
    out.update(external_port_range=_text((row.external_port_start, row.external_port_end)),
               protocol=row.protocol, internal_port_id=row.internal_port_id,
               internal_ip_address=row.internal_ip_address)
    internal = _single(row.internal_port_start, row.internal_port_end)
    if internal is not None or with_none:
        out["internal_port"] = internal
    out.update(internal_port_range=_text((row.internal_port_start, row.internal_port_end)),
               description=row.description, project_id=owner, tenant_id=owner)
    out[PF_PARENT_KEY] = row.floatingip_id
    return out


def brief(row: Any) -> dict[str, Any]:
    """A forwarding as the floating IP shows it (``expose-port-forwarding-in-fip``,
    ``floating-ip-port-forwarding-detail``)."""
    out: dict[str, Any] = {"id": row.id, "protocol": row.protocol,
                           "internal_ip_address": row.internal_ip_address,
                           "internal_port_id": row.internal_port_id}
    internal = _single(row.internal_port_start, row.internal_port_end)
    if internal is not None:
        out["internal_port"] = internal
    external = _single(row.external_port_start, row.external_port_end)
    if external is not None:
        out["external_port"] = external
    return out


def of_floatingips(conn: Connection, fip_ids: Sequence[str]) -> dict[str, list[Any]]:
    """Forwarding rows per floating IP, in one query per chunk."""
    p = t.portforwardings.c
    out: dict[str, list[Any]] = {}
    for part in store.chunks(list(fip_ids)):
        rows = conn.execute(sa.select(t.portforwardings).where(p.floatingip_id.in_(part))
                            .order_by(p.created_at, p.id))
        for row in rows:
            out.setdefault(row.floatingip_id, []).append(row)
    return out


def of_routers(conn: Connection, router_ids: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    """Each router's forwardings as its L3 agent's sync data carries them
    (``_port_forwardings``: the floating and internal address, the protocol,
    a port or, for a true range, upstream's ``a:b`` range)."""
    p, f = t.portforwardings.c, t.floatingips.c
    out: dict[str, list[dict[str, Any]]] = {}
    for part in store.chunks(list(router_ids)):
        for row in conn.execute(
                sa.select(t.portforwardings, f.router_id, f.floating_ip_address)
                .join(t.floatingips, f.id == p.floatingip_id)
                .where(f.router_id.in_(part)).order_by(p.created_at, p.id)):
            pf: dict[str, Any] = {"id": row.id, "floating_ip_address": row.floating_ip_address,
                                  "internal_ip_address": row.internal_ip_address,
                                  "protocol": row.protocol}
            for which in ("external", "internal"):
                start, end = getattr(row, f"{which}_port_start"), getattr(row, f"{which}_port_end")
                if start == end:
                    pf[f"{which}_port"] = start
                else:
                    pf[f"{which}_port_range"] = _text((start, end))
            out.setdefault(row.router_id, []).append(pf)
    return out


def _parse(text: str) -> Range:
    first, _, last = text.partition(":")
    return int(first), int(last or first)


def _ranges(data: dict[str, Any]) -> tuple[Range | None, Range | None]:
    """(internal, external) ranges asked for; a range wins over a single port."""
    def one(single: str, ranged: str) -> Range | None:
        if data.get(ranged):
            return _parse(data[ranged])
        if data.get(single) is not None:
            return data[single], data[single]
        return None
    return one("internal_port", "internal_port_range"), one("external_port", "external_port_range")


def _check_relation(internal: Range, external: Range) -> None:
    width = internal[1] - internal[0]
    if width > 0 and width != external[1] - external[0]:
        raise bad("Invalid ranges of internal and/or external ports. The relation between "
                  "internal and external ports must be N-N or 1-N")


def _collides(a: Range, b: Range) -> bool:
    return max(a[0], b[0]) <= min(a[1], b[1])


class PortForwardings:
    """Serves ``port_forwardings`` with the core collections' interface."""

    def __init__(self, plugin: Any) -> None:
        self.plugin = plugin

    @property
    def core(self) -> Any:
        return self.plugin.core

    # -- reading -----------------------------------------------------------------

    def _owner(self, conn: Connection, fip_id: str) -> str | None:
        return conn.execute(sa.select(t.floatingips.c.project_id)
                            .where(t.floatingips.c.id == fip_id)).scalar()

    def get(self, ctx: Context, plural: str, pf_id: str) -> dict[str, Any]:
        with self.plugin.db.reader() as conn:
            row = store.get_row(conn, t.portforwardings, pf_id,
                                lambda: errors.PortForwardingNotFound(id=pf_id))
            return to_dict(row, self._owner(conn, row.floatingip_id))

    def list(self, ctx: Context, plural: str,
             query: store.ListQuery) -> tuple[list[dict[str, Any]], bool]:
        p = t.portforwardings.c

        def single(col: str) -> Any:
            return lambda vals: sa.or_(*[sa.and_(p[f"{col}_start"] == n, p[f"{col}_end"] == n)
                                         for n in vals])

        def ranged(vals: list[str]) -> Any:
            return sa.or_(*[sa.and_(p.external_port_start == a, p.external_port_end == b)
                            for a, b in map(_parse, vals)])
        clauses = store.column_clauses(t.portforwardings, query.filters, {
            "external_port": single("external_port"), "external_port_range": ranged})
        sorts = [("external_port_start" if k in ("external_port", "external_port_range") else k,
                  asc) for k, asc in query.sorts]
        query = store.ListQuery(**{**query.__dict__, "sorts": sorts})
        with self.plugin.db.reader() as conn:
            rows, more = store.paged_select(conn, t.portforwardings, clauses, query)
            f = t.floatingips.c
            owners = dict(conn.execute(sa.select(f.id, f.project_id).where(
                f.id.in_(sorted({r.floatingip_id for r in rows})))).all()) if rows else {}
            return [to_dict(r, owners[r.floatingip_id]) for r in rows], more

    # -- checks ------------------------------------------------------------------

    def _check_collisions(self, conn: Connection, fip_id: str, pf: dict[str, Any],
                          internal: Range, external: Range) -> None:
        p = t.portforwardings.c
        others = [r for r in conn.execute(sa.select(t.portforwardings).where(
            p.protocol == pf["protocol"],
            sa.or_(p.floatingip_id == fip_id,
                   sa.and_(p.internal_port_id == pf["internal_port_id"],
                           p.internal_ip_address == pf["internal_ip_address"]))))
                  if r.id != pf.get("id")]
        checks = (("internal_port_range", internal, lambda r: (
                       r.internal_port_id == pf["internal_port_id"]
                       and r.internal_ip_address == pf["internal_ip_address"]),
                   lambda r: (r.internal_port_start, r.internal_port_end)),
                  ("external_port_range", external, lambda r: r.floatingip_id == fip_id,
                   lambda r: (r.external_port_start, r.external_port_end)))
        for key, wanted, same, of in checks:
            for row in others:
                if same(row) and _collides(of(row), wanted):
                    raise bad(f"There is a port collision with the {key}. The following "
                              f"ranges collide: {_text(of(row))} and {_text(wanted)}")

    def _port_bound_to_fip(self, conn: Connection, pf: dict[str, Any]) -> None:
        f = t.floatingips.c
        bound = conn.execute(sa.select(f.id, f.floating_ip_address).where(
            f.fixed_port_id == pf["internal_port_id"]).order_by(f.id).limit(1)).first()
        if bound is not None:
            raise errors.PortHasBindingFloatingIP(
                floating_ip_address=bound.floating_ip_address, fip_id=bound.id,
                port_id=pf["internal_port_id"], fixed_ip=pf["internal_ip_address"])

    def _router(self, conn: Connection, ctx: Context, fip: Any, pf: dict[str, Any],
                fixed_ips_message: str) -> str:
        """The router reaching the internal IP from the floating IP's network."""
        port_id = pf["internal_port_id"]
        port = c.visible_port(conn, ctx, port_id)
        allocs = c.port_ips(conn, [port_id]).get(port_id, [])
        v4 = [a for a in allocs if netaddr.IPAddress(a.ip_address).version == 4]
        if not v4:
            raise bad(f"Requested internal port {port_id} must allocate an IPv4 address "
                      f"at least")
        chosen = [a for a in v4 if netaddr.IPAddress(a.ip_address)
                  == netaddr.IPAddress(pf["internal_ip_address"])]
        if not chosen:
            shown = [{"subnet_id": a.subnet_id, "ip_address": a.ip_address} for a in v4]
            raise bad(fixed_ips_message.format(shown))
        try:
            router_id: str = self.plugin.l3.floatingips._router_for(
                conn, port, chosen[0].subnet_id, fip.floating_network_id)
        except errors.ExternalGatewayForFloatingIPNotFound:
            raise bad(f"External network {fip.floating_network_id} is not reachable from "
                      f"subnet {chosen[0].subnet_id}. Cannot set Port forwarding for port "
                      f"{port_id} with Floating IP {fip.id}") from None
        if fip.router_id and fip.router_id != router_id:
            raise bad(f"The Floating IP {fip.id} had been set on router {fip.router_id}, the "
                      f"internal Neutron port {port_id} can not reach it")
        return router_id

    def _lock_fip(self, conn: Connection, fip_id: str) -> Any:
        return store.get_row(conn, t.floatingips, fip_id,
                             lambda: errors.FloatingIPNotFound(floatingip_id=fip_id),
                             for_update=True)

    def _duplicate(self, pf: dict[str, Any]) -> errors.BadRequest:
        return bad(f"A duplicate port forwarding entry with same attributes already exists, "
                   f"conflicting values are {pf}")

    # -- writing -------------------------------------------------------------------

    def create(self, ctx: Context, plural: str,
               items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        routers: set[str] = set()
        created = self.core.write(
            lambda conn: [self._create_one(conn, ctx, i, routers) for i in items])
        self.plugin.routers_changed(sorted(routers))
        return created

    def _create_one(self, conn: Connection, ctx: Context, data: dict[str, Any],
                    routers: set[str]) -> dict[str, Any]:
        """``routers``: gets the router the forwarding is on."""
        fip_id = data[PF_PARENT_KEY]
        internal, external = _ranges(data)
        if internal is None or external is None:
            raise bad("The internal and external ports of a port forwarding must be given")
        _check_relation(internal, external)
        pf = {k: data[k] for k in ("protocol", "internal_port_id", "internal_ip_address")}
        fip = self._lock_fip(conn, fip_id)
        self._check_collisions(conn, fip_id, pf, internal, external)
        self._port_bound_to_fip(conn, pf)
        if fip.fixed_port_id:
            raise errors.FloatingIPPortAlreadyAssociated(
                port_id=pf["internal_port_id"], fip_id=fip.id,
                floating_ip_address=fip.floating_ip_address,
                fixed_ip=pf["internal_ip_address"], net_id=fip.floating_network_id)
        router_id = self._router(
            conn, ctx, fip, pf, f"Requested internal IP address {pf['internal_ip_address']} "
            f"is not suitable for internal neutron port {pf['internal_port_id']}, as its "
            f"fixed_ips are {{}}")
        row = {"id": store.new_id(), "floatingip_id": fip_id, **pf,
               "internal_port_start": internal[0], "internal_port_end": internal[1],
               "external_port_start": external[0], "external_port_end": external[1],
               "description": data.get("description") or "", "created_at": store.now()}
        try:
            with conn.begin_nested():
                conn.execute(sa.insert(t.portforwardings).values(**row))
        except sa_exc.IntegrityError:
            raise self._duplicate({"floatingip_id": fip_id, "external_port": external[0],
                                   "protocol": pf["protocol"]}) from None
        store.bump(conn, t.floatingips, fip_id, {"router_id": router_id})
        routers.add(router_id)
        created = conn.execute(sa.select(t.portforwardings)
                               .where(t.portforwardings.c.id == row["id"])).one()
        return to_dict(created, fip.project_id, with_none=True)

    def update(self, ctx: Context, plural: str, pf_id: str, data: dict[str, Any],
               revision: int | None = None) -> dict[str, Any]:
        routers: set[str] = set()
        updated = self.core.write(lambda conn: self._update(conn, ctx, pf_id, data, routers))
        self.plugin.routers_changed(sorted(routers))
        return updated

    def _update(self, conn: Connection, ctx: Context, pf_id: str,
                data: dict[str, Any], routers: set[str]) -> dict[str, Any]:
        """``routers``: gets the router the forwarding was and is on."""
        current = store.get_row(conn, t.portforwardings, pf_id,
                                lambda: errors.PortForwardingNotFound(id=pf_id))
        fip = self._lock_fip(conn, current.floatingip_id)
        pf = {"id": pf_id}
        for key in ("protocol", "internal_port_id", "internal_ip_address", "description"):
            pf[key] = data[key] if data.get(key) is not None else getattr(current, key)
        internal = (current.internal_port_start, current.internal_port_end)
        external = (current.external_port_start, current.external_port_end)
        asked_internal, asked_external = _ranges(data)
        internal = asked_internal or internal
        external = asked_external or external
        if pf["internal_port_id"] != current.internal_port_id:
            self._port_bound_to_fip(conn, pf)
        router_id = self._router(
            conn, ctx, fip, pf, "The internal IP does not correspond to an address on the "
            "internal port, which has fixed_ips {}")
        if any(k in data for k in _PORT_FIELDS):
            _check_relation(internal, external)
            self._check_collisions(conn, fip.id, pf, internal, external)
        values = {k: pf[k] for k in ("protocol", "internal_port_id", "internal_ip_address",
                                     "description")}
        values.update(internal_port_start=internal[0], internal_port_end=internal[1],
                      external_port_start=external[0], external_port_end=external[1])
        try:
            with conn.begin_nested():
                conn.execute(sa.update(t.portforwardings)
                             .where(t.portforwardings.c.id == pf_id).values(**values))
        except sa_exc.IntegrityError:
            raise bad(f"Another port forwarding entry with the same attributes already "
                      f"exists, conflicting values are "
                      f"{ {'external_port': external[0], 'protocol': pf['protocol']} }") from None
        store.bump(conn, t.floatingips, fip.id, {"router_id": router_id})
        routers.update(r for r in (fip.router_id, router_id) if r)
        row = conn.execute(sa.select(t.portforwardings)
                           .where(t.portforwardings.c.id == pf_id)).one()
        return to_dict(row, fip.project_id, with_none=True)

    def delete(self, ctx: Context, plural: str, pf_id: str,
               revision: int | None = None) -> None:
        def op(conn: Connection) -> str | None:
            row = store.get_row(conn, t.portforwardings, pf_id,
                                lambda: errors.PortForwardingNotFound(id=pf_id))
            self._lock_fip(conn, row.floatingip_id)
            return remove(conn, [row])
        self.plugin.routers_changed(self.core.write(op))


def remove(conn: Connection, rows: Sequence[Any]) -> list[str]:
    """Delete forwardings; a floating IP left with none lets go of its
    router. The routers they were on, whose agents must drop them."""
    p, f = t.portforwardings.c, t.floatingips.c
    ids = [r.id for r in rows]
    fip_ids = sorted({r.floatingip_id for r in rows})
    routers = sorted({r.router_id for r in conn.execute(
        sa.select(f.router_id).where(f.id.in_(fip_ids), f.router_id.is_not(None)))})
    for part in store.chunks(ids):
        conn.execute(sa.delete(t.portforwardings).where(p.id.in_(part)))
    kept: set[str] = set()
    for part in store.chunks(fip_ids):
        kept.update(conn.execute(sa.select(p.floatingip_id).distinct()
                                 .where(p.floatingip_id.in_(part))).scalars())
    released = [fip_id for fip_id in fip_ids if fip_id not in kept]
    for part in store.chunks(sorted(kept)):
        store.bump_where(conn, t.floatingips, f.id.in_(part))
    for part in store.chunks(released):
        store.bump_where(conn, t.floatingips, f.id.in_(part), values={"router_id": None})
    return routers

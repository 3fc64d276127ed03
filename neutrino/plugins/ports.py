"""Ports: MAC and IP assignment, address pairs, DHCP options."""
from __future__ import annotations

import operator
from typing import Any, Mapping, Sequence

import netaddr
import sqlalchemy as sa
from sqlalchemy import Connection
from sqlalchemy import exc as sa_exc

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.db.engine import RetryRequest
from neutrino.ipam import request as ipam
from neutrino.plugins import joined as joined_mod
from neutrino.plugins import networks, routed, store
from neutrino.plugins.handler import Handler
from neutrino.plugins.joined import Aggregated, Joined, Reads
from neutrino.plugins.ml2.extension_api import PORT_NETWORK
from neutrino.plugins.ml2.mech_api import VIF_TYPE_BINDING_FAILED, VIF_TYPE_UNBOUND
from neutrino.plugins.row_memo import RowMemo

ROUTER_OWNERS = ("network:router_interface", "network:router_gateway",
                 "network:router_interface_distributed", "network:ha_router_replicated_interface")
# Ports no agent binds, whose status upstream fixes at "N/A" (a local IP's own)
NO_STATUS_OWNERS = ("network:local_ip",)
NOT_APPLICABLE = "N/A"


def not_found(port_id: str) -> errors.PortNotFound:
    return errors.PortNotFound(port_id=port_id)


def visible_clause(ctx: Context) -> Any:
    if ctx.is_admin:
        return None
    owned_nets = sa.select(t.networks.c.id).where(t.networks.c.project_id == ctx.project_id)
    return sa.or_(t.ports.c.project_id == ctx.project_id, t.ports.c.network_id.in_(owned_nets))


# Written only by port creates and updates, which advance the revision, and
# by subnet deletes, which advance it for the ports that lose an address.
_IPS = Aggregated(t.ipallocations, "port_id", ("subnet_id", "ip_address"),
                  follows_revision=True)
_PAIRS = Aggregated(t.allowed_address_pairs, "port_id", ("ip_address", "mac_address"),
                    follows_revision=True)
_OPTS = Aggregated(t.extra_dhcp_opts, "port_id", ("opt_name", "opt_value", "ip_version"),
                   order_by=("id",), follows_revision=True)
# The port's own child tables, read with a single port's row.
CHILDREN = (store.TAGS, _IPS, _PAIRS, _OPTS)
# A port bound to neither: its MAC may still change.
UNPLUGGED = (VIF_TYPE_UNBOUND, VIF_TYPE_BINDING_FAILED)

# Built once: every port delete removes its addresses and row.
_DELETE_IPS = sa.delete(t.ipallocations).where(
    t.ipallocations.c.port_id == sa.bindparam("port"))
_DELETE = sa.delete(t.ports).where(t.ports.c.id == sa.bindparam("port"))


def to_dicts(conn: Connection, rows: Sequence[Any], joined: Reads = (),
             memo: RowMemo | None = None) -> store.Page:
    """API dicts of port rows. The child tables come from the rows when they
    were read with them (``CHILDREN``), else one batch query each; the
    ``joined`` one-to-one tables' attributes are filled from rows read with
    them (their drivers' ``extend`` reads the rest), the ``Aggregated`` ones'
    from the rows or in a batch each.

    With ``memo`` (an API answer's page, which it has seen in
    ``RowMemo.page``): the part of a port's dict that its row and its own
    rows make is taken from the memo when the row is the one it was built
    from (``row_memo.Built``), and what belongs to others (its trunk, its
    network's policy) is filled on top, as for any row."""
    ids = store.row_ids(rows)
    tags = store.child_rows(conn, rows, ids, store.TAGS)
    ips = store.child_rows(conn, rows, ids, _IPS)
    pairs = store.child_rows(conn, rows, ids, _PAIRS)
    opts = store.child_rows(conn, rows, ids, _OPTS)
    out = store.empty_page_of(rows)
    if not rows:
        return out
    # The plain columns in one C call per row, straight into the dict.
    fields = rows[0]._fields
    pick = operator.itemgetter(*[fields.index(c) for c in _PLAIN])
    created, updated = fields.index("created_at"), fields.index("updated_at")
    iso = store.iso
    known = rows.groups if isinstance(rows, store.Page) else None
    if memo is None or known is None:
        memo = None
        own: Reads = joined
        others: Reads = ()
    else:
        own = [j for j in joined if j.follows_revision]
        others = [j for j in joined if not j.follows_revision]
    fill = joined_mod.filler(fields, own, known)
    fill_aggregates = store.aggregate_filler(conn, rows, ids, own)
    fill_others = joined_mod.filler(fields, others, known)
    fill_other_aggregates = store.aggregate_filler(conn, rows, ids, others)
    built = memo.built if memo is not None else None
    for row in rows:
        if built is not None:
            d = built.get(row)
            if d is not None:
                fill_others(d, row)
                fill_other_aggregates(d, d["id"])
                out.append(d)
                continue
        d = dict(zip(_PLAIN, pick(row)))
        rid = d["id"]
        d["tenant_id"] = d["project_id"]
        d["created_at"] = iso(row[created])
        d["updated_at"] = iso(row[updated])
        d["fixed_ips"] = [{"subnet_id": s, "ip_address": ip}
                          for _, s, ip in _ordered(ips[rid])]
        d["allowed_address_pairs"] = [{"ip_address": ip, "mac_address": mac}
                                      for _, ip, mac in pairs[rid]]
        d["extra_dhcp_opts"] = [{"opt_name": n, "opt_value": val, "ip_version": ver}
                                for _, n, val, ver in opts[rid]]
        d["ip_allocation"] = d["ip_allocation"] or "immediate"
        d["tags"] = [tag for _, tag in tags[rid]]
        fill(d, row)
        fill_aggregates(d, rid)
        if built is not None:
            built.put(row, d)
        fill_others(d, row)
        fill_other_aggregates(d, rid)
        out.append(d)
    return out


_PLAIN = ("id", "name", "description", "project_id", "revision_number", "network_id",
          "mac_address", "admin_state_up", "status", "device_id", "device_owner",
          "ip_allocation")


def _ordered(allocs: list[Any]) -> list[Any]:
    if len(allocs) < 2:  # the common case; parsing addresses costs more than the rest
        return allocs
    return sorted(allocs, key=lambda a: (netaddr.IPAddress(a[2]).version,
                                         netaddr.IPAddress(a[2])))


class Ports(Handler):
    table = t.ports

    def __init__(self, conf: Any) -> None:
        self.conf = conf
        # The extension drivers' tables, read with a single port's row, and
        # their one-to-one tables of networks, read with a new port's network
        # (set by the core plugin once its drivers are loaded).
        self.joined: tuple[Joined | Aggregated, ...] = ()
        self.network_joined: tuple[Joined, ...] = ()
        # A port's own child and one-to-one rows, while its revision stands.
        self.memo = RowMemo(t.ports)

    # -- helpers -------------------------------------------------------------

    def _resolve_ips(self, conn: Connection, network_id: str, mac: str,
                     requested: list[dict[str, Any]] | None, device_owner: str,
                     keep: dict[tuple[str, str], bool] | None = None,
                     host: str = "") -> list[tuple[str, str]] | None:
        """(subnet_id, ip) pairs for a port, from IPAM; None when the port is
        on a routed network and must wait for a host (deferred). Which
        subnets automatic addresses may come from is routed networks' say."""
        every = ipam.network_subnets(conn, network_id)
        subnets = ipam.serving(every, network_id, device_owner)
        if keep:  # addresses held stay valid whoever serves them now, as upstream
            held = {subnet_id for subnet_id, _ in keep}
            subnets += [s for s in every if s["id"] in held and s not in subnets]
        if requested is None:
            automatic = routed.usable_subnets(conn, network_id, subnets, host)
            if automatic is None:
                return None
        else:
            segments = routed.requested_segments(subnets, requested)
            # Automatic (SLAAC) addresses only from the port's own segment.
            automatic = ([s for s in subnets if s.get("segment_id") in segments]
                         if routed.is_routed(subnets) else subnets)
        return ipam.allocate(conn, ipam.AddressRequest(
            network_id, mac, requested, device_owner in ROUTER_OWNERS, subnets, automatic,
            keep or {}))

    def _readdress_auto(self, conn: Connection, row: Any, mac: str) -> None:
        if row.device_owner not in ROUTER_OWNERS:
            ipam.readdress(conn, row.id, row.network_id, mac)

    def _insert_ips(self, conn: Connection, port_id: str, network_id: str,
                    pairs: list[tuple[str, str]], explicit: set[str]) -> None:
        if not pairs:
            return
        rows = [{"port_id": port_id, "subnet_id": s, "ip_address": ip,
                 "network_id": network_id} for s, ip in pairs]
        # A taken address we picked is a lost race: the whole operation
        # reruns, so the failed transaction need not stay usable. A taken
        # address the caller asked for is looked up after the failure, which
        # on PostgreSQL needs a savepoint to roll back to.
        try:
            if not explicit.intersection(ip for _, ip in pairs):
                # Pipelined (db/pipeline.py): where its duplicate key shows,
                # it is a lost race that reruns the operation all the same.
                store.insert(conn, t.ipallocations, rows, pipelined=True)
                return
            with conn.begin_nested():
                store.insert(conn, t.ipallocations, rows)
        except sa_exc.IntegrityError:
            held = ipam.taken(conn, pairs, explicit)
            if held is not None:
                raise errors.IpAddressAlreadyAllocated(ip=held[1], subnet_id=held[0]) from None
            raise RetryRequest() from None

    def _check_mac(self, conn: Connection, network_id: str, mac: str, port_id: str | None) -> None:
        stmt = sa.select(t.ports.c.id).where(t.ports.c.network_id == network_id,
                                             t.ports.c.mac_address == mac)
        if port_id:
            stmt = stmt.where(t.ports.c.id != port_id)
        if conn.execute(stmt.limit(1)).first() is not None:
            raise errors.MacAddressInUse(net_id=network_id, mac=mac)

    def _new_mac(self, conn: Connection, row: Any, asked: str | None) -> str:
        """The MAC a port changes to: the one asked for, or a new one for
        null (``port-mac-address-regenerate``); only while the port is not
        bound, since the host wired the old one."""
        mac = asked or ipam.generate_mac(self.conf.base_mac)
        vif_type = conn.execute(sa.select(t.ml2_port_bindings.c.vif_type).where(
            t.ml2_port_bindings.c.port_id == row.id)).scalar()
        if vif_type not in (None, *UNPLUGGED):
            raise errors.PortBound(port_id=row.id, vif_type=vif_type,
                                   old_mac=row.mac_address, new_mac=mac)
        try:
            self._check_mac(conn, row.network_id, mac, row.id)
        except errors.MacAddressInUse:
            if asked:
                raise
            raise RetryRequest() from None  # a generated MAC taken: draw again
        return mac

    def _write_pairs(self, conn: Connection, port_id: str, mac: str,
                     pairs: list[dict[str, Any]] | None) -> None:
        if pairs is None:
            return
        conn.execute(sa.delete(t.allowed_address_pairs)
                     .where(t.allowed_address_pairs.c.port_id == port_id))
        rows = {(p.get("mac_address") or mac, p["ip_address"]) for p in pairs}
        if rows:
            conn.execute(sa.insert(t.allowed_address_pairs), [
                {"port_id": port_id, "mac_address": m, "ip_address": ip} for m, ip in rows])

    def _write_opts(self, conn: Connection, port_id: str, opts: list[dict[str, Any]] | None,
                    replace: bool) -> None:
        """Create sets all options; update merges, and a null value deletes one."""
        if opts is None:
            return
        tbl = t.extra_dhcp_opts
        if replace:
            conn.execute(sa.delete(tbl).where(tbl.c.port_id == port_id))
        for opt in opts:
            match = (tbl.c.port_id == port_id, tbl.c.opt_name == opt["opt_name"],
                     tbl.c.ip_version == opt["ip_version"])
            if opt.get("opt_value") is None:
                conn.execute(sa.delete(tbl).where(*match))
            elif not conn.execute(sa.update(tbl).where(*match)
                                  .values(opt_value=opt["opt_value"])).rowcount:
                # Updated in place when present, so options keep their order.
                conn.execute(sa.insert(tbl).values(port_id=port_id, **opt))

    # -- operations -----------------------------------------------------------

    def create(self, conn: Connection, ctx: Context, data: dict[str, Any]) -> str:
        network_id = data["network_id"]
        network = store.get_row(conn, t.networks, network_id,
                                lambda: networks.not_found(network_id), joined=self.network_joined)
        data[PORT_NETWORK] = inherited = {}
        joined_mod.filler(network._fields, self.network_joined)(inherited, network)
        mac = data.get("mac_address")
        if mac:
            self._check_mac(conn, network_id, mac, None)
        else:
            mac = ipam.generate_mac(self.conf.base_mac)
        owner = data.get("device_owner") or ""
        requested = data.get("fixed_ips")
        ips = self._resolve_ips(conn, network_id, mac, requested, owner,
                                host=data.get(routed.HOST) or "")
        # ``ip_allocation``: none when asked for no address at all.
        allocation = (routed.NONE if requested == [] else
                      routed.DEFERRED if ips is None else routed.IMMEDIATE)
        ips = ips or []
        row = store.standard_row(ctx.project_id, data)
        row.update(network_id=network_id, mac_address=mac,
                   admin_state_up=data.get("admin_state_up", True),
                   status=NOT_APPLICABLE if owner in NO_STATUS_OWNERS else "DOWN",
                   device_id=data.get("device_id") or "", device_owner=owner,
                   ip_allocation=allocation)
        try:  # no savepoint: nothing is read after a failure, which ends the attempt
            # A generated MAC already taken is a lost race wherever its error
            # shows, so that INSERT may be pipelined (db/pipeline.py).
            store.insert(conn, t.ports, row, pipelined=not data.get("mac_address"))
        except sa_exc.IntegrityError:
            if data.get("mac_address"):
                raise errors.MacAddressInUse(net_id=network_id, mac=mac) from None
            raise RetryRequest() from None
        explicit = {i["ip_address"] for i in requested or [] if i.get("ip_address")}
        self._insert_ips(conn, row["id"], network_id, ips, explicit)
        self._write_pairs(conn, row["id"], mac, data.get("allowed_address_pairs"))
        self._write_opts(conn, row["id"], data.get("extra_dhcp_opts"), replace=True)
        if data.get("tags"):
            store.tag_new(conn, row["id"], data["tags"])
        return row["id"]

    def get(self, conn: Connection, port_id: str) -> dict[str, Any]:
        row = self.memo.read(conn, port_id, (*CHILDREN, *self.joined),
                             lambda: not_found(port_id))
        return to_dicts(conn, [row], self.joined)[0]

    def list(self, conn: Connection, ctx: Context, query: store.ListQuery) -> tuple[list[dict[str, Any]], bool]:
        special = {"fixed_ips": self._fixed_ips_filter}
        clauses = store.column_clauses(t.ports, query.filters, special)
        scope = visible_clause(ctx)
        if scope is not None:
            clauses.append(scope)
        rows, more = store.paged_select(conn, t.ports, clauses, query)
        rows = self.memo.page(conn, rows, (*CHILDREN, *self.joined))
        return to_dicts(conn, rows, self.joined, self.memo if query.answer else None), more

    def _fixed_ips_filter(self, values: list[Any]) -> Any:
        """``fixed_ips=ip_address=X`` / ``subnet_id=Y`` / ``ip_address_substr=Z``."""
        clauses = []
        for value in values:
            key, _, wanted = str(value).partition("=")
            col = t.ipallocations.c
            if key == "ip_address":
                cond = col.ip_address == wanted
            elif key == "subnet_id":
                cond = col.subnet_id == wanted
            elif key == "ip_address_substr":
                cond = col.ip_address.contains(wanted, autoescape=True)
            else:
                raise errors.InvalidInput(
                    error_message=f"{key} is not a valid fixed_ips filter")
            clauses.append(t.ports.c.id.in_(sa.select(col.port_id).where(cond)))
        return sa.and_(*clauses)

    def update(self, conn: Connection, ctx: Context, port_id: str, data: dict[str, Any],
               revision: int | None) -> None:
        row = store.get_row(conn, t.ports, port_id, lambda: not_found(port_id), for_update=True)
        store.check_revision(conn, t.ports, port_id, revision)
        values = {k: data[k] for k in ("name", "description", "admin_state_up",
                                       "device_id", "device_owner") if k in data}
        mac = row.mac_address
        if "mac_address" in data and data["mac_address"] != mac:
            mac = self._new_mac(conn, row, data["mac_address"])
            values["mac_address"] = mac
        if "fixed_ips" in data:
            self._update_ips(conn, row, mac, data["fixed_ips"] or [],
                             data.get("device_owner", row.device_owner))
        else:
            if data.get(routed.HOST):
                self._on_new_host(conn, row, mac, data[routed.HOST],
                                  data.get("device_owner", row.device_owner))
            if mac != row.mac_address:
                self._readdress_auto(conn, row, mac)
        if "allowed_address_pairs" in data:
            self._write_pairs(conn, port_id, mac, data["allowed_address_pairs"] or [])
        self._write_opts(conn, port_id, data.get("extra_dhcp_opts"), replace=False)
        store.bump(conn, t.ports, port_id, values)

    def _on_new_host(self, conn: Connection, row: Any, mac: str, host: str,
                     owner: str) -> None:
        """Routed networks: a deferred port gets its addresses once it has a
        host; a port with addresses may move only where they still work."""
        old_host = routed.bound_host(conn, row.id)
        if host == old_host:
            return
        current = {a.subnet_id for a in conn.execute(
            sa.select(t.ipallocations.c.subnet_id).where(t.ipallocations.c.port_id == row.id))}
        if current:
            routed.check_host_fits(conn, row.id, row.network_id, host, current)
            return
        if row.ip_allocation != routed.DEFERRED or old_host:
            return
        ips = self._resolve_ips(conn, row.network_id, mac, None, owner, host=host) or []
        self._insert_ips(conn, row.id, row.network_id, ips, set())

    def lock_many(self, conn: Connection, port_ids: Sequence[str]) -> list[Any]:
        """The rows of those of ``port_ids`` that exist, locked for update in
        id order (two transactions locking some of the same ports wait
        rather than deadlock), a chunk at a time."""
        lock = conn.dialect.name != "sqlite"
        out = []
        for part in store.chunks(sorted(set(port_ids))):
            stmt = sa.select(t.ports).where(t.ports.c.id.in_(part)).order_by(t.ports.c.id)
            out += list(conn.execute(stmt.with_for_update() if lock else stmt))
        return out

    def move_many(self, conn: Connection, rows: Sequence[Any], host: str,
                  bound: Mapping[str, str]) -> None:
        """``update`` of each port's ``binding:host_id`` to ``host`` (rows
        locked by ``lock_many``; ``bound``: each port's host until now):
        what a new host means for its addresses (``_on_new_host``), read for
        all at once, then the revisions. Only ports on routed networks, or
        waiting for a host to be addressed, take the single port's way."""
        ids = [row.id for row in rows]
        ip, sub = t.ipallocations.c, t.subnets.c
        routed_ports: set[str] = set()
        addressed: set[str] = set()
        for part in store.chunks(ids):
            for r in conn.execute(sa.select(ip.port_id, sub.segment_id)
                                  .join(t.subnets, sub.id == ip.subnet_id)
                                  .where(ip.port_id.in_(part))):
                addressed.add(r.port_id)
                if r.segment_id:
                    routed_ports.add(r.port_id)
        for row in rows:
            if (bound.get(row.id) or "") == host:
                continue
            if row.id in routed_ports or (row.id not in addressed
                                          and row.ip_allocation == routed.DEFERRED):
                self._on_new_host(conn, row, row.mac_address, host, row.device_owner)
        for part in store.chunks(ids):
            store.bump_where(conn, t.ports, t.ports.c.id.in_(part))

    def _update_ips(self, conn: Connection, row: Any, mac: str,
                    requested: list[dict[str, Any]], owner: str) -> None:
        current = {(a.subnet_id, a.ip_address): True for a in conn.execute(
            sa.select(t.ipallocations).where(t.ipallocations.c.port_id == row.id))}
        wanted = self._resolve_ips(conn, row.network_id, mac, requested, owner,
                                   keep=current) or []
        for subnet_id, ip in set(current) - set(wanted):
            conn.execute(sa.delete(t.ipallocations).where(
                t.ipallocations.c.port_id == row.id,
                t.ipallocations.c.subnet_id == subnet_id,
                t.ipallocations.c.ip_address == ip))
        new = [p for p in dict.fromkeys(wanted) if p not in current]
        explicit = {i["ip_address"] for i in requested if i.get("ip_address")}
        self._insert_ips(conn, row.id, row.network_id, new, explicit)

    def delete(self, conn: Connection, port_id: str, revision: int | None) -> None:
        store.get_row(conn, t.ports, port_id, lambda: not_found(port_id), for_update=True)
        store.check_revision(conn, t.ports, port_id, revision)
        conn.execute(_DELETE_IPS, {"port": port_id})
        store.delete_tags(conn, port_id)
        conn.execute(_DELETE, {"port": port_id})


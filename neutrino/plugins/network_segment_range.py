"""The ``network_segment_range`` service plugin: segment ranges managed at runtime.

Loaded, it makes the type drivers of VLAN, VXLAN, GRE and Geneve take their
pools' ranges from ``network_segment_ranges`` (``ml2/segment_ranges.py``):
the configured ranges are written there as ``default`` ranges when the
server starts, and admins add shared or per-project ranges through
``/v2.0/network-segment-ranges``. Every change of a range reshapes its
type's pool in the same transaction, so a range is usable, or gone, as
soon as its answer is sent.

A default range cannot be changed or deleted; another range can be deleted
only while no network segment lies in it, and changed only if it keeps
every segment it holds. Ranges that are not defaults may not overlap within
their type and physical network.
"""
from __future__ import annotations

from typing import Any, Sequence

import sqlalchemy as sa
from oslo_policy import policy
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import store
from neutrino.plugins.base import ApiExtension, ServicePlugin
from neutrino.plugins.ml2 import ranges as r
from neutrino.plugins.ml2.segment_ranges import SegmentRanges
from neutrino.resources import network_segment_range as defs

R = t.network_segment_ranges
SEG = t.network_segments
ADMIN = "rule:admin_only"
POLICIES = [f"{verb}_network_segment_range{tags}"
            for verb in ("create", "get", "update", "delete") for tags in ("", ":tags")]

# Each type's id space and the pool its free ids are read from (``available``).
_BOUNDS = {"vlan": (r.MIN_VLAN_TAG, r.MAX_VLAN_TAG), "vxlan": (r.MIN_VNI, r.MAX_VNI),
           "geneve": (r.MIN_VNI, r.MAX_VNI), "gre": (r.MIN_GRE_ID, r.MAX_GRE_ID)}
_POOLS = {"vlan": (t.ml2_vlan_allocations, "vlan_id"),
          "vxlan": (t.ml2_vxlan_allocations, "id"),
          "gre": (t.ml2_gre_allocations, "id"),
          "geneve": (t.ml2_geneve_allocations, "id")}


def _not_found(range_id: str) -> Any:
    return lambda: errors.NetworkSegmentRangeNotFound(range_id=range_id)


def _segments_in(row: Any) -> Any:
    """The network segments lying in the range (a tunnel segment has no
    physical network, where its range has '')."""
    physnet = SEG.c.physical_network
    return sa.and_(SEG.c.network_type == row.network_type,
                   physnet == row.physical_network if row.physical_network
                   else physnet.is_(None),
                   SEG.c.segmentation_id.between(row.minimum, row.maximum))


def _available(conn: Connection, row: Any) -> list[int]:
    table, id_col = _POOLS[row.network_type]
    ident = table.c[id_col]
    stmt = sa.select(ident).where(table.c.allocated.is_(False),
                                  ident.between(row.minimum, row.maximum))
    if row.network_type == "vlan":
        stmt = stmt.where(table.c.physical_network == row.physical_network)
    return sorted(int(i) for i in conn.execute(stmt).scalars())


def _used(conn: Connection, row: Any) -> dict[str, str]:
    """Segment id -> project of the network using it (JSON keys are text)."""
    stmt = (sa.select(SEG.c.segmentation_id, t.networks.c.project_id)
            .join(t.networks, t.networks.c.id == SEG.c.network_id).where(_segments_in(row)))
    return {str(seg_id): project for seg_id, project in conn.execute(stmt)}


def to_dicts(conn: Connection, rows: Sequence[Any]) -> list[dict[str, Any]]:
    tags = store.load_tags(conn, [row.id for row in rows])
    return [{"id": row.id, "name": row.name, "description": row.description,
             "default": row.default, "shared": row.shared, "project_id": row.project_id,
             "network_type": row.network_type, "physical_network": row.physical_network,
             "minimum": int(row.minimum), "maximum": int(row.maximum),
             "used": _used(conn, row), "available": _available(conn, row),
             "created_at": store.iso(row.created_at), "updated_at": store.iso(row.updated_at),
             "revision_number": row.revision_number, "tags": tags.get(row.id, [])}
            for row in rows]


def _check_bounds(network_type: str, lo: int, hi: int) -> None:
    """Each id a valid one of the type and the range not reversed, in
    upstream's words."""
    low, high = _BOUNDS[network_type]
    if network_type == "vlan":
        for tag in (lo, hi):
            if not low <= tag <= high:
                raise errors.NetworkVlanRangeError(
                    vlan_range=f"{lo}:{hi}",
                    error=f"{tag} is not a valid VLAN tag, it must be between {low} and "
                          f"{high}")
        if hi < lo:
            raise errors.NetworkVlanRangeError(
                vlan_range=f"{lo}:{hi}",
                error="End of VLAN range is less than start of VLAN range")
        return
    for ident in (lo, hi):
        if not low <= ident <= high:
            raise errors.NetworkTunnelRangeError(
                tunnel_range=f"{lo}:{hi}",
                error=f"{ident} is not a valid {network_type} identifier")
    if hi < lo:
        raise errors.NetworkTunnelRangeError(
            tunnel_range=f"{lo}:{hi}",
            error="End of tunnel range is less than start of tunnel range")


def _check_overlap(conn: Connection, network_type: str, physnet: str, lo: int, hi: int,
                   exclude: str | None = None) -> None:
    """Ranges that are not defaults never share an id within a type and
    physical network (defaults may lie under them)."""
    stmt = (sa.select(R.c.id).where(R.c.default.is_(False), R.c.network_type == network_type,
                                    R.c.physical_network == physnet,
                                    R.c.minimum <= hi, R.c.maximum >= lo)
            .order_by(R.c.id))
    if exclude is not None:
        stmt = stmt.where(R.c.id != exclude)
    found = list(conn.execute(stmt).scalars())
    if found:
        raise errors.NetworkSegmentRangeOverlaps(range_id=", ".join(found))


class NetworkSegmentRanges:
    """The ``network_segment_ranges`` collection, on the core's transactions."""

    table = R

    def __init__(self, plugin: "NetworkSegmentRangePlugin") -> None:
        self.plugin = plugin

    @property
    def core(self) -> Any:
        return self.plugin.core

    def _load(self, conn: Connection, rid: str) -> dict[str, Any]:
        return to_dicts(conn, [store.get_row(conn, R, rid, _not_found(rid))])[0]

    def create(self, ctx: Context, plural: str,
               items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        def op(conn: Connection) -> list[dict[str, Any]]:
            for ntype in sorted({i["network_type"] for i in items if i["network_type"]}):
                if self.core.type_manager.supports_segment_ranges(ntype):
                    self.core.type_manager.lock_segment_ranges(conn, ntype)
            ids = [self._create_one(conn, item) for item in items]
            for ntype in sorted({item["network_type"] for item in items}):
                self.core.type_manager.segment_ranges_changed(conn, ntype)
            rows = {row.id: row for row in conn.execute(sa.select(R).where(R.c.id.in_(ids)))}
            return to_dicts(conn, [rows[i] for i in ids])
        return self.core.write(op)

    def _create_one(self, conn: Connection, item: dict[str, Any]) -> str:
        ntype = item.get("network_type")
        if not self.core.type_manager.supports_segment_ranges(ntype):
            raise errors.NetworkSegmentRangeNetTypeNotSupported(type=ntype)
        lo, hi = item["minimum"], item["maximum"]
        _check_bounds(ntype, lo, hi)
        physnet = ""
        if ntype == "vlan":
            if item.get("physical_network") is None:
                raise errors.BadRequest(
                    resource=defs.NETWORK_SEGMENT_RANGE.singular,
                    msg="Network type vlan requires 'physical_network' to be specified "
                        "while creating new range")
            physnet = item["physical_network"]
        _check_overlap(conn, ntype, physnet, lo, hi)
        row = store.standard_row(None, item, revision=0)
        row.update(project_id=None if item["shared"] else item["project_id"],
                   default=False, shared=item["shared"], network_type=ntype,
                   physical_network=physnet, minimum=lo, maximum=hi)
        conn.execute(sa.insert(R).values(**row))
        if item.get("tags"):
            store.tag_new(conn, row["id"], item["tags"])
        return str(row["id"])

    def get(self, ctx: Context, plural: str, rid: str) -> dict[str, Any]:
        """A range, found for an admin; for anyone else (whom policy then
        refuses) only if it is their project's, as upstream's
        project-scoped read finds it: another's is "not found" by name,
        their own the web layer's 404 (``HTTPNotFound``, registered below)."""
        with self.core.db.reader() as conn:
            found = self._load(conn, rid)
        if not ctx.is_admin and found["project_id"] != ctx.project_id:
            raise errors.NetworkSegmentRangeNotFound(range_id=rid)
        return found

    def list(self, ctx: Context, plural: str,
             query: store.ListQuery) -> tuple[list[dict[str, Any]], bool]:
        clauses = store.column_clauses(R, query.filters, {})
        if not ctx.is_admin:  # (as ``get``: what policy then hides anyway)
            clauses.append(R.c.project_id == ctx.project_id)
        with self.core.db.reader() as conn:
            rows, more = store.paged_select(conn, R, clauses, query)
            return to_dicts(conn, rows), more

    def update(self, ctx: Context, plural: str, rid: str, data: dict[str, Any],
               revision: int | None = None) -> dict[str, Any]:
        def op(conn: Connection) -> dict[str, Any]:
            row = self._locked(conn, rid)
            if row.default:
                raise errors.NetworkSegmentRangeDefaultReadOnly(range_id=rid)
            lo = data.get("minimum", int(row.minimum))
            hi = data.get("maximum", int(row.maximum))
            held = conn.execute(sa.select(sa.func.min(SEG.c.segmentation_id),
                                          sa.func.max(SEG.c.segmentation_id))
                                .where(_segments_in(row))).one()
            if held[0] is not None and (lo > held[0] or hi < held[1]):
                raise errors.NetworkSegmentRangeReferencedByProject(range_id=rid)
            _check_bounds(row.network_type, lo, hi)
            _check_overlap(conn, row.network_type, row.physical_network, lo, hi, exclude=rid)
            values = {k: data[k] for k in ("name", "description") if k in data}
            store.bump(conn, R, rid, {**values, "minimum": lo, "maximum": hi}, revision)
            self.core.type_manager.segment_ranges_changed(conn, row.network_type)
            return self._load(conn, rid)
        return self.core.write(op)

    def delete(self, ctx: Context, plural: str, rid: str, revision: int | None = None) -> None:
        def op(conn: Connection) -> None:
            row = self._locked(conn, rid)
            if row.default:
                raise errors.NetworkSegmentRangeDefaultReadOnly(range_id=rid)
            store.check_revision(conn, R, rid, revision)
            if conn.execute(sa.select(SEG.c.id).where(_segments_in(row)).limit(1)).first():
                raise errors.NetworkSegmentRangeReferencedByProject(range_id=rid)
            store.delete_tags(conn, rid)
            conn.execute(sa.delete(R).where(R.c.id == rid))
            self.core.type_manager.segment_ranges_changed(conn, row.network_type)
        self.core.write(op)

    def _locked(self, conn: Connection, rid: str) -> Any:
        """The range's row, once every range of its type is locked (its type
        read first, so that two writers lock in the same order)."""
        ntype = conn.execute(sa.select(R.c.network_type).where(R.c.id == rid)).scalar()
        if ntype is None:
            raise errors.NetworkSegmentRangeNotFound(range_id=rid)
        if self.core.type_manager.supports_segment_ranges(ntype):
            self.core.type_manager.lock_segment_ranges(conn, ntype)
        return store.get_row(conn, R, rid, _not_found(rid))

    def set_tags(self, ctx: Context, plural: str, rid: str, add: list[str] | None = None,
                 remove: list[str] | None = None, replace: list[str] | None = None) -> list[str]:
        return self.core.write(lambda conn: store.edit_tags(
            conn, R, defs.NETWORK_SEGMENT_RANGE.singular, rid, _not_found(rid), add, remove,
            replace))


class NetworkSegmentRangePlugin(ServicePlugin):
    """Segment ranges of project networks, managed at runtime by admins."""

    service_type = "NETWORK_SEGMENT_RANGE"
    supported_extension_aliases = ("network-segment-range",)

    def __init__(self, conf: Any, db: Any) -> None:
        super().__init__(conf, db)
        self.ranges = NetworkSegmentRanges(self)
        errors.register_not_found(defs.NETWORK_SEGMENT_RANGE.singular,
                                  lambda rid: errors.HTTPNotFound())

    def connect(self, core: Any) -> None:
        """The pools follow the database's ranges from the core's start-up
        sync on (which writes the configured ranges as the defaults)."""
        super().connect(core)
        core.type_manager.use_segment_ranges(SegmentRanges())

    def collections(self) -> dict[str, Any]:
        return {"network_segment_ranges": self.ranges}

    def extensions(self) -> list[ApiExtension]:
        rules = [policy.RuleDefault(name, ADMIN, scope_types=["project"]) for name in POLICIES]
        return [ApiExtension(descriptor=defs.NETWORK_SEGMENT_RANGE_EXTENSION,
                             resources=[defs.NETWORK_SEGMENT_RANGE], policies=rules)]

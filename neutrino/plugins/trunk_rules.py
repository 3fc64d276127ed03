"""Which ports may become a trunk's parent or subports, as upstream decides.

Every check runs inside the transaction that writes the trunk, in
upstream's order, so the first refusal a client sees is upstream's. A port
is the parent of at most one trunk and a subport of at most one; a bound
parent (one with a host) can be neither trunked nor untrunked by the
Open vSwitch trunk driver; a subport must not be attached to a device; a
segmentation id is used once per trunk.
"""
from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.resources import trunk as defs

# Segmentation types and their id check (the Open vSwitch trunk driver's,
# upstream's default). ``inherit`` is no type of its own: it stands for the
# subport's network's type and id, which must then be one of these.
SEGMENTATION_TYPES = {"vlan": lambda seg_id: 1 <= seg_id <= 4094}


def _invalid(msg: str) -> errors.InvalidInput:
    return errors.InvalidInput(error_message=msg)


def check_basic(subports: Any) -> list[dict[str, Any]]:
    """The list check the API does on POST, for the action bodies."""
    problem = defs.subport_list_problem(subports)
    if problem:
        raise _invalid(problem)
    return subports


def port_row(conn: Connection, ctx: Context, port_id: str) -> Any:
    """The port as the caller may see it: another project's port does not exist."""
    row = conn.execute(sa.select(t.ports).where(t.ports.c.id == port_id)).first()
    if row is None or not _visible(conn, ctx, row):
        raise errors.PortNotFound(port_id=port_id)
    return row


def _visible(conn: Connection, ctx: Context, row: Any) -> bool:
    if ctx.is_admin or row.project_id == ctx.project_id:
        return True
    owner = conn.execute(sa.select(t.networks.c.project_id)
                         .where(t.networks.c.id == row.network_id)).scalar()
    return owner == ctx.project_id


def is_bound(conn: Connection, port_id: str) -> bool:
    host = conn.execute(sa.select(t.ml2_port_bindings.c.host)
                        .where(t.ml2_port_bindings.c.port_id == port_id)).scalar()
    return bool(host)


_PORT = sa.bindparam("port")
# Whether a port is in a trunk, as subport or parent: one statement built
# once (every port delete asks).
_TRUNK_USE = sa.select(
    sa.select(t.subports.c.trunk_id).where(t.subports.c.port_id == _PORT)
    .limit(1).scalar_subquery().label("as_subport"),
    sa.select(t.trunks.c.id).where(t.trunks.c.port_id == _PORT)
    .limit(1).scalar_subquery().label("as_parent"))


def trunk_use(conn: Connection, port_id: str) -> Any:
    """The trunk ``port_id`` is a subport of (``as_subport``) and the one it
    is the parent of (``as_parent``), each None when there is none."""
    return conn.execute(_TRUNK_USE, {"port": port_id}).one()


def _not_in_a_trunk(conn: Connection, port_id: str) -> None:
    use = trunk_use(conn, port_id)
    if use.as_subport:
        raise errors.TrunkPortInUse(port_id=port_id)
    if use.as_parent:
        raise errors.ParentPortInUse(port_id=port_id)


def check_parent(conn: Connection, ctx: Context, port_id: str) -> None:
    # Visibility first: a port the caller may not see is not found, whatever
    # trunk it is in (a 409 would tell it exists).
    port_row(conn, ctx, port_id)
    _not_in_a_trunk(conn, port_id)
    if is_bound(conn, port_id):
        raise errors.ParentPortInUse(port_id=port_id)


def check_subports(conn: Connection, ctx: Context, trunk_id: str | None, parent_id: str,
                   subports: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Subports ready to store: ``{port_id, segmentation_type, segmentation_id}``."""
    mtus = _mtus(conn, [parent_id, *[s["port_id"] for s in subports]])
    inherited = _network_segmentation(
        conn, ctx, [s["port_id"] for s in subports if s.get("segmentation_type") == defs.INHERIT])
    out = []
    for sub in subports:
        if sub["port_id"] in inherited:
            kind, seg_id = inherited[sub["port_id"]]
            sub = {"port_id": sub["port_id"], "segmentation_type": kind,
                   "segmentation_id": seg_id}
        port_id = sub["port_id"]
        if port_id == parent_id:
            raise errors.ParentPortInUse(port_id=port_id)
        parent_mtu, sub_mtu = mtus.get(parent_id), mtus.get(port_id)
        if parent_mtu and sub_mtu and sub_mtu > parent_mtu:
            raise errors.SubPortMtuGreaterThanTrunkPortMtu(
                port_id=port_id, port_mtu=sub_mtu, trunk_id=parent_id, trunk_mtu=parent_mtu)
        kind, seg_id = _segmentation(sub)
        row = port_row(conn, ctx, port_id)
        _not_in_a_trunk(conn, port_id)
        if row.device_id:
            raise errors.PortInUse(port_id=port_id, net_id=row.network_id,
                                   device_id=row.device_id)
        out.append({"port_id": port_id, "segmentation_type": kind, "segmentation_id": seg_id})
    if trunk_id is not None:
        _check_unused(conn, trunk_id, out)
    return out


def _network_segmentation(conn: Connection, ctx: Context,
                          port_ids: list[str]) -> dict[str, tuple[Any, Any]]:
    """Each port's network's ``provider:network_type`` and
    ``provider:segmentation_id``, for the subports that inherit them: what
    the network shows (None and None without a segment). A network of
    several segments shows none, and a port the caller cannot see has no
    network to inherit from: such a subport keeps no segmentation details,
    which is what upstream then refuses it for."""
    if not port_ids:
        return {}
    seg, p = t.network_segments.c, t.ports.c
    rows = conn.execute(sa.select(p.id, p.project_id, p.network_id, seg.network_type,
                                  seg.segmentation_id)
                        .select_from(t.ports.outerjoin(t.network_segments, sa.and_(
                            seg.network_id == p.network_id, seg.is_dynamic.is_(False))))
                        .where(p.id.in_(sorted(set(port_ids)))))
    found: dict[str, list[tuple[Any, Any]]] = {}
    for row in rows:
        if _visible(conn, ctx, row):
            found.setdefault(row.id, []).append((row.network_type, row.segmentation_id))
    return {port_id: segs[0] for port_id, segs in found.items() if len(segs) == 1}


def _segmentation(sub: dict[str, Any]) -> tuple[str, int]:
    if "segmentation_type" not in sub or "segmentation_id" not in sub:
        raise _invalid(f"Invalid subport details '{sub}': missing segmentation information. "
                       f"Must specify both segmentation_id and segmentation_type")
    kind, raw = sub["segmentation_type"], sub["segmentation_id"]
    try:
        seg_id = int(raw)
    except (TypeError, ValueError):
        raise _invalid(f"Invalid subport details: segmentation_id '{raw}' is not an "
                       f"integer") from None
    if kind not in SEGMENTATION_TYPES:
        raise _invalid(f"Unknown segmentation_type '{kind}'")
    if not SEGMENTATION_TYPES[kind](seg_id):
        raise _invalid(f"Segmentation ID '{seg_id}' is not in range")
    return kind, seg_id


def _check_unused(conn: Connection, trunk_id: str, subports: list[dict[str, Any]]) -> None:
    used = {(r.segmentation_type, r.segmentation_id) for r in conn.execute(
        sa.select(t.subports.c.segmentation_type, t.subports.c.segmentation_id)
        .where(t.subports.c.trunk_id == trunk_id))}
    for sub in subports:
        if (sub["segmentation_type"], sub["segmentation_id"]) in used:
            raise errors.DuplicateSubPort(trunk_id=trunk_id, **{
                k: sub[k] for k in ("segmentation_type", "segmentation_id")})


def _mtus(conn: Connection, port_ids: list[str]) -> dict[str, int]:
    """MTU of each port's network, in one query."""
    rows = conn.execute(sa.select(t.ports.c.id, t.networks.c.mtu)
                        .join(t.networks, t.networks.c.id == t.ports.c.network_id)
                        .where(t.ports.c.id.in_(sorted(set(port_ids)))))
    return {r.id: r.mtu for r in rows}


def check_manageable(trunk: Any) -> None:
    """A disabled trunk keeps its subports and stays (upstream's ``TrunkDisabled``)."""
    if not trunk.admin_state_up:
        raise errors.TrunkDisabled(trunk_id=trunk.id)

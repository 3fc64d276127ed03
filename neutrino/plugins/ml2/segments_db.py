"""Rows of ``network_segments``: what each network is made of.

Kept apart from the type drivers, which own the id pools; this module only
records, reads and forgets which segments a network has.
"""
from __future__ import annotations

import uuid
from typing import Any, Iterable, Sequence

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino.db import tables as t
from neutrino.plugins import store
from neutrino.plugins.joined import Aggregated
from neutrino.plugins.ml2.driver_api import Segment

T = t.network_segments
# A network's static segments, read with its row (plugins/joined.py).
STATIC = Aggregated(T, "network_id", ("network_type", "physical_network", "segmentation_id"),
                    order_by=("segment_index",), where=(T.c.is_dynamic.is_(False),))


def _row(network_id: str, segment: Segment, index: int, dynamic: bool = False,
         name: str | None = None, description: str | None = None) -> dict[str, Any]:
    """A new segment row; upstream starts segments at revision 0."""
    ts = store.now()
    return {"id": str(uuid.uuid4()), "network_id": network_id,
            "network_type": segment.network_type,
            "physical_network": segment.physical_network,
            "segmentation_id": segment.segmentation_id, "is_dynamic": dynamic,
            "segment_index": index, "name": name, "description": description,
            "created_at": ts, "updated_at": ts, "revision_number": 0}


def add(conn: Connection, network_id: str, segments: list[Segment]) -> None:
    if not segments:
        return
    store.insert(conn, T, [_row(network_id, s, index) for index, s in enumerate(segments)],
                 pipelined=True)  # with the network's own INSERT (db/pipeline.py)


def add_one(conn: Connection, network_id: str, segment: Segment, name: str | None,
            description: str | None) -> str:
    """A segment added to an existing network (``POST /v2.0/segments``): it
    goes after the network's other segments."""
    last = conn.execute(sa.select(sa.func.max(T.c.segment_index))
                        .where(T.c.network_id == network_id)).scalar()
    row = _row(network_id, segment, 0 if last is None else int(last) + 1,
               name=name, description=description)
    conn.execute(sa.insert(T).values(**row))
    return str(row["id"])


def of_networks(conn: Connection, network_ids: Iterable[str],
                rows: Sequence[Any] = ()) -> dict[str, list[Segment]]:
    """Static segments of each network, in the order they were given: from
    the networks' ``rows`` when they were read with ``STATIC``."""
    ids = network_ids if isinstance(network_ids, list) else list(network_ids)
    found = store.child_rows(conn, rows, ids, STATIC)
    return {nid: [Segment(kind, physnet, None if sid is None else int(sid))
                  for _, kind, physnet, sid in segments]
            for nid, segments in found.items()}


def replace_id(conn: Connection, network_id: str, old: Segment, new_id: int) -> None:
    conn.execute(sa.update(T).where(T.c.network_id == network_id,
                                    T.c.network_type == old.network_type,
                                    T.c.segmentation_id == old.segmentation_id)
                 .values(segmentation_id=new_id))


def remove(conn: Connection, network_id: str) -> None:
    conn.execute(sa.delete(T).where(T.c.network_id == network_id))


def filter_clause(network_id_col: Any, column: str, values: list[Any]) -> Any:
    """Networks having a segment whose ``column`` is one of ``values``."""
    col = T.c[column]
    match = col.in_(values) if len(values) > 1 else col == values[0]
    return network_id_col.in_(sa.select(T.c.network_id).where(match))


# -- segments with their ids (binding, dynamic segments) ------------------------

def _dict(row: Any) -> dict[str, Any]:
    return {"id": row.id, "network_id": row.network_id, "network_type": row.network_type,
            "physical_network": row.physical_network,
            "segmentation_id": None if row.segmentation_id is None else int(row.segmentation_id),
            "is_dynamic": bool(row.is_dynamic)}


def dicts_of_network(conn: Connection, network_id: str,
                     dynamic: bool | None = False) -> list[dict[str, Any]]:
    """The network's segments as mechanism drivers see them, static ones in
    the order given; ``dynamic=None`` means both kinds."""
    stmt = sa.select(T).where(T.c.network_id == network_id)
    if dynamic is not None:
        stmt = stmt.where(T.c.is_dynamic.is_(dynamic))
    return [_dict(r) for r in conn.execute(stmt.order_by(T.c.segment_index, T.c.id))]


def dicts_of_networks(conn: Connection,
                      network_ids: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    """Each network's segments, static and dynamic, in their order, with
    their ``segment_index``: a page of networks at a time."""
    out: dict[str, list[dict[str, Any]]] = {nid: [] for nid in network_ids}
    for part in store.chunks(list(network_ids)):
        for row in conn.execute(sa.select(T).where(T.c.network_id.in_(part))
                                .order_by(T.c.network_id, T.c.segment_index, T.c.id)):
            out[row.network_id].append({**_dict(row), "segment_index": row.segment_index})
    return out


def dicts_by_id(conn: Connection, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    wanted = [i for i in set(ids) if i]
    if not wanted:
        return {}
    return {r.id: _dict(r) for r in conn.execute(sa.select(T).where(T.c.id.in_(wanted)))}


def find_dynamic(conn: Connection, network_id: str, segment: Segment) -> dict[str, Any] | None:
    stmt = sa.select(T).where(T.c.network_id == network_id, T.c.is_dynamic.is_(True),
                              T.c.network_type == segment.network_type)
    if segment.physical_network is not None:
        stmt = stmt.where(T.c.physical_network == segment.physical_network)
    if segment.segmentation_id is not None:
        stmt = stmt.where(T.c.segmentation_id == segment.segmentation_id)
    row = conn.execute(stmt.limit(1)).first()
    return None if row is None else _dict(row)


def add_dynamic(conn: Connection, network_id: str, segment: Segment) -> dict[str, Any]:
    row = _row(network_id, segment, 0, dynamic=True)
    conn.execute(sa.insert(T).values(**row))
    return dicts_by_id(conn, [row["id"]])[row["id"]]


def remove_one(conn: Connection, segment_id: str) -> None:
    conn.execute(sa.delete(T).where(T.c.id == segment_id))

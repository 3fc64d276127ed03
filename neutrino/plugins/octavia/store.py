"""The Octavia objects' rows: one table for the whole graph of every load
balancer (``db.tables.octavia_objects``), each object a dict of its columns
and its JSON attributes."""
from __future__ import annotations

import datetime as dt
import json
from typing import Any, Iterable

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino.db import tables as t

OBJ = t.octavia_objects
COLUMNS = ("id", "kind", "project_id", "loadbalancer_id", "parent_id",
           "provisioning_status", "operating_status", "created_at", "updated_at")


def now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None, microsecond=0)


def decode(row: Any) -> dict[str, Any]:
    obj = dict(json.loads(row.attrs))
    for col in COLUMNS:
        obj[col] = getattr(row, col)
    return obj


def encode(obj: dict[str, Any]) -> dict[str, Any]:
    values = {c: obj.get(c) for c in COLUMNS}
    values["attrs"] = json.dumps({k: v for k, v in obj.items() if k not in COLUMNS})
    return values


def of_loadbalancer(conn: Connection, lb_id: str, lock: bool = False) -> list[dict[str, Any]]:
    """Every object of one load balancer; ``lock`` takes the load balancer's
    row for update first, which serialises writers of that graph."""
    if lock:
        conn.execute(sa.select(OBJ.c.id).where(OBJ.c.id == lb_id).with_for_update())
    rows = conn.execute(sa.select(OBJ).where(OBJ.c.loadbalancer_id == lb_id)).all()
    return [decode(r) for r in rows]


def one(conn: Connection, obj_id: str, kind: str) -> dict[str, Any] | None:
    row = conn.execute(sa.select(OBJ).where(OBJ.c.id == obj_id, OBJ.c.kind == kind)).first()
    return None if row is None else decode(row)


def of_projects(conn: Connection, project_id: str | None) -> list[dict[str, Any]]:
    """Every object of a project (all of them for ``None``)."""
    query = sa.select(OBJ)
    if project_id is not None:
        query = query.where(OBJ.c.project_id == project_id)
    return [decode(r) for r in conn.execute(query).all()]


def insert(conn: Connection, obj: dict[str, Any]) -> None:
    conn.execute(sa.insert(OBJ).values(**encode(obj)))


def save(conn: Connection, obj: dict[str, Any]) -> None:
    conn.execute(sa.update(OBJ).where(OBJ.c.id == obj["id"]).values(**encode(obj)))


def set_statuses(conn: Connection, ids: Iterable[str], provisioning: str | None = None,
                 operating: str | None = None) -> None:
    ids = list(ids)
    values: dict[str, Any] = {}
    if provisioning is not None:
        values["provisioning_status"] = provisioning
    if operating is not None:
        values["operating_status"] = operating
    if ids and values:
        conn.execute(sa.update(OBJ).where(OBJ.c.id.in_(ids)).values(**values))


def touch(conn: Connection, ids: Iterable[str]) -> None:
    ids = list(ids)
    if ids:
        conn.execute(sa.update(OBJ).where(OBJ.c.id.in_(ids)).values(updated_at=now()))


def remove(conn: Connection, ids: Iterable[str]) -> None:
    ids = list(ids)
    if ids:
        conn.execute(sa.delete(OBJ).where(OBJ.c.id.in_(ids)))
        conn.execute(sa.delete(t.octavia_listener_stats).where(
            t.octavia_listener_stats.c.listener_id.in_(ids)))


def count(conn: Connection, kind: str, project_id: str) -> int:
    return int(conn.execute(sa.select(sa.func.count()).select_from(OBJ).where(
        OBJ.c.kind == kind, OBJ.c.project_id == project_id)).scalar() or 0)

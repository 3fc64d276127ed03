"""Provisioning blocks: a port is ACTIVE only once every agent that must
wire it has said so.

Binding a port to a host puts a block for the L2 agent on it; addresses on
DHCP-enabled subnets of a network a live DHCP agent serves put one for the
DHCP agents (``neutrino.plugins.dhcp``); each agent clears its own
block when the device is ready, and the last one to do so makes the port
ACTIVE. Blocks are rows, so every server process sees the same state and
the order in which agents report does not matter.
"""
from __future__ import annotations

from typing import Sequence

import sqlalchemy as sa
from sqlalchemy import Connection
from sqlalchemy import exc as sa_exc

from neutrino.db import tables as t
from neutrino.plugins.store import chunks

L2_AGENT_ENTITY = "L2"
DHCP_ENTITY = "DHCP"
P = t.provisioningblocks.c


def add(conn: Connection, port_id: str, entity: str, fresh: bool = False) -> None:
    add_many(conn, [port_id], entity, fresh)


def add_many(conn: Connection, port_ids: Sequence[str], entity: str,
             fresh: bool = False) -> None:
    """Block each of ``port_ids`` on ``entity`` (idempotent), in two
    statements a chunk. ``fresh``: the ports are being created in this
    transaction, so nobody else can have blocked them: one INSERT."""
    for part in chunks(port_ids):
        rows = [{"port_id": pid, "entity": entity} for pid in dict.fromkeys(part)]
        if not fresh:
            have = set(conn.execute(sa.select(P.port_id).where(P.port_id.in_(part),
                                                               P.entity == entity)).scalars())
            rows = [row for row in rows if row["port_id"] not in have]
        if rows:
            _insert(conn, rows, guarded=not fresh)


def _insert(conn: Connection, rows: list[dict[str, str]], guarded: bool) -> None:
    """``guarded``: a concurrent report may have added one of the blocks
    since they were read; the rows then go in one by one, the taken ones
    left out."""
    if not guarded:
        conn.execute(sa.insert(t.provisioningblocks), rows)
        return
    try:
        with conn.begin_nested():
            conn.execute(sa.insert(t.provisioningblocks), rows)
    except sa_exc.IntegrityError:
        if len(rows) > 1:
            for row in rows:
                _insert(conn, [row], guarded=True)


def clear_many(conn: Connection, port_ids: Sequence[str]) -> None:
    for part in chunks(port_ids):
        conn.execute(sa.delete(t.provisioningblocks).where(P.port_id.in_(part)))


def complete(conn: Connection, port_id: str, entity: str) -> bool:
    """``entity`` is done with ``port_id``; True when nothing blocks it any more."""
    return bool(complete_many(conn, [port_id], entity))


def complete_many(conn: Connection, port_ids: Sequence[str], entity: str) -> list[str]:
    """``entity`` is done with each of ``port_ids`` (two statements a chunk):
    those nothing blocks any more, in their order."""
    blocked: set[str] = set()
    for part in chunks(port_ids):
        conn.execute(sa.delete(t.provisioningblocks).where(P.port_id.in_(part),
                                                           P.entity == entity))
        blocked.update(conn.execute(sa.select(P.port_id).where(P.port_id.in_(part))).scalars())
    return [pid for pid in port_ids if pid not in blocked]


def blocked_on(conn: Connection, port_id: str) -> list[str]:
    return sorted(r.entity for r in conn.execute(
        sa.select(P.entity).where(P.port_id == port_id)))

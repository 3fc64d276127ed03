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
    """Block ``port_id`` on ``entity`` (idempotent). ``fresh``: the port is
    being created in this transaction, so nobody else can have blocked it."""
    if fresh:
        conn.execute(sa.insert(t.provisioningblocks).values(port_id=port_id, entity=entity))
        return
    if conn.execute(sa.select(P.port_id).where(P.port_id == port_id,
                                               P.entity == entity)).first():
        return
    try:
        with conn.begin_nested():
            conn.execute(sa.insert(t.provisioningblocks).values(port_id=port_id,
                                                                entity=entity))
    except sa_exc.IntegrityError:
        pass  # a concurrent report added the same block


def add_many(conn: Connection, port_ids: Sequence[str], entity: str) -> None:
    """``add`` for many ports in two statements a chunk (a sync binding a
    host's router ports); a concurrent report's block on one of them makes
    that chunk fall back to ``add`` port by port."""
    for part in chunks(port_ids):
        have = set(conn.execute(sa.select(P.port_id).where(P.port_id.in_(part),
                                                           P.entity == entity)).scalars())
        rows = [{"port_id": pid, "entity": entity} for pid in dict.fromkeys(part)
                if pid not in have]
        if not rows:
            continue
        try:
            with conn.begin_nested():
                conn.execute(sa.insert(t.provisioningblocks), rows)
        except sa_exc.IntegrityError:
            for row in rows:
                add(conn, row["port_id"], entity)


def clear(conn: Connection, port_id: str) -> None:
    conn.execute(sa.delete(t.provisioningblocks).where(P.port_id == port_id))


def clear_many(conn: Connection, port_ids: Sequence[str]) -> None:
    for part in chunks(port_ids):
        conn.execute(sa.delete(t.provisioningblocks).where(P.port_id.in_(part)))


def complete(conn: Connection, port_id: str, entity: str) -> bool:
    """``entity`` is done with ``port_id``; True when nothing blocks it any more."""
    conn.execute(sa.delete(t.provisioningblocks).where(P.port_id == port_id,
                                                       P.entity == entity))
    return conn.execute(sa.select(P.entity).where(P.port_id == port_id)).first() is None


def complete_many(conn: Connection, port_ids: Sequence[str], entity: str) -> list[str]:
    """``complete`` for many ports in two statements a chunk: those of
    ``port_ids`` nothing blocks any more, in their order."""
    blocked: set[str] = set()
    for part in chunks(port_ids):
        conn.execute(sa.delete(t.provisioningblocks).where(P.port_id.in_(part),
                                                           P.entity == entity))
        blocked.update(conn.execute(sa.select(P.port_id).where(P.port_id.in_(part))).scalars())
    return [pid for pid in port_ids if pid not in blocked]


def blocked_on(conn: Connection, port_id: str) -> list[str]:
    return sorted(r.entity for r in conn.execute(
        sa.select(P.entity).where(P.port_id == port_id)))

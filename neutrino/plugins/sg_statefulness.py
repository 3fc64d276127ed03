"""``/v2.0/security-groups-default-statefulness``: ``stateful`` of new groups.

A group created without ``stateful`` takes its project's setting, else the
system-wide one (``project_id`` null, made by admins), else true. At most
one setting per project and one system-wide (409 otherwise).
"""
from __future__ import annotations

from typing import Any, Sequence

import sqlalchemy as sa
from sqlalchemy import Connection, Row

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import store
from neutrino.plugins.handler import TableHandler

S = t.security_groups_default_statefulness


def not_found(rid: str) -> errors.SecurityGroupDefaultStatefulnessNotFound:
    return errors.SecurityGroupDefaultStatefulnessNotFound(id=rid)


def _to_dict(row: Any) -> dict[str, Any]:
    return {"id": row.id, "project_id": row.project_id, "tenant_id": row.project_id,
            "stateful": row.stateful}


def _owned_by(project_id: str | None) -> Any:
    return S.c.project_id.is_(None) if project_id is None else S.c.project_id == project_id


def default_for(conn: Connection, project_id: str | None) -> bool:
    """The ``stateful`` a new group of ``project_id`` gets (one query)."""
    rows = {r.project_id: r.stateful for r in conn.execute(
        sa.select(S.c.project_id, S.c.stateful).where(
            sa.or_(S.c.project_id.is_(None), S.c.project_id == project_id)))}
    if project_id in rows:
        return bool(rows[project_id])
    return bool(rows.get(None, True))


class DefaultStatefulness(TableHandler):
    """The handler of ``security_groups_default_statefulness``."""

    table = S
    updatable = ("stateful",)

    def not_found(self, rid: str) -> errors.SecurityGroupDefaultStatefulnessNotFound:
        return not_found(rid)

    def to_dicts(self, rows: Sequence[Row[Any]]) -> list[dict[str, Any]]:
        return [_to_dict(r) for r in rows]

    def create(self, conn: Connection, ctx: Context, data: dict[str, Any]) -> str:
        project = data.get("project_id")
        if conn.execute(sa.select(S.c.id).where(_owned_by(project))).first() is not None:
            raise errors.SecurityGroupDefaultStatefulnessAlreadyExists(
                project_id=project or "system-wide")
        rid = store.new_id()
        conn.execute(sa.insert(S).values(id=rid, project_id=project,
                                         stateful=bool(data["stateful"])))
        return rid

"""``bgp-peers``: a BGP router to peer with.

``auth_type`` md5 needs a password; the password is stored for the DR
agents (they ask for it over RPC) and never shown through the API. A
password can be changed (``name`` too) but not given to a peer without
authentication (upstream's ``BgpPeerNotAuthenticated``). A deleted peer
leaves the speakers it was added to, whose agents are told.
"""
from __future__ import annotations

from typing import Any, Sequence

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import store
from neutrino.plugins.table_collection import TableCollection

P = t.bgp_peers
BOUND = t.bgp_speaker_peer_bindings


def to_dict(r: Any, with_password: bool = False) -> dict[str, Any]:
    out = {"id": r.id, "name": r.name, "project_id": r.project_id, "tenant_id": r.project_id,
           "peer_ip": r.peer_ip, "remote_as": r.remote_as, "auth_type": r.auth_type}
    if with_password:
        out["password"] = r.password
    return out


def row(conn: Connection, peer_id: str, for_update: bool = False) -> Any:
    return store.get_row(conn, P, peer_id, lambda: errors.BgpPeerNotFound(id=peer_id),
                         for_update=for_update)


class Peers(TableCollection):
    """The ``bgp_peers`` collection (admin only, by policy)."""

    table = P
    owner_scoped = False

    def not_found(self, rid: str) -> Exception:
        return errors.BgpPeerNotFound(id=rid)

    def to_dicts(self, conn: Connection, rows: Sequence[Any]) -> list[dict[str, Any]]:
        return [to_dict(r) for r in rows]

    def create(self, ctx: Context, plural: str,
               items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for item in items:
            if item["auth_type"] == "md5" and not item.get("password"):
                raise errors.InvalidBgpPeerMd5Authentication()
        made = []
        for item in items:
            values = {"id": store.new_id(), "project_id": item.get("project_id") or ctx.project_id,
                      "name": item.get("name") or "", "peer_ip": item["peer_ip"],
                      "remote_as": item["remote_as"], "auth_type": item["auth_type"],
                      "password": item.get("password")}

            def op(conn: Connection, values: dict[str, Any] = values) -> dict[str, Any]:
                conn.execute(sa.insert(P).values(**values))
                return to_dict(row(conn, values["id"]))
            made.append(self.plugin.core.write(op))
        return made

    def update(self, ctx: Context, plural: str, rid: str, data: dict[str, Any],
               revision: int | None = None) -> dict[str, Any]:
        values = {k: data[k] for k in ("name", "password") if k in data}

        def op(conn: Connection) -> dict[str, Any]:
            peer = row(conn, rid, for_update=True)
            if values.get("password") is not None and peer.auth_type == "none":
                raise errors.BgpPeerNotAuthenticated(bgp_peer_id=rid)
            if values:
                conn.execute(sa.update(P).where(P.c.id == rid).values(**values))
            return to_dict(row(conn, rid))
        peer = self.plugin.core.write(op)
        if "password" in values:
            self.plugin.peer_changed(rid)
        return peer  # type: ignore[no-any-return]

    def delete(self, ctx: Context, plural: str, rid: str, revision: int | None = None) -> None:
        def op(conn: Connection) -> tuple[str, list[str]]:
            peer = row(conn, rid, for_update=True)
            speakers = [r[0] for r in conn.execute(sa.select(BOUND.c.bgp_speaker_id).where(
                BOUND.c.bgp_peer_id == rid))]
            conn.execute(sa.delete(P).where(P.c.id == rid))
            return str(peer.peer_ip), speakers
        peer_ip, speakers = self.plugin.core.write(op)
        for speaker_id in speakers:
            for host in self.plugin.hosts_of(speaker_id):
                self.plugin.notifier.peer_disassociated(speaker_id, peer_ip, host)

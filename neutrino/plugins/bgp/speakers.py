"""``bgp-speakers``: a speaker, its peers and gateway networks, and the
member actions that change them (``add_bgp_peer``, ``remove_bgp_peer``,
``add_gateway_network``, ``remove_gateway_network``) or read its routes
(``get_advertised_routes``).

Only ``name`` and the two ``advertise_*`` switches change after creation.
A peer is added once, and not beside another peer at the same address; a
network is added once per IP version. Agents hosting the speaker are told
after each change commits (``plugin``).
"""
from __future__ import annotations

from typing import Any, Sequence

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import store
from neutrino.plugins.bgp import advertised
from neutrino.plugins.table_collection import TableCollection
from neutrino.resources import validators as v

S = t.bgp_speakers
PEERS = t.bgp_speaker_peer_bindings
NETWORKS = t.bgp_speaker_network_bindings
UPDATABLE = ("name", "advertise_floating_ip_host_routes", "advertise_tenant_networks")


def _bindings(conn: Connection, table: Any, column: str,
              ids: list[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {i: [] for i in ids}
    if not ids:
        return out
    for speaker_id, other in conn.execute(sa.select(table.c.bgp_speaker_id, table.c[column])
                                          .where(table.c.bgp_speaker_id.in_(ids))
                                          .order_by(table.c[column])):
        out[speaker_id].append(other)
    return out


def to_dicts(conn: Connection, rows: list[Any]) -> list[dict[str, Any]]:
    ids = [r.id for r in rows]
    peers = _bindings(conn, PEERS, "bgp_peer_id", ids)
    networks = _bindings(conn, NETWORKS, "network_id", ids)
    return [{"id": r.id, "name": r.name, "project_id": r.project_id,
             "tenant_id": r.project_id, "local_as": r.local_as, "ip_version": r.ip_version,
             "advertise_floating_ip_host_routes": r.advertise_floating_ip_host_routes,
             "advertise_tenant_networks": r.advertise_tenant_networks,
             "peers": peers[r.id], "networks": list(dict.fromkeys(networks[r.id]))}
            for r in rows]


def row(conn: Connection, speaker_id: str, for_update: bool = False) -> Any:
    return store.get_row(conn, S, speaker_id,
                         lambda: errors.BgpSpeakerNotFound(id=speaker_id),
                         for_update=for_update)


def id_in(body: Any, key: str) -> str:
    """The id an action's body names (upstream's ``_get_id_for``)."""
    value = body.get(key) if isinstance(body, dict) else None
    if value is None:
        raise errors.BadRequest(resource="bgp_speaker", msg=f"{key} must be specified")
    try:
        return v.uuid(value)
    except v.Invalid as exc:
        raise errors.BadRequest(resource="bgp_speaker", msg=str(exc)) from None


class Speakers(TableCollection):
    """The ``bgp_speakers`` collection and its member actions (admin only, by
    policy)."""

    table = S
    owner_scoped = False

    @property
    def core(self) -> Any:
        return self.plugin.core

    # -- reading -----------------------------------------------------------------------

    def not_found(self, rid: str) -> Exception:
        return errors.BgpSpeakerNotFound(id=rid)

    def to_dicts(self, conn: Connection, rows: Sequence[Any]) -> list[dict[str, Any]]:
        return to_dicts(conn, list(rows))

    def advertised_routes(self, ctx: Context, rid: str, body: Any) -> dict[str, Any]:
        with self.plugin.db.reader() as conn:
            return {"advertised_routes": advertised.speaker_routes(conn, row(conn, rid))}

    # -- writing -----------------------------------------------------------------------

    def create(self, ctx: Context, plural: str,
               items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        made = []
        for item in items:
            values = {"id": store.new_id(), "project_id": item.get("project_id") or ctx.project_id,
                      "name": item.get("name") or "", "local_as": item["local_as"],
                      "ip_version": item["ip_version"],
                      "advertise_floating_ip_host_routes":
                          item.get("advertise_floating_ip_host_routes", True),
                      "advertise_tenant_networks": item.get("advertise_tenant_networks", True)}

            def op(conn: Connection, values: dict[str, Any] = values) -> dict[str, Any]:
                conn.execute(sa.insert(S).values(**values))
                return to_dicts(conn, [row(conn, values["id"])])[0]
            speaker = self.core.write(op)
            self.plugin.speaker_created(speaker["id"])
            made.append(speaker)
        return made

    def update(self, ctx: Context, plural: str, rid: str, data: dict[str, Any],
               revision: int | None = None) -> dict[str, Any]:
        values = {k: data[k] for k in UPDATABLE if k in data}

        def op(conn: Connection) -> dict[str, Any]:
            row(conn, rid, for_update=True)
            if values:
                conn.execute(sa.update(S).where(S.c.id == rid).values(**values))
            return to_dicts(conn, [row(conn, rid)])[0]
        speaker = self.core.write(op)
        if any(k.startswith("advertise_") for k in values):
            self.plugin.routes_changed([rid])
        return speaker  # type: ignore[no-any-return]

    def delete(self, ctx: Context, plural: str, rid: str, revision: int | None = None) -> None:
        def op(conn: Connection) -> dict[str, list[str]]:
            row(conn, rid, for_update=True)
            hosts = self.plugin.hosting.hosts(conn, [rid])
            conn.execute(sa.delete(S).where(S.c.id == rid))
            return hosts
        hosts = self.core.write(op)
        for host in hosts.get(rid, []):
            self.plugin.notifier.speaker_removed(rid, host)

    # -- member actions ------------------------------------------------------------------

    def add_bgp_peer(self, ctx: Context, rid: str, body: Any) -> dict[str, Any]:
        peer_id = id_in(body, "bgp_peer_id")

        def op(conn: Connection) -> None:
            row(conn, rid, for_update=True)
            peer = conn.execute(sa.select(t.bgp_peers).where(t.bgp_peers.c.id == peer_id)).first()
            if peer is None:
                raise errors.BgpPeerNotFound(id=peer_id)
            same_ip = conn.execute(sa.select(t.bgp_peers.c.id).where(
                PEERS.c.bgp_speaker_id == rid, t.bgp_peers.c.id == PEERS.c.bgp_peer_id,
                t.bgp_peers.c.peer_ip == peer.peer_ip)).first()
            if same_ip is not None:
                raise errors.DuplicateBgpPeerIpException(
                    bgp_peer_id=peer_id, peer_ip=peer.peer_ip, bgp_speaker_id=rid)
            conn.execute(sa.insert(PEERS).values(bgp_speaker_id=rid, bgp_peer_id=peer_id))
        self.core.write(op)
        for host in self.plugin.hosts_of(rid):
            self.plugin.notifier.peer_associated(rid, peer_id, host)
        return {"bgp_peer_id": peer_id}

    def remove_bgp_peer(self, ctx: Context, rid: str, body: Any) -> None:
        peer_id = id_in(body, "bgp_peer_id")

        def op(conn: Connection) -> str:
            row(conn, rid, for_update=True)
            peer_ip = conn.execute(sa.select(t.bgp_peers.c.peer_ip).where(
                t.bgp_peers.c.id == peer_id)).scalar()
            gone = conn.execute(sa.delete(PEERS).where(
                PEERS.c.bgp_speaker_id == rid, PEERS.c.bgp_peer_id == peer_id)).rowcount
            if not gone:
                raise errors.BgpSpeakerPeerNotAssociated(bgp_peer_id=peer_id,
                                                         bgp_speaker_id=rid)
            return str(peer_ip)
        peer_ip = self.core.write(op)
        for host in self.plugin.hosts_of(rid):
            self.plugin.notifier.peer_disassociated(rid, peer_ip, host)
        # Upstream answers an empty body.
        return None

    def add_gateway_network(self, ctx: Context, rid: str, body: Any) -> dict[str, Any]:
        network_id = id_in(body, "network_id")

        def op(conn: Connection) -> None:
            speaker = row(conn, rid, for_update=True)
            if conn.execute(sa.select(t.networks.c.id).where(
                    t.networks.c.id == network_id)).first() is None:
                raise errors.NetworkNotFound(net_id=network_id)
            if conn.execute(sa.select(NETWORKS.c.network_id).where(
                    NETWORKS.c.bgp_speaker_id == rid, NETWORKS.c.network_id == network_id,
                    NETWORKS.c.ip_version == speaker.ip_version)).first() is not None:
                raise errors.BgpSpeakerNetworkBindingError(network_id=network_id,
                                                           bgp_speaker_id=rid)
            conn.execute(sa.insert(NETWORKS).values(
                bgp_speaker_id=rid, network_id=network_id, ip_version=speaker.ip_version))
        self.core.write(op)
        self.plugin.routes_changed([rid])
        return {"network_id": network_id}

    def remove_gateway_network(self, ctx: Context, rid: str, body: Any) -> dict[str, Any]:
        network_id = id_in(body, "network_id")

        def op(conn: Connection) -> list[dict[str, Any]]:
            speaker = row(conn, rid, for_update=True)
            before = advertised.speaker_routes(conn, speaker)
            gone = conn.execute(sa.delete(NETWORKS).where(
                NETWORKS.c.bgp_speaker_id == rid,
                NETWORKS.c.network_id == network_id)).rowcount
            if not gone:
                raise errors.BgpSpeakerNetworkNotAssociated(network_id=network_id,
                                                            bgp_speaker_id=rid)
            after = advertised.speaker_routes(conn, speaker)
            return [r for r in before if r not in after]
        withdrawn = self.core.write(op)
        self.plugin.routes_withdrawn(rid, withdrawn)
        return {"network_id": network_id}

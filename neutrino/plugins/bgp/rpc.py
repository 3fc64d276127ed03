"""What BGP DR agents call on the server (topic ``q-bgp-plugin``), as
upstream's BgpSpeakerRpcCallback: the speakers their host serves, one
speaker with its peers (passwords included: the agent needs them for MD5)
and the routes it advertises, one peer. A module of its own so that API
workers, which only cast, never import oslo.messaging.
"""
from __future__ import annotations

from typing import Any

import oslo_messaging
import sqlalchemy as sa

from neutrino import errors
from neutrino.db import tables as t
from neutrino.plugins.bgp import advertised, peers, speakers


def speaker_info(conn: Any, speaker_id: str) -> dict[str, Any]:
    """A speaker as its agent needs it; {} when it is gone."""
    try:
        speaker = speakers.row(conn, speaker_id)
    except errors.BgpSpeakerNotFound:
        return {}
    bound = conn.execute(sa.select(t.bgp_peers).where(
        t.bgp_speaker_peer_bindings.c.bgp_speaker_id == speaker_id,
        t.bgp_peers.c.id == t.bgp_speaker_peer_bindings.c.bgp_peer_id)
        .order_by(t.bgp_peers.c.peer_ip)).all()
    return {"id": speaker.id, "local_as": speaker.local_as, "project_id": speaker.project_id,
            "ip_version": speaker.ip_version,
            "peers": [{k: v for k, v in peers.to_dict(p, with_password=True).items()
                       if k in ("id", "peer_ip", "remote_as", "auth_type", "password")}
                      for p in bound],
            "advertised_routes": advertised.speaker_routes(conn, speaker)}


class BgpSpeakerRpcEndpoint:
    target = oslo_messaging.Target(version="1.0")

    def __init__(self, db: Any, hosting: Any) -> None:
        self.db = db
        self.hosting = hosting

    def get_bgp_speaker_info(self, context: Any, bgp_speaker_id: str) -> dict[str, Any]:
        with self.db.reader() as conn:
            return speaker_info(conn, bgp_speaker_id)

    def get_bgp_peer_info(self, context: Any, bgp_peer_id: str) -> dict[str, Any]:
        with self.db.reader() as conn:
            try:
                peer = peers.row(conn, bgp_peer_id)
            except errors.BgpPeerNotFound:
                return {}
            found = peers.to_dict(peer, with_password=True)
        return {k: found[k] for k in ("peer_ip", "remote_as", "auth_type", "password")}

    def get_bgp_speakers(self, context: Any, host: str | None = None,
                         **kwargs: Any) -> list[dict[str, Any]]:
        with self.db.reader() as conn:
            ids = self.hosting.speakers_for_host(conn, host or "")
            return [info for info in (speaker_info(conn, i) for i in ids) if info]

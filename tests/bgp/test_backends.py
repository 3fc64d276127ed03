"""BGP speakers, peers and advertised routes on every SQL backend: 4-byte AS
numbers in their BigInteger columns, the route queries, the bindings' keys
and cascades answer the same on SQLite, PostgreSQL and MariaDB."""
from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.bgp.test_advertised_routes import _made, _routes, _scoped_topology
from tests.conftest import Client, Server, with_plugin


@pytest.fixture
def clients(tmp_path: Path, db_url: str) -> Iterator[tuple[Client, Client]]:
    srv = Server(tmp_path, db_url=db_url, extra=with_plugin("bgp")).start()
    try:
        yield (Client(srv.url, project=uuid.uuid4().hex, roles="admin,member,reader"),
               Client(srv.url, project=uuid.uuid4().hex, roles="member,reader"))
    finally:
        srv.stop()


@pytest.mark.backend
def test_speakers_peers_and_routes_on_each_backend(clients: tuple[Client, Client]) -> None:
    admin, owner = clients
    speaker = _made(admin, "/v2.0/bgp-speakers", "bgp_speaker", local_as=4294967295,
                    ip_version=4)
    assert admin.get(f"/v2.0/bgp-speakers/{speaker['id']}")[1]["bgp_speaker"]["local_as"] \
        == 4294967295
    for query in ("ip_version=4&local_as=4294967295", "advertise_tenant_networks=true"):
        listed = admin.get(f"/v2.0/bgp-speakers?{query}")[1]["bgp_speakers"]
        assert [s["id"] for s in listed] == [speaker["id"]], query
    assert admin.get("/v2.0/bgp-speakers?ip_version=6")[1]["bgp_speakers"] == []
    peer = _made(admin, "/v2.0/bgp-peers", "bgp_peer", peer_ip="192.0.2.1",
                 remote_as=4294967295, auth_type="md5", password="p" * 255)
    sid = speaker["id"]
    assert admin.put(f"/v2.0/bgp-speakers/{sid}/add_bgp_peer",
                     {"bgp_peer_id": peer["id"]})[0] == 200
    status, body = admin.put(f"/v2.0/bgp-speakers/{sid}/add_bgp_peer",
                             {"bgp_peer_id": peer["id"]})
    assert status == 409, body
    topo: dict[str, Any] = _scoped_topology(admin, owner)
    for _ in range(2):
        status, body = admin.put(f"/v2.0/bgp-speakers/{sid}/add_gateway_network",
                                 {"network_id": topo["ext"]["id"]})
    assert status == 409 and body["NeutronError"]["type"] == "BgpSpeakerNetworkBindingError"
    port = _made(owner, "/v2.0/ports", "port", network_id=topo["net"]["id"])
    fip = _made(owner, "/v2.0/floatingips", "floatingip",
                floating_network_id=topo["ext"]["id"], port_id=port["id"])
    assert _routes(admin, sid) == [
        {"destination": f"{fip['floating_ip_address']}/32", "next_hop": topo["gateway"]},
        {"destination": topo["inside"]["cidr"], "next_hop": topo["gateway"]}]
    assert admin.delete(f"/v2.0/bgp-peers/{peer['id']}")[0] == 204
    assert admin.get(f"/v2.0/bgp-speakers/{sid}")[1]["bgp_speaker"]["peers"] == []
    assert admin.delete(f"/v2.0/bgp-speakers/{sid}")[0] == 204

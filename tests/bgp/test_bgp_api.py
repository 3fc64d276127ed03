"""``bgp``, ``bgp_4byte_asn``: /v2.0/bgp-speakers and /v2.0/bgp-peers as
upstream's neutron-dynamic-routing answers them: the admin's alone (a
project's member is refused creates and sees nothing), 2- and 4-byte AS
numbers, MD5 peers whose password is never shown, and the speakers'
member actions with their refusals."""
from __future__ import annotations

import uuid
from typing import Any

from tests.conftest import Client

SPEAKERS = "/v2.0/bgp-speakers"
PEERS = "/v2.0/bgp-peers"


def _error(body: Any) -> tuple[str, str]:
    return body["NeutronError"]["type"], body["NeutronError"]["message"]


def _speaker(client: Client, **attrs: Any) -> dict[str, Any]:
    status, body = client.post(SPEAKERS, {"bgp_speaker": {"local_as": 64512, "ip_version": 4,
                                                          **attrs}})
    assert status == 201, body
    return dict(body["bgp_speaker"])


def _peer(client: Client, **attrs: Any) -> dict[str, Any]:
    status, body = client.post(PEERS, {"bgp_peer": {
        "remote_as": 64513, "peer_ip": "192.0.2.1", "auth_type": "none", **attrs}})
    assert status == 201, body
    return dict(body["bgp_peer"])


def _action(client: Client, speaker_id: str, action: str, body: Any) -> tuple[int, Any]:
    return client.put(f"{SPEAKERS}/{speaker_id}/{action}", body)  # type: ignore[no-any-return]


def test_the_extensions_are_listed_with_the_plugin(admin: Client) -> None:
    status, body = admin.get("/v2.0/extensions")
    aliases = {e["alias"]: e for e in body["extensions"]}
    assert {"bgp", "bgp_4byte_asn", "bgp_dragent_scheduler"} <= set(aliases)
    assert aliases["bgp"]["name"] == "Neutron BGP Dynamic Routing Extension"


def test_a_speaker_is_made_shown_renamed_and_deleted_by_the_admin(admin: Client) -> None:
    project = admin.session.headers["X-Project-Id"]
    speaker = _speaker(admin, name="spk", local_as="1234")
    assert speaker == {
        "id": speaker["id"], "name": "spk", "local_as": 1234, "ip_version": 4,
        "advertise_floating_ip_host_routes": True, "advertise_tenant_networks": True,
        "peers": [], "networks": [], "project_id": project, "tenant_id": project}
    assert admin.get(f"{SPEAKERS}/{speaker['id']}")[1]["bgp_speaker"] == speaker
    assert speaker["id"] in [s["id"] for s in admin.get(SPEAKERS)[1]["bgp_speakers"]]
    status, body = admin.put(f"{SPEAKERS}/{speaker['id']}", {"bgp_speaker": {
        "name": "two", "advertise_tenant_networks": False}})
    assert status == 200 and (body["bgp_speaker"]["name"],
                              body["bgp_speaker"]["advertise_tenant_networks"]) == ("two", False)
    assert admin.delete(f"{SPEAKERS}/{speaker['id']}")[0] == 204
    status, body = admin.get(f"{SPEAKERS}/{speaker['id']}")
    assert status == 404 and _error(body) == (
        "BgpSpeakerNotFound", f"BGP speaker {speaker['id']} could not be found.")


def test_as_numbers_take_four_bytes_and_no_more(admin: Client) -> None:
    assert _speaker(admin, local_as=4200000000)["local_as"] == 4200000000
    assert _peer(admin, remote_as=4294967295)["remote_as"] == 4294967295
    for bad in (0, 4294967296, "x", True):
        status, body = admin.post(SPEAKERS, {"bgp_speaker": {"local_as": bad, "ip_version": 4}})
        assert status == 400, (bad, body)
        status, body = admin.post(PEERS, {"bgp_peer": {"remote_as": bad, "peer_ip": "192.0.2.9",
                                                       "auth_type": "none"}})
        assert status == 400, (bad, body)


def test_a_speaker_needs_its_as_and_ip_version_and_keeps_them(admin: Client) -> None:
    for attrs in ({"ip_version": 4}, {"local_as": 1}, {"local_as": 1, "ip_version": 5}):
        status, body = admin.post(SPEAKERS, {"bgp_speaker": attrs})
        assert status == 400, (attrs, body)
    speaker = _speaker(admin)
    for attrs in ({"local_as": "4321"}, {"ip_version": 6}):
        status, body = admin.put(f"{SPEAKERS}/{speaker['id']}", {"bgp_speaker": attrs})
        assert status == 400, body
    assert admin.get(f"{SPEAKERS}/{speaker['id']}")[1]["bgp_speaker"]["local_as"] == 64512


def test_a_project_member_may_neither_make_nor_see_speakers_or_peers(
        admin: Client, owner: Client) -> None:
    status, body = owner.post(SPEAKERS, {"bgp_speaker": {"local_as": 1, "ip_version": 4}})
    assert status == 403 and _error(body)[0] == "PolicyNotAuthorized", body
    status, body = owner.post(PEERS, {"bgp_peer": {"remote_as": 1, "peer_ip": "192.0.2.2",
                                                   "auth_type": "none"}})
    assert status == 403, body
    speaker, peer = _speaker(admin), _peer(admin)
    assert owner.get(SPEAKERS) == (200, {"bgp_speakers": []})
    assert owner.get(PEERS) == (200, {"bgp_peers": []})
    assert owner.get(f"{SPEAKERS}/{speaker['id']}")[0] == 404
    assert owner.get(f"{PEERS}/{peer['id']}")[0] == 404
    assert owner.put(f"{SPEAKERS}/{speaker['id']}", {"bgp_speaker": {"name": "x"}})[0] == 404
    assert owner.delete(f"{PEERS}/{peer['id']}")[0] == 404
    for action, body in (("add_bgp_peer", {"bgp_peer_id": peer["id"]}),
                         ("get_advertised_routes", None)):
        method = owner.get if body is None else owner.put
        args = (f"{SPEAKERS}/{speaker['id']}/{action}",) + (() if body is None else (body,))
        assert method(*args)[0] == 404, action
    assert admin.get(f"{SPEAKERS}/{speaker['id']}")[1]["bgp_speaker"]["peers"] == []


def test_a_peer_password_is_kept_but_never_shown(admin: Client) -> None:
    peer = _peer(admin, auth_type="md5", password="s3cret", name="p")
    assert "password" not in peer and peer["auth_type"] == "md5"
    assert "password" not in admin.get(f"{PEERS}/{peer['id']}")[1]["bgp_peer"]
    assert "password" not in admin.get(f"{PEERS}/{peer['id']}?fields=password")[1]["bgp_peer"]
    assert all("password" not in p for p in admin.get(PEERS)[1]["bgp_peers"])
    status, body = admin.put(f"{PEERS}/{peer['id']}", {"bgp_peer": {"password": "new"}})
    assert status == 200 and "password" not in body["bgp_peer"], body


def test_peer_refusals(admin: Client) -> None:
    status, body = admin.post(PEERS, {"bgp_peer": {"remote_as": 1, "peer_ip": "192.0.2.3",
                                                   "auth_type": "md5"}})
    assert status == 400 and _error(body) == (
        "InvalidBgpPeerMd5Authentication",
        "A password must be supplied when using auth_type md5."), body
    for attrs in ({"peer_ip": "not-an-ip"}, {"auth_type": "sha1"}, {"peer_ip": None}):
        status, body = admin.post(PEERS, {"bgp_peer": {"remote_as": 1, "peer_ip": "192.0.2.3",
                                                       "auth_type": "none", **attrs}})
        assert status == 400, (attrs, body)
    plain = _peer(admin)
    status, body = admin.put(f"{PEERS}/{plain['id']}", {"bgp_peer": {"password": "x"}})
    assert status == 404 and _error(body) == (
        "BgpPeerNotAuthenticated", f"BGP peer {plain['id']} not authenticated."), body
    for attrs in ({"peer_ip": "192.0.2.4"}, {"remote_as": 7}, {"auth_type": "md5"}):
        assert admin.put(f"{PEERS}/{plain['id']}", {"bgp_peer": attrs})[0] == 400, attrs
    missing = str(uuid.uuid4())
    status, body = admin.get(f"{PEERS}/{missing}")
    assert status == 404 and _error(body) == (
        "BgpPeerNotFound", f"BGP peer {missing} could not be found.")


def test_peers_are_added_once_per_address_and_removed(admin: Client) -> None:
    speaker, peer = _speaker(admin), _peer(admin, peer_ip="198.51.100.1")
    sid, pid = speaker["id"], peer["id"]
    assert _action(admin, sid, "add_bgp_peer", {"bgp_peer_id": pid}) == (
        200, {"bgp_peer_id": pid})
    assert admin.get(f"{SPEAKERS}/{sid}")[1]["bgp_speaker"]["peers"] == [pid]
    twin = _peer(admin, peer_ip="198.51.100.1")
    for again in (pid, twin["id"]):
        status, body = _action(admin, sid, "add_bgp_peer", {"bgp_peer_id": again})
        assert status == 409 and _error(body)[0] == "DuplicateBgpPeerIpException", body
    missing = str(uuid.uuid4())
    status, body = _action(admin, sid, "add_bgp_peer", {"bgp_peer_id": missing})
    assert status == 404 and _error(body)[0] == "BgpPeerNotFound", body
    for bad, message in (({}, "bgp_peer_id must be specified"),
                         ({"bgp_peer_id": "nope"}, "'nope' is not a valid UUID")):
        status, body = _action(admin, sid, "add_bgp_peer", bad)
        assert status == 400 and _error(body) == (
            "BadRequest", f"Bad bgp_speaker request: {message}."), body
    resp = admin.session.put(f"{admin.url}{SPEAKERS}/{sid}/remove_bgp_peer",
                             json={"bgp_peer_id": pid}, timeout=30)
    assert (resp.status_code, resp.content) == (200, b"null")  # upstream's JSON null
    status, body = _action(admin, sid, "remove_bgp_peer", {"bgp_peer_id": pid})
    assert status == 404 and _error(body) == (
        "BgpSpeakerPeerNotAssociated",
        f"BGP peer {pid} is not associated with BGP speaker {sid}."), body
    status, body = _action(admin, str(uuid.uuid4()), "add_bgp_peer", {"bgp_peer_id": pid})
    assert status == 404 and _error(body)[0] == "BgpSpeakerNotFound", body


def test_a_deleted_peer_leaves_its_speakers(admin: Client) -> None:
    speaker, peer = _speaker(admin), _peer(admin, peer_ip="198.51.100.7")
    _action(admin, speaker["id"], "add_bgp_peer", {"bgp_peer_id": peer["id"]})
    assert admin.delete(f"{PEERS}/{peer['id']}")[0] == 204
    assert admin.get(f"{SPEAKERS}/{speaker['id']}")[1]["bgp_speaker"]["peers"] == []


def test_gateway_networks_are_added_once_and_removed(admin: Client) -> None:
    speaker = _speaker(admin)
    status, net = admin.post("/v2.0/networks", {"network": {"name": "ext"}})
    sid, nid = speaker["id"], net["network"]["id"]
    assert _action(admin, sid, "add_gateway_network", {"network_id": nid}) == (
        200, {"network_id": nid})
    assert admin.get(f"{SPEAKERS}/{sid}")[1]["bgp_speaker"]["networks"] == [nid]
    status, body = _action(admin, sid, "add_gateway_network", {"network_id": nid})
    assert status == 409 and _error(body) == (
        "BgpSpeakerNetworkBindingError",
        f"Network {nid} is already bound to BgpSpeaker {sid}."), body
    missing = str(uuid.uuid4())
    status, body = _action(admin, sid, "add_gateway_network", {"network_id": missing})
    assert status == 404 and _error(body)[0] == "NetworkNotFound", body
    assert _action(admin, sid, "remove_gateway_network", {"network_id": nid}) == (
        200, {"network_id": nid})
    status, body = _action(admin, sid, "remove_gateway_network", {"network_id": nid})
    assert status == 404 and _error(body) == (
        "BgpSpeakerNetworkNotAssociated",
        f"Network {nid} is not associated with BGP speaker {sid}."), body
    _action(admin, sid, "add_gateway_network", {"network_id": nid})
    assert admin.delete(f"/v2.0/networks/{nid}")[0] == 204
    assert admin.get(f"{SPEAKERS}/{sid}")[1]["bgp_speaker"]["networks"] == []


def test_member_actions_answer_only_their_own_method(admin: Client) -> None:
    speaker = _speaker(admin)
    assert admin.get(f"{SPEAKERS}/{speaker['id']}/add_bgp_peer")[0] == 405
    assert admin.put(f"{SPEAKERS}/{speaker['id']}/get_advertised_routes", {})[0] == 405

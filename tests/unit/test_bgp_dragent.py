"""The BGP DR agent without a daemon: its plan (what to start, stop, peer
with, advertise and withdraw) and its pass (the server's answer applied to
in-memory speakers, casts only waking it)."""
from __future__ import annotations

from typing import Any

from neutrino.agents.bgp import plan as p
from neutrino.agents.bgp.agent import BgpDrAgent, DrAgentEndpoint
from neutrino.agents.bgp.speaker import MemorySpeakers
from neutrino.service import make_conf

SID = "6f1c0f56-0000-4000-8000-000000000001"


def _info(**over: Any) -> dict[str, Any]:
    info = {"id": SID, "local_as": 64512, "ip_version": 4, "project_id": "p",
            "peers": [{"id": "x", "peer_ip": "192.0.2.2", "remote_as": 64513,
                       "auth_type": "md5", "password": "s3cret"}],
            "advertised_routes": [{"destination": "203.0.113.5/32", "next_hop": "192.0.2.9"},
                                  {"destination": "10.1.0.0/24", "next_hop": "192.0.2.9"}]}
    info.update(over)
    return info


def test_a_new_speaker_starts_peers_and_advertises() -> None:
    want = p.speaker_of(_info())
    actions = p.plan({}, {SID: want})
    assert actions == [
        p.StartSpeaker(p.Speaker(SID, 64512, 4)),
        p.AddPeer(SID, p.Peer("192.0.2.2", 64513, "s3cret")),
        p.Advertise(SID, "10.1.0.0/24", "192.0.2.9"),
        p.Advertise(SID, "203.0.113.5/32", "192.0.2.9")]
    running: dict[str, p.Speaker] = {}
    for action in actions:
        running = p.after(running, action)
    assert running == {SID: want}
    assert p.plan(running, {SID: want}) == []


def test_routes_gone_are_withdrawn_and_moved_ones_advertised_again() -> None:
    running = {SID: p.speaker_of(_info())}
    want = p.speaker_of(_info(advertised_routes=[
        {"destination": "10.1.0.0/24", "next_hop": "192.0.2.10"}]))
    assert p.plan(running, {SID: want}) == [
        p.Withdraw(SID, "203.0.113.5/32"), p.Advertise(SID, "10.1.0.0/24", "192.0.2.10")]


def test_a_changed_peer_is_closed_and_opened_again_and_an_unhosted_speaker_stops() -> None:
    running = {SID: p.speaker_of(_info())}
    want = p.speaker_of(_info(peers=[{"peer_ip": "192.0.2.2", "remote_as": 64513,
                                      "auth_type": "none"}]))
    assert p.plan(running, {SID: want})[:2] == [
        p.RemovePeer(SID, p.Peer("192.0.2.2", 64513, "s3cret")),
        p.AddPeer(SID, p.Peer("192.0.2.2", 64513, None))]
    assert p.plan(running, {}) == [p.StopSpeaker(SID)]
    moved = p.speaker_of(_info(local_as=65000))
    assert p.plan(running, {SID: moved})[:2] == [
        p.StopSpeaker(SID), p.StartSpeaker(p.Speaker(SID, 65000, 4))]


def test_routes_of_another_family_or_without_next_hop_are_not_advertised() -> None:
    speaker = p.speaker_of(_info(advertised_routes=[
        {"destination": "2001:db8::/64", "next_hop": "2001:db8::1"},
        {"destination": "203.0.113.7/32", "next_hop": None}]))
    assert speaker.routes == ()


class FakeServer:
    def __init__(self) -> None:
        self.speakers: list[dict[str, Any]] = []
        self.calls = 0

    def get_bgp_speakers(self) -> list[dict[str, Any]]:
        self.calls += 1
        return self.speakers


def _agent(tmp_path: Any) -> tuple[BgpDrAgent, MemorySpeakers, FakeServer]:
    conf_file = tmp_path / "bgp.conf"
    conf_file.write_text("[DEFAULT]\nhost = h1\nperiodic_interval = 3600\n"
                         "[BGP]\nbgp_router_id = 192.0.2.1\n")
    conf = make_conf(["--config-file", str(conf_file)])
    speakers, server = MemorySpeakers(), FakeServer()
    return BgpDrAgent(conf, speakers, plugin_rpc=server), speakers, server


def test_a_pass_applies_the_servers_speakers_and_a_cast_brings_the_next(tmp_path: Any) -> None:
    agent, speakers, server = _agent(tmp_path)
    server.speakers = [_info()]
    agent.step()
    running = speakers.running[SID]
    assert (running.local_as, sorted(running.routes), list(running.peers)) == (
        64512, ["10.1.0.0/24", "203.0.113.5/32"], ["192.0.2.2"])
    assert agent.configurations() == {"bgp_speakers": 1, "bgp_peers": 1,
                                      "advertise_routes": 2}
    server.speakers = [_info(advertised_routes=[])]
    agent.step()  # no cast, not yet due: the server is not asked
    assert server.calls == 1 and len(speakers.running[SID].routes) == 2
    DrAgentEndpoint(agent).bgp_routes_withdrawal_end(
        {}, payload={"withdraw_routes": {"speaker_id": SID, "routes": []}})
    agent.step()
    assert server.calls == 2 and speakers.running[SID].routes == {}
    server.speakers = []
    DrAgentEndpoint(agent).bgp_speaker_remove_end({}, payload={"bgp_speaker": {"id": SID}})
    agent.step()
    assert speakers.running == {} and agent.running == {}

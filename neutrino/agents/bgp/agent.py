"""The BGP dynamic routing agent process (upstream's neutron-bgp-dragent).

It hosts the speakers the server schedules to it: each pass reads what the
server says of them (at start, after a revival or a cast, and every
``periodic_interval``), plans
(``plan``) against what it runs, and applies the plan to its speakers
(``gobgp``). Casts on ``bgp_dragent`` (speaker hosted or dropped, peer
associated or not, routes advertised or withdrawn) only wake the loop to
read again: what the server answers is the truth,
so a lost cast costs at most one ``periodic_interval``.
"""
from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any

import oslo_messaging
from oslo_config import cfg

from neutrino.agents.base import Agent, poll
from neutrino.agents.bgp import plan as plan_mod
from neutrino.agents.bgp.rpc import BgpDrPluginApi
from neutrino.agents.bgp.speaker import Speakers
from neutrino.conf.agents import bgp as bgp_conf
from neutrino.rpc import topics

LOG = logging.getLogger(__name__)

AGENT_TYPE = "BGP dynamic routing agent"


class DrAgentEndpoint:
    """What the server casts (upstream's BgpDrAgentNotifyApi methods)."""

    target = oslo_messaging.Target(version="1.0")

    def __init__(self, agent: BgpDrAgent) -> None:
        self.agent = agent

    def _speaker(self, payload: Any, key: str, field: str) -> None:
        speaker_id = ((payload or {}).get(key) or {}).get(field)
        if speaker_id:
            self.agent.mark(speaker_id)
        else:
            self.agent.resync()

    def bgp_speaker_create_end(self, context: Any, payload: Any = None, **kw: Any) -> None:
        self._speaker(payload, "bgp_speaker", "id")

    def bgp_speaker_remove_end(self, context: Any, payload: Any = None, **kw: Any) -> None:
        self._speaker(payload, "bgp_speaker", "id")

    def bgp_peer_association_end(self, context: Any, payload: Any = None, **kw: Any) -> None:
        self._speaker(payload, "bgp_peer", "speaker_id")

    def bgp_peer_disassociation_end(self, context: Any, payload: Any = None,
                                    **kw: Any) -> None:
        self._speaker(payload, "bgp_peer", "speaker_id")

    def bgp_routes_advertisement_end(self, context: Any, payload: Any = None,
                                     **kw: Any) -> None:
        self._speaker(payload, "advertise_routes", "speaker_id")

    def bgp_routes_withdrawal_end(self, context: Any, payload: Any = None, **kw: Any) -> None:
        self._speaker(payload, "withdraw_routes", "speaker_id")

    def agent_updated(self, context: Any, payload: Any = None, **kw: Any) -> None:
        self.agent.resync()


class BgpDrAgent(Agent):
    agent_type = AGENT_TYPE
    binary = "neutron-bgp-dragent"
    topic = topics.BGP_DRAGENT

    def __init__(self, conf: cfg.ConfigOpts, speakers: Speakers, host: str | None = None,
                 plugin_rpc: Any = None) -> None:
        super().__init__(conf, host)
        bgp_conf.register(conf)
        self.speakers = speakers
        self.plugin_rpc = plugin_rpc
        self.running: dict[str, plan_mod.Speaker] = {}
        self.desired: dict[str, plan_mod.Speaker] = {}
        self._lock = threading.Lock()
        self._full = True
        self._last_full = 0.0
        self._wake = threading.Event()
        self._loop_thread: threading.Thread | None = None

    def configurations(self) -> dict[str, Any]:
        running = dict(self.running)
        return {"bgp_speakers": len(running),
                "bgp_peers": sum(len(s.peers) for s in running.values()),
                "advertise_routes": sum(len(s.routes) for s in running.values())}

    # -- what casts do -------------------------------------------------------------------

    def mark(self, speaker_id: str) -> None:
        """A cast named the speaker: the next pass reads this host's speakers
        again (one call, upstream's agents host one speaker each), which also
        says whether the speaker is still hosted here."""
        LOG.debug("speaker %s changed on the server", speaker_id)
        self.resync()

    def resync(self) -> None:
        with self._lock:
            self._full = True
        self._wake.set()

    # -- one pass --------------------------------------------------------------------------

    def _read(self) -> dict[str, plan_mod.Speaker] | None:
        """The speakers this host should run when the server is to be asked
        (a cast, the start, a revival, ``periodic_interval``); else None."""
        with self._lock:
            due = self._full or self.revival_seen() or (
                time.monotonic() - self._last_full >= self.conf.periodic_interval)
            self._full = False
        if not due:
            return None
        try:
            infos = self.plugin_rpc.get_bgp_speakers()
        except Exception:
            self.resync()
            raise
        self._last_full = time.monotonic()
        return {i["id"]: plan_mod.speaker_of(i) for i in infos}

    def step(self) -> None:
        desired = self._read()
        if desired is None:
            return
        self.desired = desired
        for action in plan_mod.plan(self.running, desired):
            self._apply(action)
            self.running = plan_mod.after(self.running, action)

    def _apply(self, action: plan_mod.Action) -> None:
        s = self.speakers
        if isinstance(action, plan_mod.StartSpeaker):
            s.start(action.speaker.id, action.speaker.local_as, action.speaker.ip_version)
        elif isinstance(action, plan_mod.StopSpeaker):
            s.stop(action.speaker_id)
        elif isinstance(action, plan_mod.AddPeer):
            s.add_peer(action.speaker_id, action.peer)
        elif isinstance(action, plan_mod.RemovePeer):
            s.remove_peer(action.speaker_id, action.peer)
        elif isinstance(action, plan_mod.Advertise):
            s.advertise(action.speaker_id, action.destination, action.next_hop)
        else:
            s.withdraw(action.speaker_id, action.destination)

    # -- the process -----------------------------------------------------------------------

    def start(self) -> None:
        """Clear what a previous run left, listen for casts, report, run the loop."""
        if self.plugin_rpc is None:
            self.plugin_rpc = BgpDrPluginApi(self.conf, self.host)
        self.speakers.clear()
        self.listen(topics.BGP_DRAGENT, [DrAgentEndpoint(self)])
        self.start_reporting()
        self._loop_thread = threading.Thread(
            target=poll, args=(self._stop, float(self.conf.periodic_interval), self.step,
                               self.resync, self._wake),
            name="bgp-dragent", daemon=True)
        self._loop_thread.start()

    def request_stop(self) -> None:
        """Safe from a signal handler: the main thread's ``wait`` returns, then ``stop``."""
        self._stop.set()

    def wait(self) -> None:
        while not self._stop.wait(1.0):
            pass

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._loop_thread is not None:
            self._loop_thread.join(30)
        super().stop()
        self.speakers.clear()
        close = getattr(self.plugin_rpc, "close", None)
        if close is not None:
            close()


def speakers_from(conf: cfg.ConfigOpts) -> Speakers:
    """The speakers ``[BGP] bgp_speaker_driver`` names."""
    bgp_conf.register(conf)
    driver = conf.BGP.bgp_speaker_driver
    if driver != "gobgp":
        raise ValueError(f"[BGP] bgp_speaker_driver: {driver!r} is not a speaker this agent "
                         f"drives (gobgp)")
    # deferred: the GoBGP driver only where it runs
    from neutrino.agents.bgp.gobgp import GoBgpSpeakers
    return GoBgpSpeakers(Path(conf.state_path) / "bgp", conf.BGP.bgp_router_id,
                         conf.BGP.bgp_listen_port, conf.BGP.gobgpd_path, conf.BGP.gobgp_path)

"""The ``bgp`` service plugin (upstream's neutron-dynamic-routing BgpPlugin).

BGP speakers and peers on SQL (``speakers``, ``peers``), the routes each
speaker advertises computed from the L3 tables (``advertised``), speakers
scheduled onto BGP DR agents (``hosting``, with the scheduler API in
``routes``), and the agents told of every change after it commits
(``notifier``): floating IPs associated or released through the floating
IP events, any other router change (gateway, interfaces, state) through the
L3 notifier's watchers, which re-announce the speakers' routes. Agents ask
for their speakers on ``q-bgp-plugin`` (``rpc``).
"""
from __future__ import annotations

import logging
from typing import Any

import sqlalchemy as sa
from oslo_policy import policy

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import events as ev
from neutrino.plugins.base import ApiExtension, PeriodicTask, ServicePlugin
from neutrino.plugins.bgp import advertised
from neutrino.plugins.bgp.hosting import AGENT_TYPE, Hosting
from neutrino.plugins.bgp.notifier import DrAgentNotifier
from neutrino.plugins.bgp.peers import Peers
from neutrino.plugins.bgp.routes import routes
from neutrino.plugins.bgp.speakers import Speakers
from neutrino.plugins.bgp.speakers import row as speaker_row
from neutrino.resources import bgp as res
from neutrino.rpc import topics
from neutrino.rpc.casts import Casts

LOG = logging.getLogger(__name__)

ADMIN = "rule:admin_only"
# Upstream's defaults: everything is the admin's.
POLICIES = ("create_bgp_speaker", "update_bgp_speaker", "delete_bgp_speaker",
            "get_bgp_speaker", "add_bgp_peer", "remove_bgp_peer", "add_gateway_network",
            "remove_gateway_network", "get_advertised_routes",
            "create_bgp_peer", "update_bgp_peer", "delete_bgp_peer", "get_bgp_peer")
SCHEDULER_POLICIES = ("add_bgp_speaker_to_dragent", "remove_bgp_speaker_from_dragent",
                      "list_bgp_speaker_on_dragent", "list_dragent_hosting_bgp_speaker")


def _rules(names: tuple[str, ...]) -> list[policy.RuleDefault]:
    return [policy.RuleDefault(name, ADMIN, scope_types=["project"]) for name in names]


class BgpPlugin(ServicePlugin):
    """BGP dynamic routing: speakers, peers and the DR agents advertising their routes."""

    service_type = "BGP"
    supported_extension_aliases = ("bgp", "bgp_dragent_scheduler", "bgp_4byte_asn")

    def __init__(self, conf: Any, db: Any) -> None:
        super().__init__(conf, db)
        self.speakers = Speakers(self)
        self.peers = Peers(self)
        self.hosting = Hosting(int(conf.agent_down_time))
        self.notifier = DrAgentNotifier(Casts(conf))
        self.agent_notifiers[AGENT_TYPE] = self.notifier
        errors.register_not_found("bgp_speaker", lambda rid: errors.BgpSpeakerNotFound(id=rid))
        errors.register_not_found("bgp_peer", lambda rid: errors.BgpPeerNotFound(id=rid))

    def connect(self, core: Any) -> None:
        super().connect(core)
        core.events.subscribe("floatingips", ev.AFTER_CREATE,
                              lambda ctx, fip: self._floatingip_moved(None, fip))
        core.events.subscribe("floatingips", ev.AFTER_UPDATE,
                              lambda ctx, old, new: self._floatingip_moved(old, new))
        core.events.subscribe("floatingips", ev.AFTER_DELETE,
                              lambda ctx, fip: self._floatingip_moved(fip, None))
        core.events.subscribe("agents", ev.AFTER_UPDATE, self._agent_updated)

    def bind(self, plugins: Any) -> None:
        l3 = plugins.services.get("L3_ROUTER_NAT")
        if l3 is not None:
            l3.l3_notifier.watchers.append(self.routers_changed)

    # -- who hosts what --------------------------------------------------------------------

    def hosts_of(self, speaker_id: str) -> list[str]:
        with self.db.reader() as conn:
            return self.hosting.hosts(conn, [speaker_id]).get(speaker_id, [])

    def speaker_created(self, speaker_id: str) -> None:
        for host in self.core.write(lambda conn: self.hosting.schedule(conn, speaker_id)):
            self.notifier.speaker_created(speaker_id, host)

    def schedule_unscheduled(self) -> None:
        for speaker_id, host in self.core.write(self.hosting.schedule_unscheduled):
            self.notifier.speaker_created(speaker_id, host)

    def agent_reported(self, state: dict[str, Any], status: str) -> None:
        """A DR agent that (re)appears takes an unhosted speaker at once."""
        if state.get("agent_type") == AGENT_TYPE and (status != "alive"
                                                      or state.get("start_flag")):
            self.schedule_unscheduled()

    def periodic_tasks(self) -> list[PeriodicTask]:
        return [(max(float(self.conf.agent_down_time) / 2, 1.0), self.schedule_unscheduled)]

    def _agent_updated(self, ctx: Context, original: dict[str, Any],
                       current: dict[str, Any]) -> None:
        if (current.get("agent_type") == AGENT_TYPE
                and original.get("admin_state_up") != current.get("admin_state_up")):
            self.notifier.agent_updated(bool(current.get("admin_state_up")), current["host"])

    # -- the scheduler API ---------------------------------------------------------------

    def speakers_on_agent(self, agent_id: str) -> list[str]:
        with self.db.reader() as conn:
            return self.hosting.speakers_on_agent(conn, agent_id)

    def agents_hosting(self, speaker_id: str) -> list[str]:
        with self.db.reader() as conn:
            return self.hosting.agents_hosting(conn, speaker_id)

    def add_speaker_to_agent(self, agent_id: str, speaker_id: str) -> None:
        host = self.core.write(lambda conn: self.hosting.add(conn, agent_id, speaker_id))
        self.notifier.speaker_created(speaker_id, host)

    def remove_speaker_from_agent(self, agent_id: str, speaker_id: str) -> None:
        host = self.core.write(lambda conn: self.hosting.remove(conn, agent_id, speaker_id))
        self.notifier.speaker_removed(speaker_id, host)

    # -- routes to agents ------------------------------------------------------------------

    def routes_changed(self, speaker_ids: list[str]) -> None:
        """Announce each hosted speaker's routes again; agents converge on them."""
        with self.db.reader() as conn:
            hosts = self.hosting.hosts(conn, speaker_ids)
            announced = {}
            for speaker_id in hosts:
                try:
                    speaker = speaker_row(conn, speaker_id)
                except errors.BgpSpeakerNotFound:
                    continue
                announced[speaker_id] = advertised.speaker_routes(conn, speaker)
        for speaker_id, routes_ in announced.items():
            for host in hosts[speaker_id]:
                self.notifier.routes_advertised(speaker_id, routes_, host)

    def routes_withdrawn(self, speaker_id: str, routes_: list[dict[str, Any]]) -> None:
        for host in self.hosts_of(speaker_id) if routes_ else ():
            self.notifier.routes_withdrawn(speaker_id, routes_, host)

    def routers_changed(self, router_ids: list[str]) -> None:
        """After any router change: every hosted speaker's routes again."""
        with self.db.reader() as conn:
            hosted = sorted({r[0] for r in conn.execute(sa.select(
                t.bgp_speaker_dragent_bindings.c.bgp_speaker_id))})
        if hosted:
            self.routes_changed(hosted)

    def peer_changed(self, peer_id: str) -> None:
        """A peer's password changed: its speakers' agents read it again."""
        with self.db.reader() as conn:
            speaker_ids = [r[0] for r in conn.execute(sa.select(
                t.bgp_speaker_peer_bindings.c.bgp_speaker_id).where(
                t.bgp_speaker_peer_bindings.c.bgp_peer_id == peer_id))]
            hosts = self.hosting.hosts(conn, speaker_ids)
        for speaker_id, on in hosts.items():
            for host in on:
                self.notifier.peer_associated(speaker_id, peer_id, host)

    def _floatingip_moved(self, old: dict[str, Any] | None,
                          new: dict[str, Any] | None) -> None:
        """A floating IP released from a router is withdrawn (upstream's
        host route with no next hop); the router's own change re-announces
        the routes, the new association among them."""
        if old is None or not old.get("router_id"):
            return
        if new is not None and new.get("router_id") == old["router_id"]:
            return
        with self.db.reader() as conn:
            speaker_ids = advertised.speakers_on_networks(conn, [old["floating_network_id"]])
        route = {"destination": f"{old['floating_ip_address']}/32", "next_hop": None}
        for speaker_id in speaker_ids:
            self.routes_withdrawn(speaker_id, [route])

    # -- what the server offers -------------------------------------------------------------

    def rpc_endpoints(self) -> dict[str, list[Any]]:
        # deferred: endpoints load oslo.messaging, which API workers never import
        from neutrino.plugins.bgp.rpc import BgpSpeakerRpcEndpoint
        return {topics.BGP_PLUGIN: [BgpSpeakerRpcEndpoint(self.db, self.hosting)]}

    def collections(self) -> dict[str, Any]:
        return {"bgp_speakers": self.speakers, "bgp_peers": self.peers}

    def extensions(self) -> list[ApiExtension]:
        actions = {"add_bgp_peer": self.speakers.add_bgp_peer,
                   "remove_bgp_peer": self.speakers.remove_bgp_peer,
                   "add_gateway_network": self.speakers.add_gateway_network,
                   "remove_gateway_network": self.speakers.remove_gateway_network,
                   "get_advertised_routes": self.speakers.advertised_routes}
        return [
            ApiExtension(descriptor=res.BGP_EXT, resources=[res.BGP_SPEAKER, res.BGP_PEER],
                         actions={"bgp_speakers": actions}, policies=_rules(POLICIES)),
            ApiExtension(descriptor=res.BGP_4BYTE_ASN_EXT, attributes=res.FOUR_BYTE_ASNS),
            ApiExtension(descriptor=res.BGP_DRAGENT_SCHEDULER_EXT,
                         policies=_rules(SCHEDULER_POLICIES), routes=routes(self)),
        ]

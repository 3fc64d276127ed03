"""DHCP agent scheduling (``dhcp_agent_scheduler``) as a default service plugin.

Upstream's ML2 plugin schedules networks onto DHCP agents, serves the DHCP
agents' RPC and tells them about changes; here that is one plugin, loaded by
default as upstream's ML2 always offers it, composed of small parts:
``hosting`` (bindings and scheduling), ``notifier`` (casts to agents),
``rpc`` (what agents call), ``api`` (the scheduler's routes).

A port waiting for DHCP: when a port (not a network service port) gets
addresses on DHCP-enabled subnets of a network a live DHCP agent serves, it
carries a DHCP provisioning block, in the same transaction, until the agent
calls ``dhcp_ready_on_ports``; it is ACTIVE only once the L2 block is gone too.
"""
from __future__ import annotations

import logging
from typing import Any

import sqlalchemy as sa
from oslo_policy import policy
from sqlalchemy import Connection

from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import events as ev
from neutrino.plugins.base import ApiExtension, PeriodicTask, ServicePlugin
from neutrino.plugins.dhcp import scheduler as sch
from neutrino.plugins.dhcp.hosting import Hosting
from neutrino.plugins.dhcp.notifier import DhcpAgentNotifier
from neutrino.plugins.dhcp.routes import routes
from neutrino.plugins.dhcp.zones import NetworkZonesDriver
from neutrino.plugins.ml2 import provisioning
from neutrino.resources import agents
from neutrino.resources.extensions import described
from neutrino.rpc import topics
from neutrino.rpc.casts import Casts

LOG = logging.getLogger(__name__)

ALIAS = "dhcp_agent_scheduler"
NETWORK_AZ = "network_availability_zone"
# Ports that never wait for DHCP (upstream's NO_PBLOCKS_TYPES).
NO_DHCP_BLOCK_OWNERS = frozenset({
    "", "network:router_interface_distributed", "network:ha_router_replicated_interface",
    "network:router_interface", "network:router_gateway", "network:router_centralized_snat",
    sch.DEVICE_OWNER_DHCP, "network:floatingip_agent_gateway", "network:router_ha_interface",
    "network:floatingip"})

POLICIES = [
    policy.DocumentedRuleDefault(
        name="create_dhcp-network", check_str="rule:admin_only",
        description="Add a network to a DHCP agent",
        operations=[{"method": "POST", "path": "/agents/{agent_id}/dhcp-networks"}]),
    policy.DocumentedRuleDefault(
        name="get_dhcp-networks", check_str="rule:admin_only",
        description="List networks on a DHCP agent",
        operations=[{"method": "GET", "path": "/agents/{agent_id}/dhcp-networks"}]),
    policy.DocumentedRuleDefault(
        name="delete_dhcp-network", check_str="rule:admin_only",
        description="Remove a network from a DHCP agent",
        operations=[{"method": "DELETE",
                     "path": "/agents/{agent_id}/dhcp-networks/{network_id}"}]),
    policy.DocumentedRuleDefault(
        name="get_dhcp-agents", check_str="rule:admin_only",
        description="List DHCP agents hosting a network",
        operations=[{"method": "GET", "path": "/networks/{network_id}/dhcp-agents"}]),
]


class DhcpAgentSchedulerPlugin(ServicePlugin):
    """DHCP agent scheduling, DHCP agents' RPC and notifications."""

    service_type = "DHCP_AGENT_SCHEDULER"
    supported_extension_aliases = (ALIAS, NETWORK_AZ)

    def __init__(self, conf: Any, db: Any) -> None:
        super().__init__(conf, db)
        self.hosting = Hosting(conf)  # refuses an unknown network_scheduler_driver
        self.notifier: DhcpAgentNotifier | None = None

    def connect(self, core: Any) -> None:
        super().connect(core)
        core.add_extension_driver(NetworkZonesDriver(self.conf))
        events = core.events
        if self.conf.dhcp_agent_notification:
            self.notifier = DhcpAgentNotifier(self.hosting, core, Casts(self.conf))
            self.agent_notifiers[sch.AGENT_TYPE_DHCP] = self.notifier
            core.agent_notifiers[sch.AGENT_TYPE_DHCP] = self.notifier
            for plural in ("networks", "subnets", "ports"):
                singular = plural[:-1]
                events.subscribe(plural, ev.AFTER_CREATE, self._on_created(singular))
                events.subscribe(plural, ev.AFTER_UPDATE, self._on_updated(singular))
                events.subscribe(plural, ev.AFTER_DELETE, self._on_deleted(singular))
            events.subscribe("agents", ev.AFTER_UPDATE, self._on_agent_updated)
            events.subscribe("ports", ev.PRECOMMIT_CREATE,
                             lambda conn, ctx, port: self._dhcp_block(conn, port))
            events.subscribe("ports", ev.PRECOMMIT_UPDATED, self._dhcp_block_on_update)

    # -- events ---------------------------------------------------------------------------

    def _on_created(self, singular: str) -> Any:
        def created(ctx: Context, item: dict[str, Any]) -> None:
            assert self.notifier is not None
            self.notifier.created(singular, item)
        return created

    def _on_updated(self, singular: str) -> Any:
        def updated(ctx: Context, original: dict[str, Any], current: dict[str, Any]) -> None:
            assert self.notifier is not None
            self.notifier.updated(singular, original, current)
        return updated

    def _on_deleted(self, singular: str) -> Any:
        def deleted(ctx: Context, item: dict[str, Any]) -> None:
            assert self.notifier is not None
            self.notifier.deleted(singular, item)
        return deleted

    def _on_agent_updated(self, ctx: Context, original: dict[str, Any],
                          current: dict[str, Any]) -> None:
        if self.notifier is not None and original.get("admin_state_up") != current.get(
                "admin_state_up"):
            self.notifier.agent_updated(current)

    def _dhcp_block_on_update(self, conn: Connection, ctx: Context, original: dict[str, Any],
                              current: dict[str, Any]) -> None:
        if any(original.get(k) != current.get(k) for k in ("fixed_ips", "mac_address")):
            self._dhcp_block(conn, current)

    def _dhcp_block(self, conn: Connection, port: dict[str, Any]) -> None:
        """Block the port on the DHCP agents while they have it to configure."""
        if port.get("device_owner") in NO_DHCP_BLOCK_OWNERS:
            return
        subnet_ids = [f["subnet_id"] for f in port.get("fixed_ips") or []]
        dhcp = bool(subnet_ids) and conn.execute(
            sa.select(t.subnets.c.id).where(t.subnets.c.id.in_(subnet_ids),
                                            t.subnets.c.enable_dhcp.is_(True)).limit(1)
        ).first() is not None
        if dhcp and any(a.alive for a in self.hosting.serving(conn, port["network_id"])):
            provisioning.add(conn, port["id"], provisioning.DHCP_ENTITY)
        else:
            provisioning.complete(conn, port["id"], provisioning.DHCP_ENTITY)

    # -- the scheduler API ----------------------------------------------------------------

    def networks_on_agent(self, agent_id: str) -> list[str]:
        with self.db.reader() as conn:
            ids = sch.networks_of_agent(conn, agent_id)
            if not ids:
                self.hosting.agent(conn, agent_id)  # AgentNotFound
            return ids

    def agents_hosting(self, network_id: str) -> list[str]:
        with self.db.reader() as conn:
            return [a.id for a in self.hosting.hosting(conn, network_id)]

    def add_network(self, agent_id: str, network_id: str) -> None:
        host = self.core.write(lambda conn: self.hosting.add(conn, agent_id, network_id))
        if self.notifier is not None:
            self.notifier.network_added_to_agent(network_id, host)

    def remove_network(self, agent_id: str, network_id: str, notify: bool = True) -> None:
        host = self.core.write(lambda conn: self.hosting.remove(conn, agent_id, network_id))
        if notify and self.notifier is not None:
            self.notifier.network_removed_from_agent(network_id, host)

    # -- failover -------------------------------------------------------------------------

    def periodic_tasks(self) -> list[PeriodicTask]:
        if not self.conf.allow_automatic_dhcp_failover:
            LOG.info("Skipping periodic DHCP agent status check because automatic "
                     "network rescheduling is disabled.")
            return []
        return [(float(self.conf.agent_down_time), self.remove_networks_from_down_agents)]

    def remove_networks_from_down_agents(self) -> list[tuple[str, str]]:
        """Move networks away from dead DHCP agents (when live ones exist);
        the (network, agent) bindings removed."""
        with self.db.reader() as conn:
            dead = self.hosting.dead_bindings(conn)
            if not dead or not self.hosting.any_alive(conn):
                if dead:
                    LOG.warning("No DHCP agents available, skipping rescheduling")
                return []
        removed = []
        for network_id, agent_id in dead:
            LOG.warning("Removing network %s from agent %s because the agent did not "
                        "report to the server in the last %s seconds.", network_id,
                        agent_id, 2 * self.hosting.down_time)
            try:
                # A dead agent is not told: back, it resyncs and finds the network gone.
                self.remove_network(agent_id, network_id, notify=False)
                removed.append((network_id, agent_id))
            except Exception:  # noqa: BLE001 - removed concurrently, or the next run retries
                LOG.info("network %s already removed from DHCP agent %s", network_id,
                         agent_id)
            new = self.core.write(lambda conn, n=network_id: self.hosting.schedule(conn, n))
            for agent in new if self.notifier is not None else ():
                self.notifier.network_added_to_agent(network_id, agent.host)
        return removed

    # -- what the server offers -----------------------------------------------------------

    def rpc_endpoints(self) -> dict[str, list[Any]]:
        # deferred: endpoints load oslo.messaging, which API workers never import
        from neutrino.plugins.dhcp.rpc import DhcpEndpoint
        return {topics.PLUGIN: [DhcpEndpoint(self.core, self.hosting)]}

    def extensions(self) -> list[ApiExtension]:
        return [ApiExtension(descriptor=described(ALIAS), policies=list(POLICIES),
                             routes=routes(self)),
                ApiExtension(descriptor=described(NETWORK_AZ), attributes=agents.NETWORK_AZ)]

"""Telling DHCP agents what changed on the networks they serve.

After a network, subnet or port change is committed, the agents hosting its
network get a cast on ``dhcp_agent`` (server = their host) with upstream's
method names and payloads, so an upstream DHCP agent understands them.
A network's deletion is a fanout to every DHCP agent. A subnet or port
creation first schedules the network if it lacks agents; an agent newly
given a network gets ``network_create_end`` first. Casts are best effort:
the agents' periodic resync repairs anything lost.
"""
from __future__ import annotations

import copy
import logging
import random
from typing import Any

from neutrino.plugins.dhcp import scheduler as sch
from neutrino.plugins.dhcp.hosting import Hosting

LOG = logging.getLogger(__name__)

DHCP_AGENT_TOPIC = "dhcp_agent"

PRIORITY_NETWORK_CREATE = 0
PRIORITY_NETWORK_UPDATE = 1
PRIORITY_NETWORK_DELETE = 2
PRIORITY_SUBNET_UPDATE = 3
PRIORITY_SUBNET_DELETE = 4
PRIORITY_PORT_CREATE_HIGH = 5
PRIORITY_PORT_CREATE_LOW = 6
PRIORITY_PORT_UPDATE = 6
PRIORITY_PORT_DELETE = 6

PRIORITIES = {
    "network_create_end": PRIORITY_NETWORK_CREATE,
    "network_update_end": PRIORITY_NETWORK_UPDATE,
    "network_delete_end": PRIORITY_NETWORK_DELETE,
    "subnet_create_end": PRIORITY_SUBNET_UPDATE,
    "subnet_update_end": PRIORITY_SUBNET_UPDATE,
    "subnet_delete_end": PRIORITY_SUBNET_DELETE,
    "port_create_end": PRIORITY_PORT_CREATE_LOW,
    "port_update_end": PRIORITY_PORT_UPDATE,
    "port_delete_end": PRIORITY_PORT_DELETE,
}
# A port update matters to DHCP only when one of these changed.
_PORT_DHCP_KEYS = ("fixed_ips", "mac_address", "extra_dhcp_opts", "dns_name",
                   "dns_assignment", "dns_domain")


class DhcpAgentNotifier:
    """Casts to DHCP agents; ``casts`` is a ``neutrino.rpc.casts.Casts``."""

    def __init__(self, hosting: Hosting, core: Any, casts: Any) -> None:
        self.hosting = hosting
        self.core = core  # its transactions (``write``) and database (``db``)
        self.casts = casts

    # -- what the core's after-commit events call ---------------------------------------

    def created(self, resource: str, item: dict[str, Any]) -> None:
        self.notify(f"{resource}_create_end", resource, item)

    def updated(self, resource: str, original: dict[str, Any], current: dict[str, Any]) -> None:
        if resource == "port" and original and not any(
                original.get(k) != current.get(k) for k in _PORT_DHCP_KEYS):
            return
        self.notify(f"{resource}_update_end", resource, current)

    def deleted(self, resource: str, item: dict[str, Any]) -> None:
        if not item or "id" not in item:
            return
        payload: dict[str, Any] = {f"{resource}_id": item["id"]}
        if resource != "network":
            payload["network_id"] = item["network_id"]
        if resource == "port":
            payload["fixed_ips"] = item.get("fixed_ips", [])
        self.notify(f"{resource}_delete_end", resource, item, payload)

    # -- the scheduler's ------------------------------------------------------------------

    def network_added_to_agent(self, network_id: str, host: str) -> None:
        self._cast(host, "network_create_end",
                   {"network": {"id": network_id}, "priority": PRIORITY_NETWORK_CREATE})

    def network_removed_from_agent(self, network_id: str, host: str) -> None:
        self._cast(host, "network_delete_end",
                   {"network_id": network_id, "priority": PRIORITY_NETWORK_DELETE})

    def agent_updated(self, agent: dict[str, Any]) -> None:
        """An admin enabled or disabled a DHCP agent: it starts or stops serving."""
        if agent.get("agent_type") == sch.AGENT_TYPE_DHCP:
            self._cast(agent["host"], "agent_updated",
                       {"admin_state_up": agent["admin_state_up"]})

    # -- delivery -------------------------------------------------------------------------

    def notify(self, method: str, resource: str, item: dict[str, Any],
               payload: dict[str, Any] | None = None) -> None:
        network_id = item.get("id") if resource == "network" else item.get("network_id")
        if not network_id or not self.casts.enabled:
            return  # without a bus no agent can have registered: nothing to do
        payload = dict(payload) if payload is not None else {resource: item}
        payload["priority"] = PRIORITIES[method]
        if method == "network_delete_end":
            self.casts.cast(DHCP_AGENT_TOPIC, method, fanout=True, payload=payload)
            return
        if method == "network_create_end":
            return  # a network without subnets needs no agent yet
        reserved = resource == "port" and item.get("device_id") == sch.RESERVED_DHCP_PORT
        schedule = method == "subnet_create_end" or (method == "port_create_end"
                                                     and not reserved)
        agents, new = self._agents(network_id, schedule)
        for agent in new:
            self.network_added_to_agent(network_id, agent.host)
        agents += new
        if not agents:
            LOG.debug("network %s is not hosted by any DHCP agent", network_id)
            return
        if method == "port_create_end":
            first = agents.pop(random.randrange(len(agents)))
            self._cast(first.host, method,
                       {**copy.deepcopy(payload), "priority": PRIORITY_PORT_CREATE_HIGH})
        for agent in agents:
            self._cast(agent.host, method, payload)

    def _agents(self, network_id: str,
                schedule: bool) -> tuple[list[sch.DhcpAgent], list[sch.DhcpAgent]]:
        """The agents serving the network, and those newly scheduled to it
        (a write only when the network lacks agents)."""
        with self.core.db.reader() as conn:
            hosted = self.hosting.hosting(conn, network_id)
        serving = [a for a in hosted if self.hosting.usable(a)]
        if not schedule or len(hosted) >= self.hosting.conf.dhcp_agents_per_network:
            return serving, []
        new = self.core.write(lambda conn: self.hosting.schedule(conn, network_id))
        return serving, new

    def _cast(self, host: str, method: str, payload: dict[str, Any]) -> None:
        self.casts.cast(DHCP_AGENT_TOPIC, method, server=host, payload=payload)

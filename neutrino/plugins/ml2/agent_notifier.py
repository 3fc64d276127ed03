"""Tell the L2 agents what changed, once it is committed (upstream's
``AgentNotifierApi`` and the security group notifications).

Agents listen on fanout topics (``q-agent-notifier-port-update``, ...) and
each one picks what concerns its host. The messages only mark things dirty
on the agents: an agent that misses one still converges at its next full
resync, so a message that cannot be sent is logged and forgotten.

What triggers what follows upstream's ML2 plugin:

- ``port_update`` when something an agent wires changed (admin state, MAC,
  addresses, groups, port security, QoS policy, binding, status set through
  the API), only for a port bound to a segment, with that segment's type,
  id and physical network;
- ``port_delete`` for every deleted port; ``network_delete`` for every
  deleted network; ``network_update`` when its MTU was written or its QoS
  policy changed;
- ``security_groups_rule_updated`` when a rule of a group is added or
  removed; ``security_groups_member_updated`` when the ports in a group, or
  their addresses, change (not for the network's own ports, which no group
  filters).
"""
from __future__ import annotations

import logging
from typing import Any

import sqlalchemy as sa

from neutrino.db import tables as t
from neutrino.plugins import events as ev
from neutrino.plugins.ml2 import devices_db, segments_db
from neutrino.rpc import topics
from neutrino.rpc.casts import Casts

LOG = logging.getLogger(__name__)

# Port attributes whose change an agent must act on (upstream's triggers).
PORT_WIRED = ("admin_state_up", "mac_address", "fixed_ips", "security_groups",
              "allowed_address_pairs", "port_security_enabled", "qos_policy_id",
              "extra_dhcp_opts", "binding:host_id", "binding:vnic_type",
              "binding:profile")
# ... and the ones that change what other ports' groups allow.
SG_MEMBERSHIP = ("fixed_ips", "mac_address", "security_groups", "allowed_address_pairs")


def is_trusted(port: dict[str, Any]) -> bool:
    """Ports the network itself owns (DHCP, router): no group filters them."""
    return str(port.get("device_owner") or "").startswith("network:")


def bound_segment(conn: Any, port_id: str) -> dict[str, Any] | None:
    """The segment the port's bottom binding level is on, if bound."""
    L, B = t.ml2_port_binding_levels.c, t.ml2_port_bindings.c
    segment_id = conn.execute(sa.select(L.segment_id)
                              .join(t.ml2_port_bindings,
                                    (B.port_id == L.port_id) & (B.host == L.host))
                              .where(L.port_id == port_id)
                              .order_by(L.level.desc()).limit(1)).scalar()
    if segment_id is None:
        return None
    return segments_db.dicts_by_id(conn, [segment_id]).get(segment_id)


class AgentNotifier:
    def __init__(self, conf: Any, db: Any, casts: Casts | None = None) -> None:
        self.db = db
        self.casts = casts or Casts(conf)

    def subscribe(self, events: ev.Events) -> None:
        if not self.casts.enabled:
            return  # no bus, no agents: nothing to compute
        events.subscribe("ports", ev.AFTER_CREATE, self._port_created)
        events.subscribe_batch("ports", ev.AFTER_UPDATE, self._ports_updated)
        events.subscribe("ports", ev.AFTER_DELETE, self._port_deleted)
        events.subscribe("networks", ev.AFTER_UPDATE, self._network_updated)
        events.subscribe("networks", ev.AFTER_DELETE, self._network_deleted)
        events.subscribe("security_group_rules", ev.AFTER_CREATE, self._rule_changed)
        events.subscribe("security_group_rules", ev.AFTER_DELETE, self._rule_changed)
        events.subscribe("security_groups", ev.AFTER_UPDATE, self._group_updated)

    # -- the messages (upstream's names, arguments and versions) -----------------------

    def port_update(self, port: dict[str, Any], segment: dict[str, Any]) -> None:
        self.casts.cast(topics.PORT_UPDATE, "port_update", fanout=True, port=port,
                        network_type=segment["network_type"],
                        segmentation_id=segment["segmentation_id"],
                        physical_network=segment["physical_network"])

    def port_delete(self, port_id: str) -> None:
        self.casts.cast(topics.PORT_DELETE, "port_delete", fanout=True, port_id=port_id)

    def network_update(self, network: dict[str, Any]) -> None:
        self.casts.cast(topics.NETWORK_UPDATE, "network_update", fanout=True,
                        version="1.4", network=network)

    def network_delete(self, network_id: str) -> None:
        self.casts.cast(topics.NETWORK_DELETE, "network_delete", fanout=True,
                        network_id=network_id)

    def security_groups_rule_updated(self, group_ids: list[str]) -> None:
        if group_ids:
            self.casts.cast(topics.SECURITY_GROUP_UPDATE, "security_groups_rule_updated",
                            fanout=True, version=topics.SG_AGENT_VERSION,
                            security_groups=group_ids)

    def security_groups_member_updated(self, group_ids: list[str]) -> None:
        if group_ids:
            self.casts.cast(topics.SECURITY_GROUP_UPDATE, "security_groups_member_updated",
                            fanout=True, version=topics.SG_AGENT_VERSION,
                            security_groups=group_ids)

    # -- event subscribers -----------------------------------------------------------

    def _port_created(self, ctx: Any, port: dict[str, Any]) -> None:
        if not is_trusted(port):
            self.security_groups_member_updated(sorted(port.get("security_groups") or []))

    def _ports_updated(self, changes: list[tuple[Any, dict[str, Any], dict[str, Any]]]) -> None:
        """Each committed change of a batch (a sync binding a host's router
        ports, an agent's device list) told as one update would tell it, the
        ports' segments read at once, the groups whose members changed in
        one message."""
        wired: list[dict[str, Any]] = []
        groups: set[str] = set()
        for ctx, original, port in changes:
            # A status change reported by an agent (no caller) is the agent's own news.
            if any(original.get(k) != port.get(k) for k in PORT_WIRED) or (
                    ctx is not None and original.get("status") != port.get("status")):
                wired.append(port)
            if (any(original.get(k) != port.get(k) for k in SG_MEMBERSHIP)
                    and not is_trusted(port)):
                groups |= set(original.get("security_groups") or [])
                groups |= set(port.get("security_groups") or [])
        self.security_groups_member_updated(sorted(groups))
        if not wired:
            return
        with self.db.reader() as conn:
            segment_of = devices_db.bound_segments(conn, [p["id"] for p in wired])
            segments = segments_db.dicts_by_id(conn, [s for s in segment_of.values() if s])
        for port in wired:
            segment = segments.get(segment_of.get(port["id"]) or "")
            if segment is None:
                LOG.debug("port %s changed but is bound to no segment: no port_update",
                          port["id"])
                continue
            self.port_update(port, segment)

    def _port_deleted(self, ctx: Any, port: dict[str, Any]) -> None:
        self.port_delete(port["id"])
        if not is_trusted(port):
            self.security_groups_member_updated(sorted(port.get("security_groups") or []))

    def _network_updated(self, ctx: Any, original: dict[str, Any],
                         network: dict[str, Any]) -> None:
        if (original.get("mtu") != network.get("mtu")
                or original.get("qos_policy_id") != network.get("qos_policy_id")):
            self.network_update(network)

    def _network_deleted(self, ctx: Any, network: dict[str, Any]) -> None:
        self.network_delete(network["id"])

    def _rule_changed(self, ctx: Any, rule: dict[str, Any]) -> None:
        self.security_groups_rule_updated([rule["security_group_id"]])

    def _group_updated(self, ctx: Any, original: dict[str, Any], group: dict[str, Any]) -> None:
        if original.get("stateful") != group.get("stateful"):
            self.security_groups_rule_updated([group["id"]])

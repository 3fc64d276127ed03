"""``resource_request`` of ports (``port-resource-request`` in the request
groups format of ``port-resource-request-groups``).

What the compute service must find in Placement before it puts the port on
a host: one group for the minimum bandwidth rules of the port's policy (its
own, else its network's) on a device of the port's physical network (or
one carrying tunnels), one for its minimum packet rate rules, both in the
same subtree. Computed on every read from the policy's rules, so a rule's
change shows at once; ``None`` when no such rule applies.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any, Mapping, Sequence

import sqlalchemy as sa

from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import store
from neutrino.plugins.base import AttributeHandler
from neutrino.resources import placement as pl
from neutrino.resources import qos

ATTR = "resource_request"
VNIC_TYPE = "binding:vnic_type"
R = t.qos_rules.c
S = t.network_segments.c


def request_groups(port_id: str, vnic_type: str, rules: Sequence[Mapping[str, Any]],
                   segments: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The resource request of one port from its policy's minimum rules (by
    id) and its network's segments (in order): upstream's groups, ids and
    traits. Bandwidth is asked on the first segment's physical network."""
    bandwidth = [r for r in rules if r["rule_type"] == qos.MINIMUM_BANDWIDTH]
    packet_rate = [r for r in rules if r["rule_type"] == qos.MINIMUM_PACKET_RATE]
    groups = []
    if bandwidth and segments:
        physnet = segments[0]["physical_network"]
        net_trait = pl.physnet_trait(physnet) if physnet else pl.TRAIT_NETWORK_TUNNEL
        groups.append({
            "id": pl.request_group_uuid(port_id, [r["id"] for r in bandwidth]),
            "required": [net_trait, pl.vnic_type_trait(vnic_type)],
            "resources": {pl.BANDWIDTH_CLASSES[r["direction"]]: r["min_kbps"]
                          for r in bandwidth}})
    if packet_rate:
        groups.append({
            "id": pl.request_group_uuid(port_id, [r["id"] for r in packet_rate]),
            "required": [pl.vnic_type_trait(vnic_type)],
            "resources": {pl.PACKET_RATE_CLASSES[r["direction"]]: r["min_kpps"]
                          for r in packet_rate}})
    if not groups:
        return None
    return {"request_groups": groups, "same_subtree": [g["id"] for g in groups]}


def minimum_rules(conn: Any, policy_ids: set[str]) -> dict[str, list[dict[str, Any]]]:
    """Each policy's minimum bandwidth and packet rate rules, by id: the
    order their request groups' ids are made from."""
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for part in store.chunks(sorted(policy_ids)):
        for row in conn.execute(
                sa.select(R.id, R.qos_policy_id, R.rule_type, R.direction, R.min_kbps,
                          R.min_kpps)
                .where(R.qos_policy_id.in_(part),
                       R.rule_type.in_((qos.MINIMUM_BANDWIDTH, qos.MINIMUM_PACKET_RATE)))
                .order_by(R.id)):
            out[row.qos_policy_id].append(dict(row._mapping))
    return out


class ResourceRequests(AttributeHandler):
    """Shows ``resource_request`` on ports; the port's QoS attributes and
    binding, already on the item, say which policy and vNIC type apply."""

    def __init__(self, db: Any) -> None:
        self.db = db

    def process(self, ctx: Context, plural: str, data: dict[str, Any],
                result: dict[str, Any], creating: bool) -> None:
        if creating:  # an updated port is extended by the controller
            self.extend(ctx, plural, [result])

    def extend(self, ctx: Context, plural: str, items: list[dict[str, Any]]) -> None:
        policy_of = {}
        for item in items:
            item[ATTR] = None
            policy_id = item.get(qos.POLICY_ID) or item.get(qos.NETWORK_POLICY_ID)
            if policy_id:
                policy_of[item["id"]] = policy_id
        if not policy_of:
            return
        with self.db.reader() as conn:
            rules = minimum_rules(conn, set(policy_of.values()))
            networks = {i["network_id"] for i in items
                        if any(r["rule_type"] == qos.MINIMUM_BANDWIDTH
                               for r in rules.get(policy_of.get(i["id"], ""), ()))}
            segments = self._segments(conn, networks)
        for item in items:
            found = rules.get(policy_of.get(item["id"], ""))
            if found:
                item[ATTR] = request_groups(item["id"], item.get(VNIC_TYPE) or "normal",
                                            found, segments.get(item["network_id"], []))

    @staticmethod
    def _segments(conn: Any, network_ids: set[str]) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for part in store.chunks(sorted(network_ids)):
            for row in conn.execute(
                    sa.select(S.network_id, S.physical_network)
                    .where(S.network_id.in_(part))
                    .order_by(S.network_id, S.segment_index, S.id)):
                out[row.network_id].append(dict(row._mapping))
        return out

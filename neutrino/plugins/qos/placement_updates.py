"""A bound port's Placement allocation follows the QoS policy that applies
to it, as upstream's QoS plugin does.

When the policy of a port owned by an instance (``compute:*``) changes,
or that of its network while the port has none of its own, the instance's
allocation in Placement changes by the difference between the old and the
new policy's minimum rules (``qos/allocation.py``), and the port's
``binding:profile`` records the new request groups. Placement is called
inside the update's transaction, so a refusal (not enough inventory, the
allocation gone) leaves the port and its policy as they were; should the
transaction then roll back (a lost race it retries, a later refusal),
the difference is taken back, since it is applied relative to what the
consumer holds (other ports of the instance share its allocation).

Two departures from upstream, both so that a refused change changes
nothing: upstream changes Placement for a network's new policy after the
network's update committed, logging a refusal while the update succeeds
(here it is refused, 409, with the network as it was); and it leaves
Placement changed when a port's update fails after the call. A port's
new effective policy is its own, else its network's (upstream reads only
the request's ``qos_policy_id``, so removing a port's own policy released
its allocation even under a network's policy with minimum rules).
"""
from __future__ import annotations

import json
import logging
from typing import Any, Mapping

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import events as ev
from neutrino.plugins import store
from neutrino.plugins.placement.client import PlacementClient
from neutrino.plugins.qos import allocation, bindings
from neutrino.plugins.qos.policies import usable
from neutrino.plugins.qos.resource_request import minimum_rules
from neutrino.resources import qos

LOG = logging.getLogger(__name__)
PROFILE = "binding:profile"
COMPUTE = "compute:"
B = t.ml2_port_bindings


class AllocationUpdates:
    """Subscribed to the core's port and network updates."""

    def __init__(self, client: PlacementClient) -> None:
        self.client = client

    def subscribe(self, events: ev.Events) -> None:
        # A port's new profile goes into its own update (the binding driver
        # writes it); its network's change writes the ports' profiles itself.
        events.subscribe("ports", ev.PRECOMMIT_UPDATE, self._port_updating)
        events.subscribe("networks", ev.PRECOMMIT_UPDATED, self._network_updated)

    def _port_updating(self, conn: Connection, ctx: Context, original: Mapping[str, Any],
                       data: dict[str, Any]) -> None:
        if qos.POLICY_ID not in data or COMPUTE not in (original.get("device_owner") or ""):
            return
        network_policy = original.get(qos.NETWORK_POLICY_ID)
        own = original.get(qos.POLICY_ID)
        old, new = own or network_policy, data[qos.POLICY_ID] or network_policy
        if old == new:
            return
        # A policy the caller may not use (or take away) is refused by the
        # qos extension driver, after this: nothing to change in Placement.
        if any(p is not None and usable(conn, ctx, p) is None for p in (own, data[qos.POLICY_ID])):
            return
        profile = original.get(PROFILE) or {}
        found = self._change(conn, original["id"], original.get("device_id") or "",
                             profile.get("allocation"), old, new)
        if found is not None:
            base = data[PROFILE] if isinstance(data.get(PROFILE), dict) else profile
            data[PROFILE] = {**base, "allocation": found}

    def _network_updated(self, conn: Connection, ctx: Context, original: Mapping[str, Any],
                         current: Mapping[str, Any]) -> None:
        old, new = original.get(qos.POLICY_ID), current.get(qos.POLICY_ID)
        if old == new:
            return
        p = t.ports
        rows = conn.execute(
            sa.select(p.c.id, p.c.device_id, B.c.profile)
            .select_from(p.join(B, B.c.port_id == p.c.id))
            .where(p.c.network_id == current["id"], p.c.device_owner.contains(COMPUTE),
                   p.c.id.not_in(sa.select(bindings.PB.c.port_id)))
            .order_by(p.c.id)).all()
        for row in rows:
            profile = json.loads(row.profile) if row.profile else {}
            found = self._change(conn, row.id, row.device_id or "",
                                 profile.get("allocation"), old, new)
            if found is not None:
                conn.execute(sa.update(B).where(B.c.port_id == row.id).values(
                    profile=json.dumps({**profile, "allocation": found})))
                store.bump(conn, p, row.id)

    def _change(self, conn: Connection, port_id: str, consumer: str, recorded: Any,
                old: str | None, new: str | None) -> dict[str, str] | None:
        """Placement changed for the port moving from policy ``old`` to
        ``new``; the allocation to record, or None to leave the profile."""
        rules = minimum_rules(conn, {p for p in (old, new) if p})
        found = allocation.change(port_id, recorded, rules.get(old or "", []),
                                  rules.get(new or "", []))
        if found is None:
            return None
        if found.diff:
            self.client.update_allocation(consumer, found.diff)
            undo = {rp: {rc: -v for rc, v in amounts.items()}
                    for rp, amounts in found.diff.items()}
            sa.event.listen(conn, "rollback", lambda _conn: self._undo(consumer, undo))
        return found.allocation

    def _undo(self, consumer: str, diff: dict[str, dict[str, int]]) -> None:
        try:
            self.client.update_allocation(consumer, diff)
        except Exception:  # noqa: BLE001 - the rollback's cause is the error to report
            LOG.exception("could not take back the allocation change %s of consumer %s",
                          diff, consumer)

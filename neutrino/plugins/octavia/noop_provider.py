"""Octavia's no-op provider: every change is done as soon as it is made.

It realises nothing. It reports each change ACTIVE (or DELETED) at once,
as Octavia's worker does with its no-op amphora, compute and network
drivers, and health monitors, L7 policies and rules ONLINE as that worker
sets them; load balancers, listeners and pools stay OFFLINE as with no
health manager. It serves the API tests and the conformance suite.
"""
from __future__ import annotations

from typing import Any

from neutrino.plugins.octavia import provider_api as api
from neutrino.resources.lb_graph import LoadBalancer

_ONLINE_WHEN_ACTIVE = (api.HEALTHMONITORS, api.L7POLICIES, api.L7RULES)


class NoopProvider(api.ProviderDriver):
    """The No-Op driver."""

    name = "noop_driver"
    description = "The No-Op driver."

    def check(self, lb: LoadBalancer) -> None:
        for pool in lb.pools:
            if pool.lb_algorithm == "SOURCE_IP_PORT":
                # as Octavia's amphora provider and haproxy, which has no such algorithm
                raise api.UnsupportedOption(
                    "The No-Op provider does not support SOURCE_IP_PORT algorithm.")

    def flavor_capabilities(self) -> dict[str, str]:
        return {"loadbalancer_topology": (
            "The load balancer topology. One of: SINGLE - One amphora per load "
            "balancer. ACTIVE_STANDBY - Two amphora per load balancer."),
            "compute_flavor": "The compute driver flavor ID.",
            "amp_image_tag": "The amphora image tag."}

    def availability_zone_capabilities(self) -> dict[str, str]:
        return {"compute_zone": "The compute availability zone.",
                "volume_zone": "The volume availability zone.",
                "management_network": "The management network ID for the amphora.",
                "valid_vip_networks": "List of network IDs that are allowed for VIP use."}

    def _done(self, lb: LoadBalancer, *_: Any) -> None:
        enabled = _enabled(lb)
        statuses = []
        for st in api.pending_statuses(lb):
            if st.kind in _ONLINE_WHEN_ACTIVE and st.provisioning_status == "ACTIVE":
                st = api.ObjectStatus(st.kind, st.id, "ACTIVE",
                                      "ONLINE" if enabled.get(st.id, True) else "OFFLINE")
            statuses.append(st)
        mode = getattr(getattr(self.conf, "octavia", None), "noop_operating_statuses",
                       "offline")
        if mode == "healthy":
            statuses += healthy(lb)
        self.reporter.update_statuses(statuses)

    def loadbalancer_delete(self, lb: LoadBalancer, cascade: bool) -> None:
        self._done(lb)

    loadbalancer_create = loadbalancer_update = loadbalancer_failover = _done
    listener_create = listener_update = listener_delete = _done
    pool_create = pool_update = pool_delete = _done
    member_create = member_update = member_delete = member_batch_update = _done
    health_monitor_create = health_monitor_update = health_monitor_delete = _done
    l7policy_create = l7policy_update = l7policy_delete = _done
    l7rule_create = l7rule_update = l7rule_delete = _done


def healthy(lb: LoadBalancer) -> list[api.ObjectStatus]:
    """The operating statuses a health manager reports when every object's
    data plane answers: disabled objects OFFLINE, pools ONLINE while a
    listener uses them, members NO_MONITOR without a monitor."""
    out = []

    def put(kind: str, obj: Any, status: str) -> None:
        if obj.provisioning_status != "PENDING_DELETE":
            out.append(api.ObjectStatus(kind, obj.id, None,
                                        status if obj.admin_state_up else "OFFLINE"))

    put(api.LOADBALANCERS, lb, "ONLINE")
    for listener in lb.listeners:
        put(api.LISTENERS, listener, "ONLINE")
    used = {x.default_pool_id for x in lb.listeners} | {
        p.redirect_pool_id for x in lb.listeners for p in x.l7policies}
    for pool in lb.pools:
        put(api.POOLS, pool, "ONLINE" if pool.id in used else "OFFLINE")
        for member in pool.members:
            put(api.MEMBERS, member, "ONLINE" if pool.healthmonitor else "NO_MONITOR")
    return out


def _enabled(lb: LoadBalancer) -> dict[str, bool]:
    """admin_state_up of the monitors, policies and rules, by id."""
    out = {}
    for listener in lb.listeners:
        for policy in listener.l7policies:
            out[policy.id] = policy.admin_state_up
            out.update({rule.id: rule.admin_state_up for rule in policy.rules})
    for pool in lb.pools:
        if pool.healthmonitor is not None:
            out[pool.healthmonitor.id] = pool.healthmonitor.admin_state_up
    return out

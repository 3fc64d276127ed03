"""How a bound port's Placement allocation follows a change of its QoS policy.

The compute service allocated the port's ``resource_request`` on resource
providers when it scheduled the instance, and recorded where in the port's
``binding:profile`` ``allocation``: request group id -> provider (or, from
before packet rate rules, one provider for the bandwidth group). When the
minimum rules that apply to the port change, the instance's allocation
must change by the difference on those same providers, and the recorded
groups take the new rules' ids. Pure computation; the caller talks to
Placement.

As upstream: only rule types the port already had allocated can be
changed (a new type would need scheduling, so it is enforced on the data
plane only); a type's provider is the one its old group was allocated on.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from neutrino import errors
from neutrino.resources import placement as pl
from neutrino.resources import qos

LOG = logging.getLogger(__name__)

TYPES = (qos.MINIMUM_BANDWIDTH, qos.MINIMUM_PACKET_RATE)
_DIRECTED_PPS = {pl.NET_PACKET_RATE_EGR_KILOPACKET_PER_SEC,
                 pl.NET_PACKET_RATE_IGR_KILOPACKET_PER_SEC}
Rule = Mapping[str, Any]  # a qos_rules row: id, rule_type, direction, min_kbps, min_kpps


@dataclass
class Change:
    """What to do: add ``diff`` (provider -> resource class -> signed
    amount) to the consumer's allocation, then record ``allocation``."""

    allocation: dict[str, str]
    diff: dict[str, dict[str, int]] = field(default_factory=dict)


def resources(rule: Rule) -> dict[str, int]:
    if rule["rule_type"] == qos.MINIMUM_BANDWIDTH:
        return {pl.BANDWIDTH_CLASSES[rule["direction"]]: rule["min_kbps"]}
    return {pl.PACKET_RATE_CLASSES[rule["direction"]]: rule["min_kpps"]}


def _group(port_id: str, rules: Sequence[Rule]) -> str:
    return pl.request_group_uuid(port_id, [r["id"] for r in rules])


def normalised(allocation: Any, port_id: str, rules: Sequence[Rule]) -> dict[str, str]:
    """The profile's allocation as group -> provider: the old single
    provider stands for the group of the port's minimum bandwidth rules."""
    if isinstance(allocation, dict):
        return {str(k): str(v) for k, v in allocation.items()}
    bandwidth = [r for r in rules if r["rule_type"] == qos.MINIMUM_BANDWIDTH]
    return {_group(port_id, bandwidth): str(allocation)}


def change(port_id: str, allocation: Any, old_rules: Sequence[Rule],
           new_rules: Sequence[Rule]) -> Change | None:
    """The allocation change for moving the port from ``old_rules`` to
    ``new_rules`` (any rules; only minimum ones count); None when there is
    nothing Placement tracks for it (no minimum rules, or no allocation)."""
    old = [r for r in old_rules if r["rule_type"] in TYPES]
    new = [r for r in new_rules if r["rule_type"] in TYPES]
    if not old and not new:
        return None
    if not old or not allocation:
        LOG.warning("Port %s has no allocation in placement for minimum QoS rules; "
                    "only the data plane enforces them.", port_id)
        return None
    old_types = {r["rule_type"] for r in old}
    added = {r["rule_type"] for r in new} - old_types
    if added:
        LOG.warning("Port %s has no allocation in placement for %s rules; only the "
                    "data plane enforces them.", port_id, ",".join(sorted(added)))
        new = [r for r in new if r["rule_type"] not in added]
    recorded = normalised(allocation, port_id, old)
    provider_of: dict[str, str] = {}
    updated: dict[str, str] = {}
    for group, provider in recorded.items():
        for rtype in TYPES:
            of_type = [r for r in old if r["rule_type"] == rtype]
            if of_type and group == _group(port_id, of_type):
                provider_of[rtype] = provider
                wanted = [r for r in new if r["rule_type"] == rtype]
                if wanted:
                    updated[_group(port_id, wanted)] = provider
                break
    return Change(updated, _diff(port_id, provider_of, old, new))


def _diff(port_id: str, provider_of: Mapping[str, str], old: Sequence[Rule],
          new: Sequence[Rule]) -> dict[str, dict[str, int]]:
    diff: dict[str, dict[str, int]] = {}
    for rule in old:
        provider = provider_of.get(rule["rule_type"])
        if provider is None:
            LOG.warning("Port %s has no provider allocated for its %s rule; only the "
                        "data plane enforces it.", port_id, rule["rule_type"])
            continue
        for rc, value in resources(rule).items():
            diff.setdefault(provider, {})[rc] = -value
    for rule in new:
        provider = provider_of.get(rule["rule_type"])
        if provider is None:
            continue
        on = diff.setdefault(provider, {})
        for rc, value in resources(rule).items():
            if (rc == pl.NET_PACKET_RATE_KILOPACKET_PER_SEC and on.keys() & _DIRECTED_PPS) or (
                    rc in _DIRECTED_PPS and pl.NET_PACKET_RATE_KILOPACKET_PER_SEC in on):
                raise errors.NotImplementedError(
                    "Changing from direction-less QoS minimum packet rate rule to a "
                    "direction-oriented minimum packet rate rule, or vice versa, is not "
                    "supported.")
            total = on.get(rc, 0) + value
            if total:
                on[rc] = total
            else:
                on.pop(rc, None)
    return {provider: amounts for provider, amounts in diff.items() if amounts}

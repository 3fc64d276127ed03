"""What Placement must hold for one agent: the calls that make it so.

Pure: from the agent's reported ``configurations`` and its mechanism
driver's facts, the ordered calls (traits first, then providers parents
first, then their traits and inventories), each one complete on its own so
that a failed call does not stop the others. Every call sets a whole value
(upstream's one-way sync): nothing is deleted, what the agent no longer
reports stays for the operator to remove.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from neutrino.resources import placement as pl


@dataclass(frozen=True)
class Call:
    """A client method and its arguments."""

    method: str
    args: tuple[Any, ...]

    def __str__(self) -> str:
        return f"{self.method}{self.args!r}"


@dataclass(frozen=True)
class Driver:
    """What the agent's mechanism driver says of its providers."""

    agent_type: str
    namespace: uuid.UUID
    vnic_types: tuple[str, ...]


def _inventories(values: Mapping[str, Any], classes: Mapping[str, str],
                 defaults: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return {rclass: {**defaults, "total": values[direction]}
            for direction, rclass in classes.items() if values.get(direction)}


def sync_calls(configurations: Mapping[str, Any], driver: Driver,
               hypervisor_uuids: Mapping[str, str], tunnelled: str) -> list[Call]:
    """``hypervisor_uuids``: each hypervisor the agent names (its compute
    node's provider, found by name) to its provider's UUID."""
    bandwidths: Mapping[str, Any] = configurations.get("resource_provider_bandwidths") or {}
    hypervisor_of: Mapping[str, str] = configurations.get("resource_provider_hypervisors") or {}
    mappings = {physnet: bridge for physnet, bridge in
                (configurations.get("bridge_mappings") or {}).items()}
    physnet_of = {bridge: physnet for physnet, bridge in mappings.items()}
    vnic_traits = [pl.vnic_type_trait(v) for v in driver.vnic_types]
    ns = driver.namespace

    calls = [Call("ensure_trait", (pl.physnet_trait(physnet_of[d]),))
             for d in bandwidths if d in physnet_of]
    calls.append(Call("ensure_trait", (pl.TRAIT_NETWORK_TUNNEL,)))
    calls += [Call("ensure_trait", (t,)) for t in vnic_traits]

    hypervisors = list(dict.fromkeys(hypervisor_of[d] for d in bandwidths))
    hypervisors += [h for h in dict.fromkeys(hypervisor_of.values()) if h not in hypervisors]
    for hv in hypervisors:
        calls.append(Call("ensure_provider", (pl.agent_rp_uuid(ns, hv),
                                              f"{hv}:{driver.agent_type}",
                                              hypervisor_uuids[hv])))
    for device in bandwidths:
        hv = hypervisor_of[device]
        calls.append(Call("ensure_provider", (pl.device_rp_uuid(ns, hv, device),
                                              f"{hv}:{driver.agent_type}:{device}",
                                              pl.agent_rp_uuid(ns, hv))))
    for device in bandwidths:
        traits = []
        if device == tunnelled:
            traits.append(pl.TRAIT_NETWORK_TUNNEL)
        if device in physnet_of:
            traits.append(pl.physnet_trait(physnet_of[device]))
        calls.append(Call("set_traits", (pl.device_rp_uuid(ns, hypervisor_of[device], device),
                                         traits + vnic_traits)))
    if vnic_traits:
        calls += [Call("set_traits", (pl.agent_rp_uuid(ns, hv), vnic_traits))
                  for hv in hypervisors]

    defaults = configurations.get("resource_provider_inventory_defaults") or {}
    for device, values in bandwidths.items():
        inventories = _inventories(values, pl.BANDWIDTH_CLASSES, defaults)
        if inventories:
            calls.append(Call("set_inventories", (
                pl.device_rp_uuid(ns, hypervisor_of[device], device), inventories)))
    packet_rates = (configurations.get("resource_provider_packet_processing_without_direction")
                    or configurations.get("resource_provider_packet_processing_with_direction")
                    or {})
    pp_defaults = configurations.get(
        "resource_provider_packet_processing_inventory_defaults") or {}
    for hv, values in packet_rates.items():
        inventories = _inventories(values, pl.PACKET_RATE_CLASSES, pp_defaults)
        if inventories:
            calls.append(Call("set_inventories", (pl.agent_rp_uuid(ns, hv), inventories)))
    return calls


def hypervisors_named(configurations: Mapping[str, Any]) -> Sequence[str]:
    """The compute nodes whose providers the agent's providers go under."""
    return sorted(set((configurations.get("resource_provider_hypervisors") or {}).values()))

"""Binding through an L2 agent: the shared logic of openvswitch, linuxbridge
and sriovnicswitch.

Such a driver can bind a port only on a host where its agent is alive and
reports that it can reach the segment: the segment's network type must be
one the agent handles (``tunnel_types`` for overlays) and a flat or VLAN
segment's physical network must be in the agent's mappings. Otherwise it
leaves the port to the next driver, and with none left the port is
``binding_failed``.
"""
from __future__ import annotations

import logging
import uuid
from typing import Any

from neutrino.plugins.ml2.mech_api import VNIC_NORMAL, MechanismDriver, PortContext, SegmentDict

LOG = logging.getLogger(__name__)
PHYSNET_TYPES = ("flat", "vlan")


class AgentMechanismDriver(MechanismDriver):
    agent_type: str = ""
    vif_type: str = ""
    supported_vnic_types: tuple[str, ...] = (VNIC_NORMAL,)
    base_network_types: tuple[str, ...] = ("local", "flat", "vlan")
    mapping_keys: tuple[str, ...] = ("bridge_mappings",)
    # Set by drivers whose agents' devices go to Placement (the placement
    # report plugin): the namespace of their resource providers' UUIDs.
    resource_provider_uuid5_namespace: uuid.UUID | None = None

    def initialize(self) -> None:
        """Nothing to prepare: everything comes from the agents' reports."""

    def bind_port(self, context: PortContext) -> None:
        if not self.accepts_vnic(context):
            return
        for agent in context.host_agents(self.agent_type):
            if not agent["alive"]:
                LOG.warning("%s: agent %s on host %s is down; not binding port %s",
                            self.name, agent["id"], agent["host"], context.current["id"])
                continue
            for segment in context.segments_to_bind:
                if self.check_segment_for_agent(segment, agent):
                    context.set_binding(segment["id"], self.vif_type_for(context),
                                        self.vif_details(context, agent, segment))
                    return

    def accepts_vnic(self, context: PortContext) -> bool:
        return context.vnic_type in self.supported_vnic_types

    def mappings(self, agent: dict[str, Any]) -> set[str]:
        conf = agent["configurations"]
        out: set[str] = set()
        for key in self.mapping_keys:
            value = conf.get(key) or {}
            out.update(value if isinstance(value, (dict, list)) else [])
        return out

    def network_types(self, agent: dict[str, Any]) -> set[str]:
        return set(self.base_network_types) | set(agent["configurations"].get("tunnel_types")
                                                   or [])

    def check_segment_for_agent(self, segment: SegmentDict, agent: dict[str, Any]) -> bool:
        if segment["network_type"] not in self.network_types(agent):
            return False
        if segment["network_type"] in PHYSNET_TYPES:
            return segment.get("physical_network") in self.mappings(agent)
        return True

    def vif_type_for(self, context: PortContext) -> str:
        return self.vif_type

    def vif_details(self, context: PortContext, agent: dict[str, Any],
                    segment: SegmentDict) -> dict[str, Any]:
        return {"port_filter": True, "connectivity": "l2"}

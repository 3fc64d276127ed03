"""``sriovnicswitch``: binds SR-IOV ports (vnic_type direct, macvtap,
direct-physical) on hosts running a NIC Switch agent.

Only flat and VLAN segments can be bound, on physical networks the agent
maps to a NIC (``device_mappings``). The VLAN goes into the VIF details:
the compute service programs it on the virtual function.
"""
from __future__ import annotations

from typing import Any

from neutrino.plugins.ml2 import agents_db
from neutrino.plugins.ml2.mech_agent import AgentMechanismDriver
from neutrino.plugins.ml2.mech_api import (
    VIF_TYPE_HOSTDEV_PHY,
    VIF_TYPE_HW_VEB,
    VNIC_DIRECT,
    VNIC_DIRECT_PHYSICAL,
    VNIC_MACVTAP,
    PortContext,
    SegmentDict,
)
from neutrino.resources import qos


class SriovNicSwitchMechanismDriver(AgentMechanismDriver):
    agent_type = agents_db.AGENT_TYPE_NIC_SWITCH
    vif_type = VIF_TYPE_HW_VEB
    supported_vnic_types = (VNIC_DIRECT, VNIC_MACVTAP, VNIC_DIRECT_PHYSICAL)
    base_network_types = ("flat", "vlan")
    mapping_keys = ("device_mappings",)
    # The NIC limits what leaves a virtual function and guarantees a minimum.
    qos_rules = {
        qos.BANDWIDTH_LIMIT: {"max_kbps": qos.value_range(), "max_burst_kbps": qos.value_range(),
                              "direction": qos.choices(qos.EGRESS)},
        qos.MINIMUM_BANDWIDTH: {"min_kbps": qos.value_range(),
                                "direction": qos.choices(*qos.DIRECTIONS)},
    }
    qos_vif_types = (VIF_TYPE_HW_VEB,)
    qos_vnic_types = (VNIC_DIRECT, VNIC_MACVTAP, VNIC_DIRECT_PHYSICAL)

    def network_types(self, agent: dict[str, Any]) -> set[str]:
        return set(self.base_network_types)  # no tunnels on a virtual function

    def vif_type_for(self, context: PortContext) -> str:
        if context.vnic_type == VNIC_DIRECT_PHYSICAL:
            return VIF_TYPE_HOSTDEV_PHY
        return VIF_TYPE_HW_VEB

    def vif_details(self, context: PortContext, agent: dict[str, Any],
                    segment: SegmentDict) -> dict[str, Any]:
        vlan = segment["segmentation_id"] if segment["network_type"] == "vlan" else 0
        return {"port_filter": False, "connectivity": "l2", "vlan": str(vlan or 0)}

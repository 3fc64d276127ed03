"""``openvswitch``: binds ports on hosts running an Open vSwitch agent.

The VIF details tell the compute service how to plug the port: into the
agent's integration bridge (``bridge_name``, ``datapath_type`` as the agent
reports them) directly or through a hybrid Linux bridge (``ovs_hybrid_plug``,
needed only by the iptables firewall).
"""
from __future__ import annotations

from typing import Any

from neutrino.plugins.ml2 import agents_db
from neutrino.plugins.ml2.mech_agent import AgentMechanismDriver
from neutrino.plugins.ml2.mech_api import (
    VIF_TYPE_OVS,
    VNIC_DIRECT,
    VNIC_NORMAL,
    PortContext,
    SegmentDict,
)
from neutrino.resources import placement, qos


class OpenvswitchMechanismDriver(AgentMechanismDriver):
    agent_type = agents_db.AGENT_TYPE_OVS
    vif_type = VIF_TYPE_OVS
    supported_vnic_types = (VNIC_NORMAL, VNIC_DIRECT)
    mapping_keys = ("bridge_mappings",)
    resource_provider_uuid5_namespace = placement.OVS_UUID_NAMESPACE
    # What the agent's qos extension enforces (neutrino.agents.ovs.qos): bandwidth
    # limits both ways and DSCP marking; the minimums are scheduling guarantees
    # (upstream reports them to placement), not limits the switch applies. Packet
    # rate limits are not enforced, so not offered.
    qos_rules = {
        qos.BANDWIDTH_LIMIT: {"max_kbps": qos.value_range(), "max_burst_kbps": qos.value_range(),
                              "direction": qos.choices(*qos.DIRECTIONS)},
        qos.DSCP_MARKING: {"dscp_mark": qos.choices(*qos.DSCP_MARKS)},
        qos.MINIMUM_BANDWIDTH: {"min_kbps": qos.value_range(),
                                "direction": qos.choices(*qos.DIRECTIONS)},
        qos.MINIMUM_PACKET_RATE: {"min_kpps": qos.value_range(),
                                  "direction": qos.choices(qos.ANY, *qos.DIRECTIONS)},
    }
    qos_vif_types = (VIF_TYPE_OVS, "vhostuser")
    qos_vnic_types = (VNIC_NORMAL, VNIC_DIRECT)

    def accepts_vnic(self, context: PortContext) -> bool:
        # A direct (SR-IOV) port is OVS's only with hardware offload.
        if context.vnic_type == VNIC_DIRECT:
            return "switchdev" in (context.profile.get("capabilities") or [])
        return context.vnic_type in self.supported_vnic_types

    def vif_details(self, context: PortContext, agent: dict[str, Any],
                    segment: SegmentDict) -> dict[str, Any]:
        conf = agent["configurations"]
        return {"port_filter": True, "connectivity": "l2",
                "ovs_hybrid_plug": bool(conf.get("ovs_hybrid_plug", False)),
                "datapath_type": conf.get("datapath_type") or "system",
                "bridge_name": conf.get("integration_bridge") or "br-int"}

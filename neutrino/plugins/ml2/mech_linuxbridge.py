"""``linuxbridge``: binds ports on hosts running a Linux bridge agent.

The agent maps physical networks to interfaces (``interface_mappings``) or
to existing bridges (``bridge_mappings``); either makes a flat or VLAN
segment reachable. VXLAN is reachable when the agent lists it in
``tunnel_types``. An agent that cannot build some types (neutrino's: no
VLAN devices in its kernel) lists the ones it can in ``network_types``,
and only those are bound on its host.
"""
from __future__ import annotations

from typing import Any

from neutrino.plugins.ml2 import agents_db
from neutrino.plugins.ml2.mech_agent import AgentMechanismDriver
from neutrino.plugins.ml2.mech_api import VIF_TYPE_BRIDGE, VNIC_NORMAL
from neutrino.resources import qos


class LinuxbridgeMechanismDriver(AgentMechanismDriver):
    agent_type = agents_db.AGENT_TYPE_LINUXBRIDGE
    vif_type = VIF_TYPE_BRIDGE
    supported_vnic_types = (VNIC_NORMAL,)
    mapping_keys = ("interface_mappings", "bridge_mappings")
    # tc on the tap device: bandwidth limits both ways, and DSCP marking.
    qos_rules = {
        qos.BANDWIDTH_LIMIT: {"max_kbps": qos.value_range(), "max_burst_kbps": qos.value_range(),
                              "direction": qos.choices(*qos.DIRECTIONS)},
        qos.DSCP_MARKING: {"dscp_mark": qos.choices(*qos.DSCP_MARKS)},
    }
    qos_vif_types = (VIF_TYPE_BRIDGE, "tap")
    qos_vnic_types = (VNIC_NORMAL,)

    def network_types(self, agent: dict[str, Any]) -> set[str]:
        reported = agent["configurations"].get("network_types")
        if isinstance(reported, list):
            return set(reported)
        return super().network_types(agent)

"""Placement's vocabulary as upstream Neutron speaks it: resource classes,
trait names and the stable UUIDs of resource providers and request groups.

The server's ports (``resource_request``) and its placement report name the
same things, and the compute service matches them by these exact strings
and UUIDs, so they are defined once, here, with upstream's values.
"""
from __future__ import annotations

import re
import uuid
from typing import Iterable

NET_BW_EGR_KILOBIT_PER_SEC = "NET_BW_EGR_KILOBIT_PER_SEC"
NET_BW_IGR_KILOBIT_PER_SEC = "NET_BW_IGR_KILOBIT_PER_SEC"
NET_PACKET_RATE_KILOPACKET_PER_SEC = "NET_PACKET_RATE_KILOPACKET_PER_SEC"
NET_PACKET_RATE_EGR_KILOPACKET_PER_SEC = "NET_PACKET_RATE_EGR_KILOPACKET_PER_SEC"
NET_PACKET_RATE_IGR_KILOPACKET_PER_SEC = "NET_PACKET_RATE_IGR_KILOPACKET_PER_SEC"

# Minimum bandwidth and packet rate resource classes by rule direction.
BANDWIDTH_CLASSES = {"egress": NET_BW_EGR_KILOBIT_PER_SEC,
                     "ingress": NET_BW_IGR_KILOBIT_PER_SEC}
PACKET_RATE_CLASSES = {"egress": NET_PACKET_RATE_EGR_KILOPACKET_PER_SEC,
                       "ingress": NET_PACKET_RATE_IGR_KILOPACKET_PER_SEC,
                       "any": NET_PACKET_RATE_KILOPACKET_PER_SEC}

TRAIT_NETWORK_TUNNEL = "CUSTOM_NETWORK_TUNNEL_PROVIDER"
# ``[ml2] tunnelled_network_rp_name``'s default: the device standing for
# tunnelled networks in ``resource_provider_bandwidths``.
RP_TUNNELLED = "rp_tunnelled"

# The Open vSwitch mechanism driver's namespace for its providers' UUIDs.
OVS_UUID_NAMESPACE = uuid.UUID("87ee7d5c-73bb-11e8-9008-c4d987b2a692")


def custom_trait(name: str) -> str:
    """os-traits' ``normalize_name``: runs of other characters become one
    underscore, then upper case, behind ``CUSTOM_``."""
    return "CUSTOM_" + re.sub("[^0-9A-Za-z]+", "_", name).upper()


def physnet_trait(physnet: str) -> str:
    return custom_trait(f"PHYSNET_{physnet}")


def vnic_type_trait(vnic_type: str) -> str:
    return custom_trait(f"VNIC_TYPE_{vnic_type}")


def agent_rp_uuid(namespace: uuid.UUID, hypervisor: str) -> str:
    return str(uuid.uuid5(namespace, hypervisor))


def device_rp_uuid(namespace: uuid.UUID, hypervisor: str, device: str) -> str:
    return str(uuid.uuid5(namespace, f"{hypervisor}:{device}"))


def request_group_uuid(port_id: str, rule_ids: Iterable[str]) -> str:
    """A port's request group: the same port and rules give the same id."""
    return str(uuid.uuid5(uuid.UUID(port_id), ":".join(rule_ids)))

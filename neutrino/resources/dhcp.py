"""Names the server and the DHCP agent must agree on.

The ``device_id`` of an agent's DHCP port is how both recognise it (upstream's
form, so tools and older agents do too); agents may not import plugins, so the
one definition lives here, where both layers may look.
"""
from __future__ import annotations

import uuid


def dhcp_device_id(network_id: str, host: str) -> str:
    """The ``device_id`` of the DHCP port an agent on ``host`` uses on a network."""
    return f"dhcp{uuid.uuid5(uuid.NAMESPACE_DNS, host.split('.')[0])}-{network_id}"

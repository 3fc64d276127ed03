"""MTU arithmetic shared by the type drivers, as upstream computes it.

Physical segments (flat, VLAN) carry the smaller of ``global_physnet_mtu``
and their physical network's entry in ``physical_network_mtus``. Tunnel
segments carry the smaller of ``global_physnet_mtu`` and ``path_mtu``, minus
the outer IP header and the encapsulation header.
"""
from __future__ import annotations

from typing import Any

IP_HEADER_LENGTH = {4: 20, 6: 40}
VXLAN_ENCAP_OVERHEAD = 30
GRE_ENCAP_OVERHEAD = 22


def _smallest_positive(*values: int | None) -> int:
    positive = [v for v in values if v and v > 0]
    return min(positive) if positive else 0


def physical(conf: Any, physnet_mtus: dict[str, int], physical_network: str | None) -> int:
    return _smallest_positive(conf.global_physnet_mtu,
                              physnet_mtus.get(physical_network or ""))


def tunnel(conf: Any, encap_overhead: int) -> int:
    underlay = _smallest_positive(conf.global_physnet_mtu, conf.ml2.path_mtu)
    if not underlay:
        return 0
    return underlay - IP_HEADER_LENGTH[conf.ml2.overlay_ip_version] - encap_overhead

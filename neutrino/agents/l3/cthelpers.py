"""A router's conntrack helpers as one nftables table, rendered from the desired router (pure).

Upstream's L3 agent extension puts ``-p PROTO --dport PORT -j CT --helper
HELPER`` in the raw table's PREROUTING of the router's namespace, for IPv4
and IPv6. In nftables a helper is an object (``ct helper``) of the table,
assigned by a rule; the assignment needs the connection's conntrack entry,
so the chain hooks prerouting at the filter priority, after conntrack (the
raw priority comes before it and would assign nothing). The kernel's NAT
helpers then follow the related connections the protocol opens (FTP data,
TFTP replies) through the router's SNAT and floating IPs.

The table is separate from the NAT table and ``inet`` (both IP versions): a
helper the kernel lacks fails this table alone, never the router's NAT.
"""
from __future__ import annotations

import re

from neutrino.agents.l3.model import DesiredRouter

FAMILY = "inet"
TABLE = "neutrino_cth"

# Upstream's helper names where the kernel's differ (H.323's two helpers).
_KERNEL_NAMES = {("h323", "udp"): "RAS", ("h323", "tcp"): "Q.931"}


def object_name(helper: str, protocol: str) -> str:
    """One ``ct helper`` object per (helper, protocol), named from both."""
    return re.sub(r"[^a-z0-9_-]", "_", f"cth-{helper}-{protocol}".lower())


def objects(router: DesiredRouter) -> dict[str, tuple[str, str]]:
    """Object name -> (kernel helper type, protocol), each once."""
    out: dict[str, tuple[str, str]] = {}
    for cth in router.conntrack_helpers:
        kernel = _KERNEL_NAMES.get((cth.helper, cth.protocol), cth.helper)
        out[object_name(cth.helper, cth.protocol)] = (kernel, cth.protocol)
    return out


def rules(router: DesiredRouter) -> list[str]:
    """The prerouting rules, one per helper entry, in the router's order."""
    return [f"{c.protocol} dport {c.port} ct helper set "
            f'"{object_name(c.helper, c.protocol)}"' for c in router.conntrack_helpers]


def table(router: DesiredRouter) -> str:
    lines = [f"table {FAMILY} {TABLE} {{"]
    for name, (kernel, protocol) in objects(router).items():
        lines.append(f'  ct helper {name} {{ type "{kernel}" protocol {protocol}; '
                     f"l3proto inet; }}")
    lines.append("  chain prerouting {")
    lines.append("    type filter hook prerouting priority filter; policy accept;")
    lines.extend(f"    {rule}" for rule in rules(router))
    lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def delete_script() -> str:
    """Declare (so delete cannot fail), delete: no helper is left assigned."""
    return f"table {FAMILY} {TABLE}\ndelete table {FAMILY} {TABLE}\n"


def replace_script(router: DesiredRouter) -> str:
    """The whole table replaced in one nft transaction; none when the router has no helper."""
    if not router.conntrack_helpers:
        return delete_script()
    return delete_script() + table(router)


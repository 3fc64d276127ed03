"""A router's NAT as one nftables table, rendered from the desired router (pure).

Semantics follow upstream's legacy L3 agent (its iptables rules, expressed
in nft): floating IPs are 1:1 DNAT (also for traffic the router itself
sends: ``output``) plus SNAT of the fixed address when it leaves by the
gateway; tenant subnets leave SNATed to the gateway IP when ``enable_snat``;
traffic that came in by the gateway is marked so that only DNATed traffic
*not* from outside (a tenant reaching another tenant's floating IP, the
"hairpin") is SNATed to the gateway IP, keeping external clients' addresses;
what the kernel routes into an IPsec tunnel is never SNATed (the ``vpnaas``
extension's site connections, with ESP in the kernel).

The script replaces the table atomically: ``nft -f`` runs it as one
transaction (declare, delete, redefine), so no packet sees a half ruleset.
"""
from __future__ import annotations

from neutrino.agents.l3 import metadata as md
from neutrino.agents.l3.model import DesiredRouter

FAMILY = "ip"
TABLE = "neutrino_l3"
EXTERNAL_MARK = "0x2"  # upstream's mark for packets that entered by the gateway


def _ports(spec: str) -> str:
    """Upstream writes ranges ``8000:8010``; nft ``8000-8010``."""
    return spec.replace(":", "-")


def rules(router: DesiredRouter, metadata: "md.RouterMetadata | None" = None
          ) -> dict[str, list[str]]:
    """The rules of each chain, in order (what the unit tests look at); with
    ``metadata``, also its redirect and the ``input`` chain guarding its port."""
    gw = router.gateway_device
    pre: list[str] = []
    out: list[str] = []
    post: list[str] = []
    mangle: list[str] = []
    chains = {"mangle_prerouting": mangle, "prerouting": pre, "output": out,
              "postrouting": post}
    if metadata is not None:
        for chain, extra in md.rules(metadata.port, metadata.mark).items():
            chains.setdefault(chain, []).extend(extra)
    if gw is None:
        return chains
    mangle.append(f'iifname "{gw}" meta mark set {EXTERNAL_MARK}')
    # Traffic the kernel sends into an IPsec tunnel (VPN site connections)
    # keeps its addresses, as upstream's IPsec driver exempts it from SNAT.
    post.append("rt ipsec exists accept")
    for pf in router.port_forwardings:
        pre.append(f"ip daddr {pf.floating_ip_address} {pf.protocol} dport "
                   f"{_ports(pf.external_port)} dnat to "
                   f"{pf.internal_ip_address}:{_ports(pf.internal_port)}")
    for fip in router.floating_ips:
        pre.append(f"ip daddr {fip.floating_ip_address} dnat to {fip.fixed_ip_address}")
        out.append(f"ip daddr {fip.floating_ip_address} dnat to {fip.fixed_ip_address}")
        post.append(f'ip saddr {fip.fixed_ip_address} oifname "{gw}" '
                    f"snat to {fip.floating_ip_address}")
    if router.enable_snat and router.gateway_ips:
        source = router.gateway_ips[0]
        if router.snat_sources:
            post.append(f'oifname "{gw}" ip saddr {{ {", ".join(router.snat_sources)} }} '
                        f"snat to {source}")
        post.append(f"meta mark != {EXTERNAL_MARK} ct status dnat snat to {source}")
    return chains


_HOOKS = {
    "mangle_prerouting": "type filter hook prerouting priority mangle; policy accept;",
    "prerouting": "type nat hook prerouting priority dstnat; policy accept;",
    "output": "type nat hook output priority -100; policy accept;",
    "postrouting": "type nat hook postrouting priority srcnat; policy accept;",
    "input": "type filter hook input priority filter; policy accept;",
}


def table(router: DesiredRouter, metadata: "md.RouterMetadata | None" = None) -> str:
    """The table definition (one statement per line: nft rejects ``}`` after a rule)."""
    lines = [f"table {FAMILY} {TABLE} {{"]
    for chain, chain_rules in rules(router, metadata).items():
        lines.append(f"  chain {chain} {{")
        lines.append(f"    {_HOOKS[chain]}")
        lines.extend(f"    {rule}" for rule in chain_rules)
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def replace_script(router: DesiredRouter, metadata: "md.RouterMetadata | None" = None) -> str:
    """Declare (so delete cannot fail), delete, redefine: one nft transaction."""
    return (f"table {FAMILY} {TABLE}\n"
            f"delete table {FAMILY} {TABLE}\n" + table(router, metadata))


def delete_script() -> str:
    return f"table {FAMILY} {TABLE}\ndelete table {FAMILY} {TABLE}\n"

"""A router's NDP proxy filter as one nftables table (pure rendering).

Upstream's agent extension lets inbound IPv6 from the gateway reach the
internal subnets only at proxied addresses (its ip6tables chain: accept
each proxied address, drop the rest arriving on the gateway device). The
same in nft, in a table of its own beside the NAT table, replaced at once
(``nft -f`` runs a script as one transaction).
"""
from __future__ import annotations

from neutrino.agents.l3.model import DesiredRouter

FAMILY = "ip6"
TABLE = "neutrino_ndp_proxy"


def rules(router: DesiredRouter) -> list[str]:
    """The forward chain's rules, in order (what the unit tests look at)."""
    proxy, gw = router.ndp_proxy, router.gateway_device
    if proxy is None or gw is None or not proxy.subnets:
        return []
    out = [f'iifname "{gw}" ip6 daddr {address} accept' for address in proxy.addresses]
    out.append(f'iifname "{gw}" ip6 daddr {{ {", ".join(proxy.subnets)} }} drop')
    return out


def replace_script(router: DesiredRouter) -> str:
    """Declare (so delete cannot fail), delete, redefine when the router proxies."""
    script = f"table {FAMILY} {TABLE}\ndelete table {FAMILY} {TABLE}\n"
    chain = rules(router)
    if not chain:
        return script
    lines = [f"table {FAMILY} {TABLE} {{", "  chain forward {",
             "    type filter hook forward priority filter; policy accept;",
             *(f"    {rule}" for rule in chain), "  }", "}"]
    return script + "\n".join(lines) + "\n"

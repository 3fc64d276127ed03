"""What an L3 agent reports it has, for ``neutrino audit``: this host's
``qrouter-`` namespaces and the addresses on their devices, read from the
host (not from what the agent last applied), so a namespace or address
removed behind its back shows."""
from __future__ import annotations

from typing import Any

from neutrino.agents import iproute
from neutrino.agents.l3.model import NS_PREFIX


def namespace_addresses(text: str) -> list[str]:
    """The addresses (without prefix length) of ``ip -o addr show`` lines."""
    found = []
    for line in text.splitlines():
        words = line.split()
        for i, word in enumerate(words[:-1]):
            if word in ("inet", "inet6"):
                found.append(words[i + 1].split("/", 1)[0])
    return sorted(found)


def realised() -> dict[str, Any]:
    routers = {}
    for ns in iproute.namespaces():
        if ns.startswith(NS_PREFIX):
            text = iproute.ip("-o", "addr", "show", namespace=ns, check=False)
            routers[ns[len(NS_PREFIX):]] = {"addresses": namespace_addresses(text)}
    return {"routers": routers}

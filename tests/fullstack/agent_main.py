"""``neutrino agent <kind>`` as the fullstack suite runs it on an emulated host.

Every emulated host shares the machine's one list of network namespaces,
and other test modules (on the other pytest worker) have routers of their
own there. An L3 agent's full sync deletes every ``qrouter-`` namespace it
does not serve, as upstream's does on a real host; here that would delete
other tests' routers. So the agent of an emulated host sees as routers only
the namespaces that host's agents made (remembered in a file of the host's
directory, the agent's working directory, so a restarted agent adopts them).
Upstream's fullstack suite solves the same problem by renaming namespaces.

An HA router lives on several emulated hosts at once, and each wants its
own ``qrouter-<id>``: with ``NEUTRINO_NS_SUFFIX`` set, this host's router
namespaces are ``qrouter-<id>@<suffix>`` (as upstream's fullstack does).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from neutrino.agents.l3 import linux, model, router
from neutrino.cmd.main import main

OWNED = Path("owned-namespaces")


def _owned() -> set[str]:
    return set(OWNED.read_text().split()) if OWNED.exists() else set()


def _patch() -> None:
    every = linux.LinuxHost.namespaces
    ensure = linux.LinuxHost.ensure_namespace

    def namespaces(self: linux.LinuxHost) -> list[str]:
        owned = _owned()
        return [ns for ns in every(self) if not ns.startswith(model.NS_PREFIX) or ns in owned]

    def ensure_namespace(self: linux.LinuxHost, ns: str) -> None:
        if ns not in _owned():
            with OWNED.open("a") as out:
                out.write(ns + "\n")
        ensure(self, ns)

    linux.LinuxHost.namespaces = namespaces  # type: ignore[method-assign]
    linux.LinuxHost.ensure_namespace = ensure_namespace  # type: ignore[method-assign]


def _suffix_namespaces(suffix: str) -> None:
    plain = model.namespace_name
    stale = router.RouterManager.stale_router_ids

    def namespace_name(router_id: str) -> str:
        return f"{plain(router_id)}@{suffix}"

    def stale_router_ids(self: Any, keep: set[str]) -> list[str]:
        return [i.split("@")[0] for i in stale(self, keep)]

    model.namespace_name = namespace_name  # type: ignore[assignment]
    router.RouterManager.stale_router_ids = stale_router_ids  # type: ignore[method-assign]


if __name__ == "__main__":
    _patch()
    if os.environ.get("NEUTRINO_NS_SUFFIX"):
        _suffix_namespaces(os.environ["NEUTRINO_NS_SUFFIX"])
    main()

"""``neutrino agent <kind>`` as the fullstack suite runs it on an emulated host.

Every emulated host shares the machine's one list of network namespaces,
and other test modules (on the other pytest worker) have routers of their
own there. An L3 agent's full sync deletes every ``qrouter-`` namespace it
does not serve, as upstream's does on a real host; here that would delete
other tests' routers. So the agent of an emulated host sees as routers only
the namespaces that host's agents made (remembered in a file of the host's
directory, the agent's working directory, so a restarted agent adopts them).
Upstream's fullstack suite solves the same problem by renaming namespaces.
"""
from __future__ import annotations

from pathlib import Path

from neutrino.agents.l3 import linux, model
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


if __name__ == "__main__":
    _patch()
    main()

"""``neutrino agent <kind>`` as the fullstack suite runs it on an emulated host.

Every emulated host shares the machine's one list of network namespaces,
and other test modules (on the other pytest worker) have routers of their
own there. An L3 agent's full sync deletes every ``qrouter-`` namespace it
does not serve, as upstream's does on a real host; here that would delete
other tests' routers. So the L3 agent of an emulated host is built, as the
all-in-one builds its own, on ``OwnRouterNamespaces``: it sees as routers
only the namespaces it made (listed in the host's directory, its working
directory, so a restarted agent adopts them). Upstream's fullstack suite
solves the same problem by renaming namespaces.

An HA router lives on several emulated hosts at once, and each wants its
own ``qrouter-<id>`` (a distributed router its ``fip-`` and ``snat-`` ones
too): with ``NEUTRINO_NS_SUFFIX`` set, this host's router namespaces are
``qrouter-<id>@<suffix>`` (as upstream's fullstack does); so are an
ACTIVE_STANDBY load balancer's ``qlbaas-<id>``.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from neutrino.agents import launch
from neutrino.agents.l3 import model, router
from neutrino.agents.loadbalancer import plan as lb_plan
from neutrino.cmd.main import main


def _suffix_namespaces(suffix: str) -> None:
    plain = model.namespace_name
    stale = router.RouterManager.stale_router_ids

    def namespace_name(router_id: str, prefix: str = model.NS_PREFIX) -> str:
        return f"{plain(router_id, prefix)}@{suffix}"

    def stale_router_ids(self: Any, keep: set[str]) -> list[str]:
        return [i.split("@")[0] for i in stale(self, keep)]

    model.namespace_name = namespace_name  # type: ignore[assignment]
    router.RouterManager.stale_router_ids = stale_router_ids  # type: ignore[method-assign]
    lb_namespace = lb_plan.namespace

    def lb_namespace_name(lb_id: str) -> str:
        return f"{lb_namespace(lb_id)}@{suffix}"

    lb_plan.namespace = lb_namespace_name  # type: ignore[assignment]


if __name__ == "__main__":
    launch.AGENTS["l3"] = lambda conf: launch.l3_agent(conf, Path("owned-namespaces").resolve())
    if os.environ.get("NEUTRINO_NS_SUFFIX"):
        _suffix_namespaces(os.environ["NEUTRINO_NS_SUFFIX"])
    main()

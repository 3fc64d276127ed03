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
"""
from __future__ import annotations

from pathlib import Path

from neutrino.cmd import agents
from neutrino.cmd.main import main

if __name__ == "__main__":
    agents.AGENTS["l3"] = lambda conf: agents.l3_agent(conf, Path("owned-namespaces").resolve())
    main()

"""An in-memory host for the load-balancer agent's tests: what was built,
reloaded and torn down, and statistics the test sets."""
from __future__ import annotations

from neutrino.agents.loadbalancer.host import LbHost
from neutrino.agents.loadbalancer.plan import Deployment, Observed
from neutrino.agents.loadbalancer.udp_health import Check


class MemoryLbHost(LbHost):
    def __init__(self) -> None:
        self.deployed: dict[str, Deployment] = {}
        self.running: dict[str, bool] = {}
        self.log: list[tuple[str, str]] = []  # (operation, lb id)
        self.stat_text: dict[str, str] = {}
        self.fail: set[str] = set()  # lb ids whose build or reload fails
        self.failing: set[str] = set()  # members whose checks fail
        self.probed: list[Check] = []
        self.udp_text: dict[str, tuple[str, str]] = {}

    def observe(self) -> dict[str, Observed]:
        return {i: Observed(namespace=True, running=self.running.get(i, False),
                            config=d.config, device=d.device, keepalived=d.keepalived,
                            udp=d.udp)
                for i, d in self.deployed.items()}

    def build(self, deployment: Deployment) -> None:
        self.log.append(("build", deployment.lb_id))
        if deployment.lb_id in self.fail:
            raise RuntimeError(f"cannot build {deployment.lb_id}")
        self.deployed[deployment.lb_id] = deployment
        self.running[deployment.lb_id] = True

    def reload(self, deployment: Deployment) -> None:
        self.log.append(("reload", deployment.lb_id))
        if deployment.lb_id in self.fail:
            raise RuntimeError(f"cannot reload {deployment.lb_id}")
        self.deployed[deployment.lb_id] = deployment

    def teardown(self, lb_id: str, device: str | None) -> None:
        self.log.append(("teardown", lb_id))
        self.deployed.pop(lb_id, None)
        self.running.pop(lb_id, None)

    def stats(self, lb_id: str) -> str | None:
        if not self.running.get(lb_id):
            return None
        return self.stat_text.get(lb_id, "")

    def probe(self, lb_id: str, checks: list[Check]) -> dict[str, bool]:
        self.probed += checks
        return {c.member_id: c.member_id not in self.failing for c in checks}

    def udp_stats(self, lb_id: str) -> tuple[str, str] | None:
        if not self.running.get(lb_id):
            return None
        return self.udp_text.get(lb_id, ("", ""))

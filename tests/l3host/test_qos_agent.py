"""The L3 agent's QoS extensions in its loop: the policies its routers name
are pulled, pushes of them redo those routers (fakes for server and host)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from neutrino.agents.l3.agent import QosPushEndpoint
from tests.l3host.routers import fip, gateway, interface, router
from tests.l3host.test_agent_loop import FakeManager, FakePlugin, make

EXTENSIONS = "\n[agent]\nextensions = fip_qos, gateway_ip_qos\n"


class QosPlugin(FakePlugin):
    def __init__(self, routers: list[dict[str, Any]]) -> None:
        super().__init__(routers)
        self.policies: dict[str, dict[str, Any]] = {}

    def qos_policies(self, ids: list[str]) -> list[dict[str, Any]]:
        self.calls.append(("qos_policies", ids))
        return [self.policies[i] for i in ids if i in self.policies]


class PolicyManager(FakeManager):
    def __init__(self) -> None:
        super().__init__()
        self.given: dict[str, Any] = {}

    def apply(self, r: dict[str, Any], policies: dict[str, Any] | None = None) -> Any:
        self.given[r["id"]] = policies
        return super().apply(r, policies)


def _router(fip_policy: str | None, gw_policy: str | None) -> dict[str, Any]:
    f = fip("172.24.4.20", "10.0.1.5", "")
    f["qos_policy_id"] = fip_policy
    r = router([interface("10.0.1.0/24", "10.0.1.1", "fa:16:3e:00:00:01")],
               gateway("172.24.4.0/24", "172.24.4.10", "172.24.4.1", "fa:16:3e:00:00:02"),
               fips=[f])
    r["external_gateway_info"]["qos_policy_id"] = gw_policy
    return r


def _agent(tmp_path: Path, routers: list[dict[str, Any]], extra: str = EXTENSIONS
           ) -> tuple[Any, QosPlugin, PolicyManager]:
    agent, _, _ = make(tmp_path, [], extra)
    plugin, manager = QosPlugin(routers), PolicyManager()
    agent.plugin_rpc, agent.routers = plugin, manager
    return agent, plugin, manager


def _policy(pid: str, kbps: int) -> dict[str, Any]:
    return {"id": pid, "rules": [{"type": "bandwidth_limit", "direction": "egress",
                                  "max_kbps": kbps, "max_burst_kbps": 0}]}


def test_routers_get_the_policies_they_name_pulled_once(tmp_path: Path) -> None:
    r1, r2 = _router("pf", "pg"), _router("pf", None)
    agent, plugin, manager = _agent(tmp_path, [r1, r2])
    plugin.policies = {"pf": _policy("pf", 1000), "pg": _policy("pg", 2000)}
    assert agent.process()
    assert ("qos_policies", ["pf", "pg"]) in plugin.calls
    assert manager.given[r1["id"]] == manager.given[r2["id"]] == plugin.policies
    plugin.calls.clear()
    agent.mark_dirty([r1["id"]])
    assert agent.process()
    assert plugin.calls == [("sync_routers", [r1["id"]])]  # known: not pulled again


def test_a_pushed_policy_redoes_the_routers_using_it(tmp_path: Path) -> None:
    r1, r2 = _router("pf", None), _router(None, None)
    agent, plugin, manager = _agent(tmp_path, [r1, r2])
    plugin.policies = {"pf": _policy("pf", 1000)}
    assert agent.process()
    plugin.calls.clear()
    QosPushEndpoint(agent).push({}, resource_list=[_policy("pf", 3000)], event_type="updated")
    QosPushEndpoint(agent).push({}, resource_list=[_policy("other", 5)], event_type="updated")
    assert agent.process()
    assert plugin.calls == [("sync_routers", [r1["id"]])]
    assert manager.given[r1["id"]] == {"pf": _policy("pf", 3000)}
    QosPushEndpoint(agent).push({}, resource_list=[{"id": "pf", "rules": []}],
                                event_type="deleted")
    assert agent.process()
    assert ("qos_policies", ["pf"]) in plugin.calls  # forgotten: asked again


def test_failed_pull_is_retried(tmp_path: Path) -> None:
    r1 = _router("pf", None)
    agent, plugin, manager = _agent(tmp_path, [r1])

    def broken(ids: list[str]) -> list[dict[str, Any]]:
        raise RuntimeError("bus down")
    plugin.qos_policies = broken  # type: ignore[method-assign]
    assert not agent.process()
    assert manager.calls == [] and agent.pending()


def test_without_the_extensions_nothing_is_pulled(tmp_path: Path) -> None:
    r1 = _router("pf", "pg")
    agent, plugin, manager = _agent(tmp_path, [r1], extra="")
    assert agent.process()
    assert not any(c[0] == "qos_policies" for c in plugin.calls)
    assert manager.given[r1["id"]] == {}

"""The agent loop against a recording fake of the server's L3 RPC (``q-l3-plugin``).

The server side of these calls is written on another branch; these tests
pin the agent's half: what it asks, when, and what it does with answers.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from neutrino.agents.l3 import model
from neutrino.agents.l3.agent import L3Agent, L3AgentEndpoint
from neutrino.agents.l3.router import Result
from neutrino.service import make_conf
from tests.l3host.routers import fip, gateway, interface, router


class FakePlugin:
    def __init__(self, routers: list[dict[str, Any]]) -> None:
        self.routers = {r["id"]: r for r in routers}
        self.calls: list[tuple[str, Any]] = []
        self.fail_sync = False
        self.fail_status = False

    def sync_routers(self, router_ids: list[str] | None = None) -> list[dict[str, Any]]:
        self.calls.append(("sync_routers", router_ids))
        if self.fail_sync:
            raise RuntimeError("bus down")
        ids = self.routers if router_ids is None else [i for i in router_ids
                                                       if i in self.routers]
        return [self.routers[i] for i in ids]

    def update_floatingip_statuses(self, router_id: str, fip_statuses: dict[str, str]) -> None:
        self.calls.append(("update_floatingip_statuses", (router_id, fip_statuses)))
        if self.fail_status:
            raise RuntimeError("bus down")


class FakeManager:
    """Records what the agent asks of the host."""

    def __init__(self, stale: list[str] | None = None) -> None:
        self.applied: dict[str, Any] = {}
        self.calls: list[tuple[str, str]] = []
        self.stale = stale or []
        self.fail: set[str] = set()
        self.statuses: dict[str, dict[str, str]] = {}
        self.forgotten: list[tuple[str, dict[str, str]]] = []
        self.attached: list[list[str]] = []  # the routers of each attach_devices

    def apply(self, r: dict[str, Any], policies: dict[str, Any] | None = None) -> Result:
        self.calls.append(("apply", r["id"]))
        if r["id"] in self.fail:
            return Result({}, RuntimeError("boom"))
        self.applied[r["id"]] = model.desired_router(r)
        return Result(self.statuses.pop(r["id"], {}))

    def attach_devices(self, routers: list[dict[str, Any]]) -> None:
        self.attached.append(sorted(r["id"] for r in routers))

    def remove(self, router_id: str) -> None:
        self.calls.append(("remove", router_id))
        self.applied.pop(router_id, None)

    def stale_router_ids(self, keep: set[str]) -> list[str]:
        return [s for s in self.stale if s not in keep]

    def forget_status(self, router_id: str, statuses: dict[str, str]) -> None:
        self.forgotten.append((router_id, statuses))


def make(tmp_path: Path, routers: list[dict[str, Any]], extra: str = "",
         stale: list[str] | None = None) -> tuple[L3Agent, FakePlugin, FakeManager]:
    path = tmp_path / "l3.conf"
    path.write_text(f"[DEFAULT]\nhost = l3host-a\n{extra}\n[AGENT]\nreport_interval = 0\n")
    plugin, manager = FakePlugin(routers), FakeManager(stale)
    agent = L3Agent(make_conf(["--config-file", str(path)]), driver=object(),  # type: ignore[arg-type]
                    plugin_rpc=plugin, routers=manager)  # type: ignore[arg-type]
    return agent, plugin, manager


R1 = router([interface("10.0.1.0/24", "10.0.1.1", "fa:16:3e:00:00:01")],
            gateway("172.24.4.0/24", "172.24.4.10", "172.24.4.1", "fa:16:3e:00:00:02"))
R2 = router([interface("10.0.2.0/24", "10.0.2.1", "fa:16:3e:00:00:03")])


def test_start_is_a_full_sync_that_removes_routers_no_longer_served(tmp_path: Path) -> None:
    agent, plugin, manager = make(tmp_path, [R1, R2], stale=["old-router"])
    assert agent.pending()
    assert agent.process()
    assert plugin.calls == [("sync_routers", None)]
    # stale routers go first; the served ones are applied several at a time
    assert manager.calls[0] == ("remove", "old-router")
    assert sorted(manager.calls[1:]) == sorted([("apply", R1["id"]), ("apply", R2["id"])])
    # their devices given to the switch together, once, before any is applied
    assert manager.attached == [sorted([R1["id"], R2["id"]])]
    assert not agent.pending()
    assert agent.process() and plugin.calls == [("sync_routers", None)]  # nothing to do


def test_routers_updated_resyncs_only_those_routers(tmp_path: Path) -> None:
    agent, plugin, manager = make(tmp_path, [R1, R2])
    agent.process()
    plugin.calls.clear()
    manager.calls.clear()
    L3AgentEndpoint(agent).routers_updated({}, routers=[R2["id"]])
    assert agent.process()
    assert plugin.calls == [("sync_routers", [R2["id"]])]
    assert manager.calls == [("apply", R2["id"])]


def test_updated_router_the_server_no_longer_returns_is_removed(tmp_path: Path) -> None:
    agent, plugin, manager = make(tmp_path, [R1, R2])
    agent.process()
    manager.calls.clear()
    del plugin.routers[R2["id"]]  # unscheduled or admin down
    L3AgentEndpoint(agent).router_added_to_agent({}, payload=[R2["id"]])
    agent.process()
    assert manager.calls == [("remove", R2["id"])]


def test_deleted_and_removed_from_agent_remove_without_asking(tmp_path: Path) -> None:
    agent, plugin, manager = make(tmp_path, [R1, R2])
    agent.process()
    plugin.calls.clear()
    manager.calls.clear()
    endpoint = L3AgentEndpoint(agent)
    endpoint.router_deleted({}, router_id=R1["id"])
    endpoint.router_removed_from_agent({}, payload={"router_id": R2["id"]})
    assert agent.process()
    assert plugin.calls == []
    assert sorted(manager.calls) == sorted([("remove", R1["id"]), ("remove", R2["id"])])


def test_failed_sync_is_retried_as_a_full_sync(tmp_path: Path) -> None:
    agent, plugin, manager = make(tmp_path, [R1])
    plugin.fail_sync = True
    assert not agent.process()
    assert agent.pending() and manager.calls == []
    plugin.fail_sync = False
    assert agent.process()
    assert plugin.calls == [("sync_routers", None), ("sync_routers", None)]
    assert manager.calls == [("apply", R1["id"])]


def test_router_that_failed_to_apply_stays_dirty(tmp_path: Path) -> None:
    agent, plugin, manager = make(tmp_path, [R1, R2])
    manager.fail.add(R1["id"])
    assert not agent.process()
    assert agent.pending()
    manager.fail.clear()
    assert agent.process()
    assert plugin.calls[-1] == ("sync_routers", [R1["id"]])


def test_floating_ip_statuses_are_reported_and_resent_after_a_failure(
        tmp_path: Path) -> None:
    agent, plugin, manager = make(tmp_path, [R1])
    manager.statuses[R1["id"]] = {"f1": "ACTIVE"}
    plugin.fail_status = True
    assert not agent.process()
    assert manager.forgotten == [(R1["id"], {"f1": "ACTIVE"})]
    plugin.fail_status = False
    manager.statuses[R1["id"]] = {"f1": "ACTIVE"}  # the manager reports it again
    assert agent.process()
    assert plugin.calls[-1] == ("update_floatingip_statuses", (R1["id"], {"f1": "ACTIVE"}))


def test_internal_only_routers_skipped_when_configured(tmp_path: Path) -> None:
    agent, _, manager = make(tmp_path, [R1, R2], extra="handle_internal_only_routers = false")
    agent.process()
    assert manager.calls == [("apply", R1["id"])]


def test_agent_updated_asks_for_a_full_sync(tmp_path: Path) -> None:
    agent, plugin, _ = make(tmp_path, [R1])
    agent.process()
    L3AgentEndpoint(agent).agent_updated({}, payload={"admin_state_up": True})
    agent.process()
    assert plugin.calls == [("sync_routers", None), ("sync_routers", None)]


def test_state_report_says_legacy_l3_agent_with_counts(tmp_path: Path) -> None:
    r = router([interface("10.0.1.0/24", "10.0.1.1", "fa:16:3e:00:00:01")],
               gateway("172.24.4.0/24", "172.24.4.10", "172.24.4.1", "fa:16:3e:00:00:02"),
               fips=[fip("172.24.4.20", "10.0.1.5", "")])
    from neutrino.agents.l3.router import RouterManager

    class NoHost:
        def __getattr__(self, name: str) -> Any:
            return lambda *a, **k: [] if name in ("links", "namespaces",
                                                  "gateway_routes") else set()

    class NoDriver:
        def plug(self, *a: Any, **k: Any) -> None: ...
        def unplug(self, *a: Any, **k: Any) -> None: ...

    manager = RouterManager(NoDriver(), NoHost())  # type: ignore[arg-type]
    agent, _, _ = make(tmp_path, [r])
    agent.routers = manager
    agent.process()
    state = agent.state()
    assert state["agent_type"] == "L3 agent" and state["binary"] == "neutron-l3-agent"
    assert state["topic"] == "l3_agent"
    conf = state["configurations"]
    assert conf["agent_mode"] == "legacy"
    assert (conf["routers"], conf["ex_gw_ports"], conf["interfaces"],
            conf["floating_ips"]) == (1, 1, 1, 1)


@pytest.mark.parametrize("routers", [[], None])
def test_routers_updated_with_nothing_marks_nothing(tmp_path: Path, routers: Any) -> None:
    agent, _, _ = make(tmp_path, [])
    agent.process()
    L3AgentEndpoint(agent).routers_updated({}, routers=routers)
    assert not agent.pending()


def test_network_update_redoes_the_routers_with_a_port_on_it(tmp_path: Path) -> None:
    agent, plugin, manager = make(tmp_path, [R1, R2])
    agent.process()
    net = R2["_interfaces"][0]["network_id"]
    L3AgentEndpoint(agent).network_update({}, network={"id": net, "mtu": 1400})
    agent.process()
    assert plugin.calls[-1] == ("sync_routers", [R2["id"]])


def test_revived_verdict_of_a_state_report_asks_for_a_full_sync(tmp_path: Path) -> None:
    agent, plugin, _ = make(tmp_path, [R1])
    agent.process()

    class Reports:
        def call(self, *a: Any, **k: Any) -> str:
            return "revived"
    agent._client = Reports()
    assert agent.report_state() == "revived"
    agent.process()
    assert plugin.calls == [("sync_routers", None), ("sync_routers", None)]


def _many(count: int) -> list[dict[str, Any]]:
    return [router([interface(f"10.1.{i}.0/24", f"10.1.{i}.1", f"fa:16:3e:01:00:{i:02x}")],
                   gateway("172.24.4.0/24", f"172.24.4.{10 + i}", "172.24.4.1",
                           f"fa:16:3e:02:00:{i:02x}"))
            for i in range(count)]


@pytest.mark.parametrize("count", [3, 40])
def test_a_full_sync_costs_the_same_rpc_calls_for_3_or_40_routers(
        tmp_path: Path, count: int) -> None:
    """One ``sync_routers`` for all of them and one ``update_floatingip_statuses``
    for every floating IP that changed, whatever the number of routers; a
    restart that finds the statuses right sends only the ``sync_routers``."""
    routers = _many(count)
    agent, plugin, manager = make(tmp_path, routers)
    for i, r in enumerate(routers):
        manager.statuses[r["id"]] = {f"fip-{i}-a": "ACTIVE", f"fip-{i}-b": "ACTIVE"}
    assert agent.process()
    assert [name for name, _ in plugin.calls] == ["sync_routers", "update_floatingip_statuses"]
    reported = plugin.calls[1][1][1]
    assert reported == {f"fip-{i}-{x}": "ACTIVE" for i in range(count) for x in "ab"}
    assert len(manager.calls) == count

    restarted, plugin_after, _ = make(tmp_path, routers)  # nothing changed since
    assert restarted.process()
    assert plugin_after.calls == [("sync_routers", None)]


def test_a_failed_status_report_is_resent_for_every_router_it_carried(tmp_path: Path) -> None:
    routers = _many(3)
    agent, plugin, manager = make(tmp_path, routers)
    for i, r in enumerate(routers):
        manager.statuses[r["id"]] = {f"fip-{i}": "ACTIVE"}
    plugin.fail_status = True
    assert not agent.process()
    assert sorted(manager.forgotten) == sorted((r["id"], {f"fip-{i}": "ACTIVE"})
                                               for i, r in enumerate(routers))
    assert agent.pending()  # those routers are redone, their statuses sent again

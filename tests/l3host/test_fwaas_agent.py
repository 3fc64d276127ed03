"""The L3 agent's ``fwaas_v2`` extension in its loop, against recording fakes of
the server (``q-l3-plugin``, ``q-firewall-plugin``) and of the host: which
groups it asks for, what it applies, what it reports, and what a cast redoes."""
from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from neutrino.agents.l3 import fwaas, model
from neutrino.agents.l3.agent import FirewallAgentEndpoint, L3Agent
from neutrino.agents.l3.router import Result
from neutrino.service import make_conf
from tests.l3host.routers import interface, router
from tests.l3host.test_agent_loop import FakePlugin

QR1 = interface("10.0.1.0/24", "10.0.1.1", "fa:16:3e:00:00:01")
QR2 = interface("10.0.2.0/24", "10.0.2.1", "fa:16:3e:00:00:02")
R1 = router([QR1, QR2])
GROUP = {"id": "g1", "ports": [QR2["id"]], "admin_state_up": True,
         "ingress_rule_list": [{"action": "allow", "protocol": "tcp", "ip_version": 4,
                                "destination_port": "22", "enabled": True}],
         "egress_rule_list": []}
FWAAS = "[fwaas]\nenabled = true\n"


class FirewallPlugin(FakePlugin):
    def __init__(self, routers: list[dict[str, Any]], groups: list[dict[str, Any]]) -> None:
        super().__init__(routers)
        self.groups = groups
        self.reported: list[tuple[str, str]] = []

    def firewall_groups_for_ports(self, port_ids: list[str]) -> list[dict[str, Any]]:
        self.calls.append(("firewall_groups_for_ports", sorted(port_ids)))
        return [g for g in self.groups if set(g["ports"]) & set(port_ids)]

    def set_firewall_group_status(self, group_id: str, status: str) -> None:
        self.reported.append((group_id, status))


class Manager:
    """Applies nothing; answers the statuses the extension would report."""

    def __init__(self) -> None:
        self.applied: dict[str, Any] = {}
        self.given: list[dict[str, Any]] = []

    def apply(self, r: dict[str, Any], policies: dict[str, Any] | None = None) -> Result:
        self.given.append(r)
        self.applied[r["id"]] = model.desired_router(r)
        return Result({}, None, fwaas.statuses(fwaas.port_firewalls(r), True))

    def attach_devices(self, routers: list[dict[str, Any]]) -> None:
        pass  # no devices: nothing is plugged

    def remove(self, router_id: str) -> None:
        self.applied.pop(router_id, None)

    def stale_router_ids(self, keep: set[str]) -> list[str]:
        return []


def make(tmp_path: Path, extra: str) -> tuple[L3Agent, FirewallPlugin, Manager]:
    path = tmp_path / "l3.conf"
    path.write_text("[DEFAULT]\nhost = l3host-a\n[AGENT]\nreport_interval = 0\n" + extra)
    plugin, manager = FirewallPlugin([copy.deepcopy(R1)], [GROUP]), Manager()
    agent = L3Agent(make_conf(["--config-file", str(path)]), driver=object(),  # type: ignore[arg-type]
                    plugin_rpc=plugin, routers=manager)  # type: ignore[arg-type]
    return agent, plugin, manager


def test_the_groups_on_a_routers_interfaces_are_applied_with_it_and_reported(
        tmp_path: Path) -> None:
    agent, plugin, manager = make(tmp_path, "extensions = fwaas_v2\n" + FWAAS)
    assert agent.firewall
    assert agent.process()
    assert ("firewall_groups_for_ports", sorted([QR1["id"], QR2["id"]])) in plugin.calls
    assert [g["id"] for g in manager.given[0]["_firewall_groups"]] == ["g1"]
    assert plugin.reported == [("g1", "ACTIVE")]


def test_without_fwaas_enabled_no_group_is_asked_for(tmp_path: Path) -> None:
    for extra in ("extensions = fwaas_v2\n", "extensions = fip_qos\n" + FWAAS):
        agent, plugin, manager = make(tmp_path, extra)
        assert not agent.firewall
        assert agent.process()
        assert all(call[0] != "firewall_groups_for_ports" for call in plugin.calls)
        assert "_firewall_groups" not in manager.given[0] and plugin.reported == []


def test_a_cast_naming_an_interface_redoes_its_router_only(tmp_path: Path) -> None:
    agent, plugin, manager = make(tmp_path, "extensions = fwaas_v2\n" + FWAAS)
    assert agent.process() and not agent.pending()
    endpoint = FirewallAgentEndpoint(agent)
    endpoint.update_firewall_group({}, firewall_group={"id": "g9", "add-port-ids": ["other"],
                                                       "del-port-ids": []})
    assert not agent.pending()
    endpoint.update_firewall_group({}, firewall_group={"id": "g1", "add-port-ids": [],
                                                       "del-port-ids": [QR1["id"]]})
    assert agent.pending()
    plugin.calls.clear()
    assert agent.process()
    assert plugin.calls[0] == ("sync_routers", [R1["id"]])

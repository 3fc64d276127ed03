"""The OVS agent's ``fwaas_v2`` extension in its loop: it pulls the groups of
its ports, applies them after the security groups, reports their statuses,
and pulls them again when the server's fanout says a group changed."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from neutrino.agents.ovs.agent import FirewallAgentEndpoint, OvsAgent
from neutrino.agents.ovs.memory_switch import MemorySwitch
from neutrino.agents.ovs.switch import VifPort
from tests.rpc.bus import agent_conf
from tests.unit.test_ovs_agent_loop import MemoryServer, _details
from tests.unit.test_ovs_fwaas import _group, _info, _rule

CONF = ("[ovs]\nlocal_ip = 10.0.0.1\n[agent]\ntunnel_types = vxlan\nextensions = fwaas_v2\n"
        "[securitygroup]\nfirewall_driver = openvswitch\n[fwaas]\nfirewall_l2_driver = ovs\n")


class FirewallServer(MemoryServer):
    def __init__(self, groups: list[dict[str, Any]]) -> None:
        super().__init__({"p1": _details("p1", "net", 1001)})
        self.groups = groups
        self.pulls: list[list[str]] = []
        self.statuses: list[tuple[str, str]] = []

    def security_group_info_for_devices(self, devices: list[str]) -> dict[str, Any]:
        return _info()

    def firewall_groups_for_ports(self, port_ids: list[str]) -> list[dict[str, Any]]:
        self.pulls.append(port_ids)
        return self.groups

    def set_firewall_group_status(self, group_id: str, status: str) -> None:
        self.statuses.append((group_id, status))


def _agent(tmp: Path, server: FirewallServer, conf: str = CONF) -> tuple[OvsAgent, MemorySwitch]:
    switch = MemorySwitch([VifPort("tap1", "p1", "fa:16:3e:00:00:01", 5, None, {})])
    agent = OvsAgent(agent_conf(tmp, None, "h1", conf), ovs=switch,
                     plugin_rpc=server)  # type: ignore[arg-type]
    agent.setup_bridges()
    return agent, switch


def test_a_ports_group_is_applied_reported_and_pulled_again_when_it_changes(
        tmp_path: Path) -> None:
    server = FirewallServer([_group(egress=[_rule()])])
    agent, switch = _agent(tmp_path, server)
    agent.run_once()
    assert server.pulls == [["p1"]] and server.statuses == [("fwg", "ACTIVE")]
    assert any("resubmit(,74)" in spec for spec in switch.flows["br-int"].values())
    assert agent.configurations()["extensions"] == ["fwaas_v2"]
    agent.run_once()  # nothing changed: no pull, no report
    assert len(server.pulls) == 1 and len(server.statuses) == 1
    server.groups = [_group(egress=[_rule()], admin_state_up=False)]
    FirewallAgentEndpoint(agent).update_firewall_group({}, firewall_group={"id": "fwg"})
    agent.run_once()
    assert server.statuses[-1] == ("fwg", "DOWN")
    assert "table=74,priority=100,in_port=tap1" in switch.flows["br-int"]
    server.groups = []  # the port left the group: back to switching after its groups
    FirewallAgentEndpoint(agent).delete_firewall_group({}, firewall_group={"id": "fwg"})
    agent.run_once()
    assert not any("resubmit(,74)" in spec for spec in switch.flows["br-int"].values())


def test_the_extension_needs_the_ovs_l2_driver_and_the_openvswitch_firewall(
        tmp_path: Path) -> None:
    # upstream's default noop L2 driver: nothing applied, the extension not reported
    server = FirewallServer([_group(egress=[_rule()])])
    agent, switch = _agent(tmp_path, server, CONF.replace("firewall_l2_driver = ovs", ""))
    agent.run_once()
    assert server.pulls == [] and agent.configurations()["extensions"] == []
    assert not any("resubmit(,74)" in spec for spec in switch.flows["br-int"].values())
    with pytest.raises(ValueError, match="firewall_driver"):
        _agent(tmp_path, FirewallServer([]), CONF.replace("openvswitch", "noop"))

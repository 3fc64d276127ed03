"""MechanismManager in isolation: loading, call order, failures, binding levels."""
from __future__ import annotations

from typing import Any, Callable

import pytest

from neutrino.plugins.ml2.exceptions import MechanismDriverError, Ml2ConfigError
from neutrino.plugins.ml2.mech_api import NetworkContext, PortContext
from neutrino.plugins.ml2.mech_linuxbridge import LinuxbridgeMechanismDriver
from neutrino.plugins.ml2.mech_manager import MechanismManager
from neutrino.plugins.ml2.mech_openvswitch import OpenvswitchMechanismDriver
from tests.ml2 import mech_test_drivers as td
from tests.sql_events import listen_all

A = "tests.ml2.mech_test_drivers.RecorderA"
B = "tests.ml2.mech_test_drivers:RecorderB"


@pytest.fixture
def manager(make_conf: Callable[[str], Any]) -> MechanismManager:
    td.CALLS.clear()
    return MechanismManager(make_conf(f"[ml2]\nmechanism_drivers = {A},{B}\n"))


class _Ctx:
    def __init__(self, fail: tuple[str, str] | None = None) -> None:
        self.current = {"id": "x"}
        self.fail = fail


def test_drivers_are_loaded_by_alias_and_class_path_in_configured_order(
        make_conf: Callable[[str], Any]) -> None:
    td.CALLS.clear()
    mgr = MechanismManager(make_conf(f"[ml2]\nmechanism_drivers = {B},openvswitch,{A}\n"))
    assert [d.name for d in mgr.drivers] == [B, "openvswitch", A]
    assert isinstance(mgr.drivers[1], OpenvswitchMechanismDriver)
    assert td.CALLS == [(B, "initialize"), (A, "initialize")]


def test_every_driver_gets_precommit_then_postcommit_in_order(manager: MechanismManager) -> None:
    manager.precommit("create_port_precommit", _Ctx())
    manager.postcommit("create_port_postcommit", _Ctx())
    assert td.CALLS[2:] == [(A, "create_port_precommit"), (B, "create_port_precommit"),
                            (A, "create_port_postcommit"), (B, "create_port_postcommit")]


def test_precommit_failure_stops_at_the_failing_driver(manager: MechanismManager) -> None:
    with pytest.raises(MechanismDriverError) as exc:
        manager.precommit("update_network_precommit", _Ctx((A, "update_network_precommit")))
    assert str(exc.value) == "update_network_precommit failed."
    assert exc.value.code == 500
    assert td.CALLS[2:] == [(A, "update_network_precommit")]


def test_postcommit_failure_still_calls_the_others_then_raises(
        manager: MechanismManager) -> None:
    with pytest.raises(MechanismDriverError, match="create_subnet_postcommit failed."):
        manager.postcommit("create_subnet_postcommit", _Ctx((A, "create_subnet_postcommit")))
    assert td.CALLS[2:] == [(A, "create_subnet_postcommit"), (B, "create_subnet_postcommit")]


def test_delete_postcommit_failure_can_be_only_logged(manager: MechanismManager) -> None:
    manager.postcommit("delete_port_postcommit", _Ctx((A, "delete_port_postcommit")),
                       raise_on_error=False)
    assert (B, "delete_port_postcommit") in td.CALLS


def test_unknown_driver_is_refused_naming_the_option_and_both_attempts(
        make_conf: Callable[[str], Any]) -> None:
    with pytest.raises(Ml2ConfigError) as exc:
        MechanismManager(make_conf("[ml2]\nmechanism_drivers = openvswitch,nosuchdriver\n"))
    text = str(exc.value)
    assert text.startswith("[ml2] mechanism_drivers:") and "nosuchdriver" in text
    assert "not an alias" in text and "not an importable class" in text


def test_a_class_that_is_not_a_mechanism_driver_is_refused(
        make_conf: Callable[[str], Any]) -> None:
    with pytest.raises(Ml2ConfigError, match="is not a mechanism driver"):
        MechanismManager(make_conf(
            "[ml2]\nmechanism_drivers = tests.ml2.mech_test_drivers.NotADriver\n"))


# -- binding levels, with segments and agents given directly ----------------------

class _Backend:
    def __init__(self, agents: dict[str, list[dict[str, Any]]]) -> None:
        self.agents = agents
        self.dynamic: list[dict[str, Any]] = []

    def allocate_dynamic_segment(self, network_id: str, segment: dict[str, Any]) -> dict[str, Any]:
        found = {"id": f"dyn-{len(self.dynamic)}", "network_id": network_id,
                 "segmentation_id": 7, **segment}
        self.dynamic.append(found)
        return found

    def release_dynamic_segment(self, segment_id: str) -> None:
        pass

    def host_agents(self, agent_type: str, host: str) -> list[dict[str, Any]]:
        return self.agents.get(agent_type, [])


def _port_context(segments: list[dict[str, Any]], agents: dict[str, Any],
                  vnic: str = "normal") -> PortContext:
    return PortContext({"id": "p", "network_id": "n"}, NetworkContext({"id": "n"}, None, segments),
                       {"host": "h", "vnic_type": vnic}, backend=_Backend(agents))  # type: ignore[arg-type]


def _agent(**conf: Any) -> dict[str, Any]:
    return {"id": "a", "host": "h", "alive": True, "configurations": conf}


VXLAN = {"id": "s-vx", "network_type": "vxlan", "physical_network": None, "segmentation_id": 5}
VLAN = {"id": "s-vl", "network_type": "vlan", "physical_network": "physnet1",
        "segmentation_id": 100}


def test_first_driver_that_binds_wins(make_conf: Callable[[str], Any]) -> None:
    mgr = MechanismManager(make_conf("[ml2]\nmechanism_drivers = linuxbridge,openvswitch\n"))
    ctx = _port_context([VLAN], {
        "Open vSwitch agent": [_agent(bridge_mappings={"physnet1": "br"})],
        "Linux bridge agent": [_agent(interface_mappings={"physnet1": "eth1"})]})
    assert mgr.bind_port(ctx)
    assert [lv["driver"] for lv in ctx.binding_levels] == ["linuxbridge"]
    assert ctx._result is not None and ctx._result[0] == "bridge"


def test_a_dead_agent_lets_the_next_driver_bind(make_conf: Callable[[str], Any]) -> None:
    mgr = MechanismManager(make_conf("[ml2]\nmechanism_drivers = linuxbridge,openvswitch\n"))
    dead = {**_agent(interface_mappings={"physnet1": "eth1"}), "alive": False}
    ctx = _port_context([VLAN], {"Open vSwitch agent": [_agent(bridge_mappings={"physnet1": "b"})],
                                 "Linux bridge agent": [dead]})
    assert mgr.bind_port(ctx) and ctx.binding_levels[0]["driver"] == "openvswitch"


def test_a_linuxbridge_agent_without_vlan_in_its_network_types_is_not_bound_to_vlan(
        make_conf: Callable[[str], Any]) -> None:
    mgr = MechanismManager(make_conf("[ml2]\nmechanism_drivers = linuxbridge,openvswitch\n"))
    lb = _agent(interface_mappings={"physnet1": "eth1"}, tunnel_types=["vxlan"],
                network_types=["local", "flat", "vxlan"])
    ctx = _port_context([VLAN], {"Open vSwitch agent": [_agent(bridge_mappings={"physnet1": "b"})],
                                 "Linux bridge agent": [lb]})
    assert mgr.bind_port(ctx) and ctx.binding_levels[0]["driver"] == "openvswitch"
    ctx = _port_context([VXLAN], {"Linux bridge agent": [lb]})
    assert mgr.bind_port(ctx) and ctx.binding_levels[0]["driver"] == "linuxbridge"


def test_hierarchical_binding_continues_on_a_dynamic_segment(
        make_conf: Callable[[str], Any]) -> None:
    mgr = MechanismManager(make_conf(
        "[ml2]\nmechanism_drivers = tests.ml2.mech_test_drivers.Hierarchical,openvswitch\n"))
    ctx = _port_context([VXLAN], {"Open vSwitch agent": [
        _agent(bridge_mappings={"physnet1": "br"})]})
    assert mgr.bind_port(ctx)
    assert [(lv["level"], lv["driver"], lv["bound_segment"]["id"])
            for lv in ctx.binding_levels] == [
        (0, "tests.ml2.mech_test_drivers.Hierarchical", "s-vx"), (1, "openvswitch", "dyn-0")]
    assert ctx.top_bound_segment == VXLAN
    assert ctx.bottom_bound_segment["network_type"] == "vlan"  # type: ignore[index]


def test_a_level_nobody_completes_falls_back_to_the_next_driver_above(
        make_conf: Callable[[str], Any]) -> None:
    mgr = MechanismManager(make_conf(
        "[ml2]\nmechanism_drivers = tests.ml2.mech_test_drivers.Hierarchical,openvswitch\n"))
    # OVS cannot bind the dynamic VLAN (physnet1 unmapped) but can bind the VXLAN itself.
    ctx = _port_context([VXLAN], {"Open vSwitch agent": [_agent(tunnel_types=["vxlan"])]})
    assert mgr.bind_port(ctx)
    assert [lv["driver"] for lv in ctx.binding_levels] == ["openvswitch"]


def test_nothing_binds_without_segments_or_agents(make_conf: Callable[[str], Any]) -> None:
    mgr = MechanismManager(make_conf("[ml2]\nmechanism_drivers = openvswitch\n"))
    assert not mgr.bind_port(_port_context([], {}))
    assert not mgr.bind_port(_port_context([VLAN], {}))


@pytest.mark.parametrize("driver, conf, segment, binds", [
    (OpenvswitchMechanismDriver, {}, {"network_type": "local"}, True),
    (OpenvswitchMechanismDriver, {}, {"network_type": "flat", "physical_network": "p"}, False),
    (OpenvswitchMechanismDriver, {"bridge_mappings": {"p": "br"}},
     {"network_type": "flat", "physical_network": "p"}, True),
    (OpenvswitchMechanismDriver, {"tunnel_types": ["gre"]}, {"network_type": "vxlan"}, False),
    (OpenvswitchMechanismDriver, {"tunnel_types": ["geneve"]}, {"network_type": "geneve"}, True),
    (LinuxbridgeMechanismDriver, {"bridge_mappings": {"p": "brq"}},
     {"network_type": "vlan", "physical_network": "p"}, True),
    (LinuxbridgeMechanismDriver, {"interface_mappings": {"q": "eth"}},
     {"network_type": "vlan", "physical_network": "p"}, False),
])
def test_agent_must_report_the_segments_type_and_physnet(
        make_conf: Callable[[str], Any], driver: type, conf: dict[str, Any],
        segment: dict[str, Any], binds: bool) -> None:
    d = driver(make_conf(""))
    assert d.check_segment_for_agent(segment, _agent(**conf)) is binds


@pytest.mark.parametrize("drivers,handled", [
    ("openvswitch,linuxbridge", False),   # no network hooks: the base class's no-ops
    ("openvswitch,logger", True),         # hooks set on the class
    (f"openvswitch,{A}", True),           # hooks answered by __getattribute__
])
def test_the_manager_knows_whether_any_driver_implements_a_hook(
        make_conf: Callable[[str], Any], drivers: str, handled: bool) -> None:
    mgr = MechanismManager(make_conf(f"[ml2]\nmechanism_drivers = {drivers}\n"))
    assert mgr.handles("create_network_postcommit") is handled
    assert mgr.handles("update_subnet_precommit") is handled


def test_without_driver_hooks_a_write_reads_no_segments_for_drivers(tmp_path: Any) -> None:
    """Building a network's, subnet's or port's driver context reads the
    segments; with no driver implementing the hooks that read is skipped."""

    from tests.inprocess import CountingApp
    app = CountingApp(tmp_path, "[ml2]\nmechanism_drivers = openvswitch\n")
    seen: list[str] = []
    listen_all(app.api.plugin.db, "before_cursor_execute",
                 lambda conn, cur, statement, *a: seen.append(statement))

    def segment_reads(method: str, path: str, **kw: Any) -> tuple[int, Any]:
        seen.clear()
        result = app.client.simulate_request(method, path, **kw)
        assert result.status_code < 300, result.text
        return sum(s.lstrip().startswith("SELECT network_segments.id") for s in seen), result.json

    reads, body = segment_reads("POST", "/v2.0/networks", json={"network": {"name": "n"}})
    net = body["network"]["id"]
    assert reads == 0
    assert segment_reads("PUT", f"/v2.0/networks/{net}", json={"network": {"name": "m"}})[0] == 0
    reads, body = segment_reads("POST", "/v2.0/subnets", json={"subnet": {
        "network_id": net, "ip_version": 4, "cidr": "10.3.0.0/24"}})
    assert reads == 0
    subnet = body["subnet"]["id"]
    reads, body = segment_reads("POST", "/v2.0/ports", json={"port": {"network_id": net}})
    assert reads == 0
    assert segment_reads("PUT", f"/v2.0/ports/{body['port']['id']}",
                         json={"port": {"name": "p"}})[0] == 0
    assert segment_reads("DELETE", f"/v2.0/ports/{body['port']['id']}")[0] == 0
    assert segment_reads("DELETE", f"/v2.0/subnets/{subnet}")[0] == 0

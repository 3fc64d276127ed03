"""The metering agent against a recording host: tables follow the server's
labels, counts are accounted and reported at the report interval."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from neutrino.agents.metering import driver as drivers
from neutrino.agents.metering.agent import MeteringAgent, MeteringAgentEndpoint
from tests.metering.fakes import FakeHost, FakePlugin, RecordingNotifier, label, router, rule
from tests.rpc.bus import agent_conf

NS_A, NS_B = "qrouter-a", "qrouter-b"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _agent(tmp: Path, routers: list[dict[str, Any]], host: FakeHost,
           extra: str = "") -> tuple[MeteringAgent, FakePlugin, RecordingNotifier, Clock]:
    conf = agent_conf(tmp, None, "h1", "driver = iptables\nmeasure_interval = 30\n"
                                       f"report_interval = 300\n{extra}")
    plugin, notifier, clock = FakePlugin(routers), RecordingNotifier(), Clock()
    agent = MeteringAgent(conf, plugin_rpc=plugin, driver=drivers.NftablesDriver(host),
                          notifier=notifier, clock=clock)
    return agent, plugin, notifier, clock


def _lbl(label_id: str = "L1") -> dict[str, Any]:
    return label(label_id, [rule("egress", remote_ip_prefix="10.0.0.0/24")])


def test_tables_are_installed_then_read_into_an_l3_meter_report(tmp_path: Path) -> None:
    host = FakeHost(NS_A)
    agent, _, notifier, clock = _agent(tmp_path, [router("a", "p1", "gwa", [_lbl()])], host)
    agent.run_once()
    assert "counter name \"label-L1\"" in host.tables[NS_A]
    assert notifier.sent == []  # nothing read yet: the table was only just made
    host.count(NS_A, "L1", 3, 300)
    clock.now += 300
    agent.run_once()
    [(event, payload)] = notifier.sent
    assert event == "l3.meter"
    assert (payload["label_id"], payload["pkts"], payload["bytes"]) == ("L1", 3, 300)
    assert (payload["project_id"], payload["host"]) == ("p1", "h1")


def test_counts_accumulate_until_the_report_interval(tmp_path: Path) -> None:
    host = FakeHost(NS_A)
    agent, _, notifier, clock = _agent(tmp_path, [router("a", "p1", "gwa", [_lbl()])], host)
    agent.run_once()
    agent.run_once()  # the first report (zero), as upstream's first pass
    notifier.sent.clear()
    for _ in range(3):
        clock.now += 30
        host.count(NS_A, "L1", 1, 100)
        agent.run_once()
    assert notifier.sent == []
    clock.now += 300
    host.count(NS_A, "L1", 1, 100)
    agent.run_once()
    [(_, payload)] = notifier.sent
    assert (payload["pkts"], payload["bytes"], payload["time"]) == (4, 400, 390)


def test_a_router_whose_namespace_is_missing_is_installed_once_it_appears(
        tmp_path: Path) -> None:
    host = FakeHost()
    agent, _, _, _ = _agent(tmp_path, [router("a", "p1", "gwa", [_lbl()])], host)
    agent.run_once()
    assert host.tables == {}
    host.present.add(NS_A)
    agent.run_once()
    assert NS_A in host.tables


def test_a_label_removed_on_the_server_is_read_before_its_rules_go(tmp_path: Path) -> None:
    host = FakeHost(NS_A)
    agent, plugin, notifier, clock = _agent(
        tmp_path, [router("a", "p1", "gwa", [_lbl("L1"), _lbl("L2")])], host)
    agent.run_once()
    host.count(NS_A, "L2", 7, 700)
    plugin.routers = [router("a", "p1", "gwa", [_lbl("L1")])]
    MeteringAgentEndpoint(agent).remove_metering_label({}, routers=[])
    clock.now += 300
    agent.run_once()
    assert "label-L2" not in host.tables[NS_A]
    sent = {p["label_id"]: p for _, p in notifier.sent}
    assert (sent["L2"]["pkts"], sent["L2"]["bytes"]) == (7, 700)


def test_a_router_that_left_the_host_loses_its_table_after_a_last_reading(
        tmp_path: Path) -> None:
    host = FakeHost(NS_A, NS_B)
    agent, plugin, notifier, clock = _agent(
        tmp_path, [router("a", "p1", "gwa", [_lbl()]), router("b", "p1", "gwb", [_lbl()])],
        host)
    agent.run_once()
    host.count(NS_B, "L1", 2, 20)
    plugin.routers = plugin.routers[:1]
    MeteringAgentEndpoint(agent).router_deleted({}, router_id="b")
    clock.now += 300
    agent.run_once()
    assert set(host.tables) == {NS_A}
    [(_, payload)] = notifier.sent
    assert (payload["pkts"], payload["bytes"]) == (2, 20)


def test_a_table_lost_with_its_namespace_is_installed_again(tmp_path: Path) -> None:
    host = FakeHost(NS_A)
    agent, _, _, _ = _agent(tmp_path, [router("a", "p1", "gwa", [_lbl()])], host)
    agent.run_once()
    del host.tables[NS_A]  # the L3 agent rebuilt the namespace
    agent.run_once()
    agent.run_once()
    assert NS_A in host.tables


def test_unchanged_tables_are_only_read(tmp_path: Path) -> None:
    host = FakeHost(NS_A)
    agent, _, _, _ = _agent(tmp_path, [router("a", "p1", "gwa", [_lbl()])], host)
    agent.run_once()
    host.calls.clear()
    agent.request_sync()
    agent.run_once()
    assert host.calls == [("reset", NS_A)]


def test_a_failed_sync_is_retried_and_keeps_the_tables(tmp_path: Path) -> None:
    host = FakeHost(NS_A)
    agent, plugin, _, _ = _agent(tmp_path, [router("a", "p1", "gwa", [_lbl()])], host)
    agent.run_once()
    plugin.fail = True
    agent.request_sync()
    agent.run_once()
    assert NS_A in host.tables
    plugin.fail = False
    agent.run_once()
    assert plugin.calls == 3


def test_granular_reports_use_upstreams_event_types(tmp_path: Path) -> None:
    host = FakeHost(NS_A)
    agent, _, notifier, clock = _agent(tmp_path, [router("a", "p1", "gwa", [_lbl()])], host,
                                       "granular_traffic_data = true\n")
    agent.run_once()
    host.count(NS_A, "L1", 1, 64)
    clock.now += 300
    agent.run_once()
    events = {e: p for e, p in notifier.sent}
    assert set(events) == {"l3.meter.label", "l3.meter.router", "l3.meter.project",
                           "l3.meter.label_router", "l3.meter.label_project"}
    assert events["l3.meter.label_router"]["resource_id"] == "router-a-label-L1"
    assert events["l3.meter.project"]["bytes"] == 64


def test_the_noop_driver_counts_and_reports_nothing(tmp_path: Path) -> None:
    conf = agent_conf(tmp_path, None, "h1", "driver = noop\n")
    notifier = RecordingNotifier()
    agent = MeteringAgent(conf, plugin_rpc=FakePlugin([router("a", "p1", "gw", [_lbl()])]),
                          notifier=notifier)
    agent.run_once()
    assert notifier.sent == []
    assert agent.configurations() == {"metering_driver": "noop", "measure_interval": 30,
                                      "report_interval": 300}


def test_an_unknown_driver_is_refused_naming_the_option(tmp_path: Path) -> None:
    conf = agent_conf(tmp_path, None, "h1", "driver = bogus\n")
    with pytest.raises(ValueError, match=r"\[DEFAULT\] driver"):
        MeteringAgent(conf, plugin_rpc=FakePlugin())


def test_cli_with_an_unknown_driver_is_a_configuration_error(tmp_path: Path) -> None:
    import subprocess
    import sys
    conf = tmp_path / "metering_agent.ini"
    conf.write_text("[DEFAULT]\nhost = h1\ndriver = bogus\n")
    done = subprocess.run([sys.executable, "-m", "neutrino.cmd.main", "agent", "metering",
                           "--config-file", str(conf)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2
    assert "[DEFAULT] driver" in done.stderr

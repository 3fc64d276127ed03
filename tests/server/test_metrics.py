"""``/metrics``: Prometheus' text format, counted across every process of a
server (two API workers and the RPC process here), for admins only, and
nothing served while ``[metrics] enabled`` is off. Agents count their
passes and serve their own when given a port."""
from __future__ import annotations

import re
import socket
from pathlib import Path
from typing import Iterator

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import Client, Server, free_port
from tests.rpc.bus import agent_conf, bus
from tests.rpc.conftest import fresh_vhost
from tests.rpc.test_state_reports import RecordingAgent, shown
from tests.waiting import until


def samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def value(found: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str,
          **labels: str) -> float:
    """The sum over the series of ``name`` whose labels include ``labels``."""
    wanted = set(labels.items())
    return sum(v for (n, ls), v in found.items() if n == name and wanted <= ls)


def scrape(url: str, **headers: str) -> requests.Response:
    return requests.get(url + "/metrics", headers=headers, timeout=30)


@pytest.fixture(scope="module")
def vhost() -> Iterator[str]:
    with fresh_vhost() as name:
        yield name


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, vhost: str) -> Iterator[Server]:
    server = Server(tmp_path_factory.mktemp("metrics"), workers=2,
                    extra=f"transport_url = {bus(vhost)}\nservice_plugins = "
                          "network_ip_availability\n[metrics]\nenabled = true\n"
                          "database_facts_cache_time = 0\n").start()
    yield server
    server.stop()


def test_a_worker_reuses_its_reading_of_the_database_while_it_is_fresh(
        tmp_path: Path) -> None:
    """Frequent scrapes read the database once per ``database_facts_cache_time``;
    requests are still counted at every scrape."""
    server = Server(tmp_path, workers=1, extra="service_plugins = network_ip_availability\n"
                    "[metrics]\nenabled = true\ndatabase_facts_cache_time = 3600\n").start()
    try:
        admin = Client(server.url)
        first = admin.post("/v2.0/networks", {"network": {"name": "seen"}})[1]["network"]
        assert admin.post("/v2.0/subnets", {"subnet": {
            "network_id": first["id"], "ip_version": 4, "cidr": "10.78.0.0/29"}})[0] == 201
        before = samples(scrape(server.url).text)
        later = admin.post("/v2.0/networks", {"network": {"name": "later"}})[1]["network"]
        assert admin.post("/v2.0/subnets", {"subnet": {
            "network_id": later["id"], "ip_version": 4, "cidr": "10.78.1.0/29"}})[0] == 201
        after = samples(scrape(server.url).text)
        assert value(after, "neutrino_network_ips_total", network_id=first["id"]) == 5
        assert value(after, "neutrino_network_ips_total", network_id=later["id"]) == 0
        assert (value(after, "neutrino_api_requests_total", method="POST",
                      route="/v2.0/networks")
                - value(before, "neutrino_api_requests_total", method="POST",
                        route="/v2.0/networks")) == 1
    finally:
        server.stop()


def test_requests_are_counted_by_route_and_status_across_the_workers(srv: Server) -> None:
    member = Client(srv.url, "metrics-p1")
    before = samples(scrape(srv.url).text)
    ids = [member.post("/v2.0/networks", {"network": {"name": f"m{i}"}})[1]["network"]["id"]
           for i in range(3)]
    for _ in range(5):  # new connections: both workers answer some
        assert requests.get(f"{srv.url}/v2.0/networks/{ids[0]}", timeout=10,
                            headers={"X-Project-Id": "metrics-p1", "X-Roles": "member",
                                     "Connection": "close"}).status_code == 200
    assert member.get("/v2.0/networks/" + "0" * 32)[0] == 404
    found = samples(scrape(srv.url).text)

    def grew(name: str, **labels: str) -> float:
        return value(found, name, **labels) - value(before, name, **labels)
    assert grew("neutrino_api_requests_total", method="POST", route="/v2.0/networks",
                status="201") == 3
    assert grew("neutrino_api_requests_total", method="GET", route="/v2.0/networks/{rid}",
                status="200") == 5
    assert grew("neutrino_api_requests_total", method="GET", route="/v2.0/networks/{rid}",
                status="404") == 1
    assert grew("neutrino_api_request_seconds_count", method="POST",
                route="/v2.0/networks") == 3
    assert grew("neutrino_db_statements_total", pool="writer", kind="insert") >= 3
    assert grew("neutrino_db_statements_total", pool="reader", kind="select") >= 6


def test_ip_availability_is_read_from_the_database_when_scraped(srv: Server) -> None:
    admin = Client(srv.url)
    net = admin.post("/v2.0/networks", {"network": {"name": "ipavail"}})[1]["network"]
    subnet = admin.post("/v2.0/subnets", {"subnet": {
        "network_id": net["id"], "ip_version": 4, "cidr": "10.77.0.0/29"}})[1]["subnet"]
    for _ in range(2):
        assert admin.post("/v2.0/ports", {"port": {"network_id": net["id"]}})[0] == 201
    found = samples(scrape(srv.url).text)
    assert value(found, "neutrino_network_ips_total", network_id=net["id"],
                 ip_version="4") == 5  # 10.77.0.2-6: the pool of a /29 without the gateway
    assert value(found, "neutrino_network_ips_used", network_id=net["id"],
                 network_name="ipavail") == 2
    assert subnet["gateway_ip"] == "10.77.0.1"


def test_agent_liveness_and_the_rpc_process_s_work_are_counted(
        srv: Server, vhost: str, tmp_path: Path) -> None:
    admin = Client(srv.url)
    agent = RecordingAgent(agent_conf(tmp_path, vhost, "host-metrics",
                                      "[AGENT]\nreport_interval = 0.5\n"))
    try:
        agent.register()
        agent.start_reporting()
        until(lambda: (shown(admin, "host-metrics") or {}).get("alive"))
        found = until(lambda: f if value(
            f := samples(scrape(srv.url).text), "neutrino_rpc_calls_total",
            method="report_state", outcome="ok") >= 2 else None, 30)
        assert value(found, "neutrino_agent_alive", host="host-metrics",
                     agent_type="Open vSwitch agent") == 1
    finally:
        agent.stop()


def test_only_an_admin_may_read_them(srv: Server) -> None:
    resp = scrape(srv.url, **{"X-Project-Id": "p1", "X-Roles": "member"})
    assert resp.status_code == 403
    assert resp.json()["NeutronError"]["type"] == "PolicyNotAuthorized"
    admin = scrape(srv.url)
    assert admin.status_code == 200
    assert admin.headers["Content-Type"].startswith("text/plain")


def test_without_metrics_enabled_there_is_no_metrics_route(tmp_path: Path) -> None:
    srv = Server(tmp_path).start()
    try:
        resp = scrape(srv.url)
        assert resp.status_code == 404
        assert "NeutronError" in resp.json()
    finally:
        srv.stop()


def test_an_agent_serves_its_own_metrics_on_its_port(tmp_path: Path, vhost: str) -> None:
    """A standalone agent process (``neutrino agent``) with ``agent_bind_port``."""
    import subprocess
    import sys
    port = free_port()
    conf = tmp_path / "agent.conf"
    conf.write_text(f"[DEFAULT]\nhost = metrics-meter\ntransport_url = {bus(vhost)}\n"
                    f"state_path = {tmp_path}\n[metrics]\nenabled = true\n"
                    f"agent_bind_port = {port}\n")
    proc = subprocess.Popen([sys.executable, "-m", "neutrino.cmd.main", "agent", "metering",
                             "--config-file", str(conf)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        def served() -> str | None:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    pass
            except OSError:
                return None
            return requests.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text
        text = until(served, 60)
        assert re.search(r"^# TYPE neutrino_agent_pass_seconds histogram$", text, re.M)
    finally:
        proc.terminate()
        proc.wait(30)

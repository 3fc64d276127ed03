"""The load-balancer agent's host adapter with real haproxy, in namespaces.

The VIP device is a veth into a Linux bridge (in a namespace of its own)
where the members' and a client's namespaces are plugged too: what is
under test is haproxy's side (the namespace, the addresses, the process,
its reloads and statistics), not the integration bridge (the fullstack
test has that).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest

from neutrino.agents.interface import InterfaceDriver
from neutrino.agents.loadbalancer import health, plan
from neutrino.agents.loadbalancer.linux import LinuxLbHost
from neutrino.plugins.lb_haproxy.cert_files import FileStore
from neutrino.resources.lb_graph import LoadBalancer
from tests.conftest import ROOT
from tests.fullstack.hosts import sh
from tests.lbhaproxy import backend, certs
from tests.lbhaproxy import graphs as g
from tests.waiting import wait_for

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("haproxy") is None or shutil.which("curl") is None,
    reason="needs root, haproxy and curl")
TLS_LISTENER = "22222222-2222-4222-8222-222222222223"
MEMBERS = {g.M1: "10.0.0.21", g.M2: "10.0.0.22", g.M3: "10.0.0.23"}


class VethDriver(InterfaceDriver):
    """Plugs a device as a veth whose peer is a port of the switch namespace's bridge."""

    def __init__(self, switch: str, prefix: str) -> None:
        self.switch, self.prefix = switch, prefix

    def plug(self, network_id: str, port_id: str, device_name: str, mac_address: str,
             namespace: str | None = None, mtu: int | None = None) -> None:
        assert namespace is not None
        if device_name in sh("ip", "-n", namespace, "link", "show", check=False).stdout:
            return
        peer = f"{self.prefix}v{port_id[:6]}"
        sh("ip", "link", "add", device_name, "netns", namespace, "type", "veth", "peer",
           "name", peer, "netns", self.switch)
        sh("ip", "-n", namespace, "link", "set", device_name, "address", mac_address, "up")
        sh("ip", "-n", self.switch, "link", "set", peer, "master", "br0", "up")

    def unplug(self, device_name: str, namespace: str | None = None) -> None:
        sh("ip", "-n", namespace or "", "link", "del", device_name, check=False)


class Lab:
    def __init__(self, tmp: Path) -> None:
        self.prefix = "b" + uuid.uuid4().hex[:4]
        self.tmp = tmp
        self.namespaces: list[str] = []
        self.procs: list[subprocess.Popen[bytes]] = []
        self.switch = self.netns("sw")
        sh("ip", "-n", self.switch, "link", "add", "br0", "type", "bridge")
        sh("ip", "-n", self.switch, "link", "set", "br0", "up")

    def netns(self, suffix: str) -> str:
        ns = f"{self.prefix}-{suffix}"
        sh("ip", "netns", "add", ns)
        sh("ip", "-n", ns, "link", "set", "lo", "up")
        self.namespaces.append(ns)
        return ns

    def node(self, suffix: str, address: str) -> str:
        """A namespace on the switch with ``address``/24."""
        ns = self.netns(suffix)
        peer = f"{self.prefix}n{suffix}"
        sh("ip", "link", "add", "eth0", "netns", ns, "type", "veth", "peer", "name", peer,
           "netns", self.switch)
        sh("ip", "-n", ns, "addr", "add", f"{address}/24", "dev", "eth0")
        sh("ip", "-n", ns, "link", "set", "eth0", "up")
        sh("ip", "-n", self.switch, "link", "set", peer, "master", "br0", "up")
        return ns

    def member(self, name: str, address: str) -> None:
        ns = self.node(name[:4], address)
        self.procs.append(subprocess.Popen(
            ["ip", "netns", "exec", ns, sys.executable, "-m", "tests.lbhaproxy.backend", name,
             "80", str(self.tmp)], cwd=str(ROOT), env={**os.environ, "PYTHONPATH": str(ROOT)}))

    def destroy(self) -> None:
        for proc in self.procs:
            proc.kill()
            proc.wait()
        for ns in reversed(self.namespaces):
            for pid in sh("ip", "netns", "pids", ns, check=False).stdout.split():
                sh("kill", "-9", pid, check=False)
            sh("ip", "netns", "del", ns, check=False)


def lb_payload(**changes: Any) -> dict[str, Any]:
    payload = g.payload()
    for pool in payload["loadbalancer"]["pools"]:
        for member in pool["members"]:
            member["address"] = MEMBERS[member["id"]]
    payload["loadbalancer"].update(changes)
    return payload


class Served:
    def __init__(self, lab: Lab, lb_host: LinuxLbHost, client: str) -> None:
        self.lab, self.lb_host, self.client = lab, lb_host, client

    def get(self, path: str, *flags: str) -> str:
        done = sh("ip", "netns", "exec", self.client, "curl", "-s", "-m", "5", *flags,
                  f"http://10.0.0.10{path}", check=False)
        return done.stdout

    def statuses(self, payload: dict[str, Any]) -> dict[str, str]:
        text = self.lb_host.stats(g.LB) or ""
        lb = LoadBalancer.from_dict(payload["loadbalancer"])
        return {s["id"]: s["operating_status"]
                for s in health.statuses(lb, health.parse_stat(text))}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("lbhost")
    lab = Lab(tmp)
    lb_host = LinuxLbHost(str(tmp / "lbaas"), VethDriver(lab.switch, lab.prefix), garps=0)
    try:
        for mid, address in MEMBERS.items():
            lab.member(f"m{mid[-1]}", address)
        client = lab.node("cl", "10.0.0.99")
        deployment = plan.deployment(lb_payload(), str(tmp / "lbaas" / g.LB))
        assert deployment is not None
        lb_host.build(deployment)
        yield Served(lab, lb_host, client)
    finally:
        lb_host.teardown(g.LB, None)
        lab.destroy()


def test_built_load_balancer_serves_its_members_round_robin(served: Served) -> None:
    assert wait_for(lambda: served.get("/").startswith("m"), 15), served.get("/", "-v")
    answers = {served.get("/").split()[0] for _ in range(6)}
    assert answers == {"m1", "m2"}


def test_l7_policies_send_static_to_the_other_pool_and_redirect(served: Served) -> None:
    assert served.get("/static/a.css").split()[0] == "m3"
    headers = served.get("/old/page", "-o", "/dev/null", "-D", "-")
    assert headers.startswith("HTTP/1.1 301")
    assert "location: http://example.com/new" in headers.lower()


def test_a_member_failing_its_health_check_gets_no_traffic_and_shows_error(
        served: Served, tmp_path_factory: pytest.TempPathFactory) -> None:
    payload = lb_payload()
    assert wait_for(lambda: served.statuses(payload).get(g.M2) == "ONLINE", 15)
    state = Path(served.lab.tmp)
    (state / "m2.sick").touch()
    try:
        assert wait_for(lambda: served.statuses(payload).get(g.M2) == "ERROR", 15)
        assert served.statuses(payload)[g.POOL] == "DEGRADED"
        assert {served.get("/").split()[0] for _ in range(6)} == {"m1"}
    finally:
        (state / "m2.sick").unlink()
    assert wait_for(lambda: served.statuses(payload).get(g.M2) == "ONLINE", 15)
    assert "m2" in {served.get("/").split()[0] for _ in range(6)}


def test_a_reload_keeps_a_long_download_flowing(served: Served) -> None:
    out = served.lab.tmp / "big"
    download = subprocess.Popen(
        ["ip", "netns", "exec", served.client, "curl", "-s", "-m", "30", "-o", str(out),
         "-w", "%{http_code} %{size_download}", "http://10.0.0.10/big"],
        stdout=subprocess.PIPE, text=True)
    time.sleep(1)  # under way
    changed = lb_payload()
    changed["loadbalancer"]["listeners"][0]["timeout_client_data"] = 40000
    deployment = plan.deployment(changed, str(served.lb_host.root / g.LB))
    assert deployment is not None
    served.lb_host.reload(deployment)
    observed = served.lb_host.observe()[g.LB]
    assert observed.config == deployment.config and observed.running
    result, _ = download.communicate(timeout=40)
    assert result == f"200 {backend.BIG_CHUNKS * backend.CHUNK}"
    assert served.get("/").startswith("m")  # the new worker serves


def test_statistics_count_the_listeners_traffic(served: Served) -> None:
    served.get("/")
    text = served.lb_host.stats(g.LB) or ""
    lb = LoadBalancer.from_dict(lb_payload()["loadbalancer"])
    stats = health.listener_stats(lb, health.parse_stat(text))[0]
    assert stats["total_connections"] >= 1 and stats["bytes_out"] > 0


def test_a_configuration_haproxy_refuses_leaves_the_old_one_serving(served: Served) -> None:
    deployment = plan.deployment(lb_payload(), str(served.lb_host.root / g.LB))
    assert deployment is not None
    before = served.lb_host.observe()[g.LB].config
    broken = plan.Deployment(**{**deployment.__dict__, "config": deployment.config + "bogus\n"})
    with pytest.raises(RuntimeError):
        served.lb_host.reload(broken)
    assert served.lb_host.observe()[g.LB].config == before
    assert served.get("/").startswith("m")


def test_terminated_https_serves_the_stores_certificate(served: Served) -> None:
    store = served.lab.tmp / "certs"
    certs.store(store, "c1", "www.example.com", passphrase=b"pw")
    tls = dict(g.graph()["listeners"][0], id=TLS_LISTENER, protocol="TERMINATED_HTTPS",
               protocol_port=443, default_tls_container_ref="http://kms/containers/c1",
               l7policies=[], insert_headers={"X-Forwarded-Proto": "true"})
    payload = lb_payload()
    payload["loadbalancer"]["listeners"].append(tls)
    listener = LoadBalancer.from_dict(payload["loadbalancer"]).listener(TLS_LISTENER)
    assert listener is not None
    payload["certificates"] = {TLS_LISTENER: FileStore(str(store)).for_listener(listener)}
    deployment = plan.deployment(payload, str(served.lb_host.root / g.LB))
    assert deployment is not None
    served.lb_host.reload(deployment)

    def https() -> subprocess.CompletedProcess[str]:
        return sh("ip", "netns", "exec", served.client, "curl", "-s", "-S", "-m", "5",
                  "--cacert", str(store / "c1.crt"), "--resolve",
                  "www.example.com:443:10.0.0.10", "https://www.example.com/x", check=False)
    assert wait_for(lambda: https().stdout.startswith("m"), 10), https().stderr
    assert served.get("/").startswith("m")  # the HTTP listener still serves


def test_teardown_leaves_no_namespace_process_or_file(served: Served) -> None:
    pid = served.lb_host._haproxy(g.LB).pid()
    assert pid is not None
    served.lb_host.teardown(g.LB, None)
    assert plan.namespace(g.LB) not in sh("ip", "netns", "list").stdout
    assert not (served.lb_host.root / g.LB).exists()
    assert served.lb_host.observe() == {}
    assert wait_for(lambda: not Path(f"/proc/{pid}").exists(), 10)

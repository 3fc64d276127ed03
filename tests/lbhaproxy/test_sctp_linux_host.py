"""SCTP load balancing through the same nftables path as UDP, for real, on a
kernel without SCTP sockets: a client's crafted INIT (raw socket) reaches the
member's namespace through the load balancer's DNAT (an nft rule there
counts it) and the member's INIT ACK comes back from the VIP; the SCTP
health check passes against the member and fails once it is gone."""
from __future__ import annotations

import os
import subprocess
import sys
import uuid
from typing import Any, Iterator

import pytest

from neutrino.agents.loadbalancer import plan, probe, udp_health
from neutrino.agents.loadbalancer.linux import LinuxLbHost
from neutrino.resources.lb_graph import LoadBalancer
from tests.conftest import ROOT
from tests.fullstack.hosts import sh
from tests.lbhaproxy import graphs as g
from tests.lbhaproxy.test_linux_host import Lab, VethDriver, pytestmark  # noqa: F401

PORT = 38412
MEMBER = "10.0.0.41"


def sctp_payload(lb_id: str) -> dict[str, Any]:
    """Only an SCTP listener, its pool's one member checked by an SCTP monitor."""
    payload = g.payload()
    data = g.udp_graph(monitor="SCTP")
    data["id"] = lb_id
    data["listeners"] = data["listeners"][-1:]
    data["listeners"][0].update(protocol="SCTP", protocol_port=PORT)
    data["pools"] = data["pools"][-1:]
    data["pools"][0].update(protocol="SCTP", members=[g.member(
        g.U1, MEMBER, pool=g.UDP_POOL, protocol_port=PORT)])
    payload["loadbalancer"] = data
    return payload


class SctpLab:
    def __init__(self, lab: Lab, lb_host: LinuxLbHost, lb_id: str) -> None:
        self.lab, self.lb_host, self.lb_id = lab, lb_host, lb_id
        self.client = lab.node("cl", "10.0.0.97")
        self.member = lab.node("s1", MEMBER)
        subprocess.run(["ip", "netns", "exec", self.member, "nft", "-f", "-"], check=True,
                       text=True, input="table inet seen { chain inits { type filter hook "
                       f"input priority 0; sctp dport {PORT} counter\n}}\n}}\n")
        self.responder: subprocess.Popen[bytes] | None = None

    def respond(self) -> None:
        self.responder = subprocess.Popen(
            ["ip", "netns", "exec", self.member, sys.executable, "-m",
             "tests.lbhaproxy.sctp_responder", str(PORT)],
            cwd=str(ROOT), env={**os.environ, "PYTHONPATH": str(ROOT)})
        self.lab.procs.append(self.responder)

    def inits_seen(self) -> int:
        listed = sh("ip", "netns", "exec", self.member, "nft", "list", "table", "inet",
                    "seen").stdout
        return int(listed.split("counter packets ")[1].split()[0])

    def handshake_from_client(self) -> bool:
        code = ("import sys; from neutrino.agents.loadbalancer.probe import sctp_check; "
                f"sys.exit(0 if sctp_check('10.0.0.10', {PORT}, 2.0) else 1)")
        return sh("ip", "netns", "exec", self.client, sys.executable, "-c", code,
                  check=False).returncode == 0


@pytest.fixture(scope="module")
def sctp_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SctpLab]:
    tmp = tmp_path_factory.mktemp("lbsctp")
    lab = Lab(tmp)
    lb_host = LinuxLbHost(str(tmp / "lbaas"), VethDriver(lab.switch, lab.prefix), garps=0)
    lb_id = str(uuid.uuid4())
    try:
        served = SctpLab(lab, lb_host, lb_id)
        want = plan.deployment(sctp_payload(lb_id), str(lb_host.root / lb_id))
        assert want is not None and f"sctp dport {PORT}" in want.udp
        lb_host.build(want)
        yield served
    finally:
        lb_host.teardown(lb_id, None)
        lab.destroy()


def test_a_crafted_init_reaches_the_member_through_the_vip_and_its_answer_returns(
        sctp_lab: SctpLab) -> None:
    assert sctp_lab.inits_seen() == 0
    assert not sctp_lab.handshake_from_client()  # nobody answers yet
    assert sctp_lab.inits_seen() == 1  # but the INIT got there, DNATed
    sctp_lab.respond()
    assert sctp_lab.handshake_from_client() or sctp_lab.handshake_from_client()
    assert sctp_lab.inits_seen() >= 2


def test_the_sctp_check_passes_while_the_member_answers(sctp_lab: SctpLab) -> None:
    lb = LoadBalancer.from_dict(sctp_payload(sctp_lab.lb_id)["loadbalancer"])
    checks = udp_health.due(lb, {}, 0.0)
    assert [c.type for c in checks] == ["SCTP"]
    if sctp_lab.responder is None:
        sctp_lab.respond()
    assert sctp_lab.lb_host.probe(sctp_lab.lb_id, checks) == {g.U1: True}
    assert sctp_lab.responder is not None
    sctp_lab.responder.kill()
    sctp_lab.responder.wait()
    assert sctp_lab.lb_host.probe(sctp_lab.lb_id, checks) == {g.U1: False}


def test_the_checksum_is_crc32c() -> None:
    assert probe.crc32c(b"123456789") == 0xE3069283

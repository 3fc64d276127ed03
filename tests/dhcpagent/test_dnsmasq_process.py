"""dnsmasq started in a network's namespace, for real: born there from a
thread of the agent that entered it (no ``ip netns exec``), so it shares the
agent's mount namespace, and a namespace that is not there fails the start
with the process error the driver reports. Root only."""
from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path
from typing import Iterator

import pytest

from neutrino.agents.dhcp.process import DnsmasqError, DnsmasqProcess

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (namespaces)")


@pytest.fixture
def namespace() -> Iterator[str]:
    name = f"dmp-{uuid.uuid4().hex[:8]}"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], check=False)


def idle_dnsmasq(pid_file: Path) -> list[str]:
    """A dnsmasq serving nothing (no DNS port, no DHCP range)."""
    return ["dnsmasq", f"--pid-file={pid_file}", "--port=0", "--no-resolv", "--no-hosts",
            "--conf-file=/dev/null", "--leasefile-ro"]


def test_dnsmasq_runs_in_the_network_namespace_and_the_agents_mount_namespace(
        tmp_path: Path, namespace: str) -> None:
    proc = DnsmasqProcess(str(tmp_path / "pid"), namespace)
    proc.start(idle_dnsmasq(tmp_path / "pid"))
    try:
        pid = proc.pid
        assert pid is not None
        assert os.stat(f"/proc/{pid}/ns/net").st_ino == os.stat(f"/run/netns/{namespace}").st_ino
        assert os.readlink(f"/proc/{pid}/ns/mnt") == os.readlink("/proc/self/ns/mnt")
    finally:
        proc.stop()
    assert proc.pid is None


def test_a_namespace_not_there_fails_the_start(tmp_path: Path) -> None:
    proc = DnsmasqProcess(str(tmp_path / "pid"), f"dmp-missing-{uuid.uuid4().hex[:8]}")
    with pytest.raises(DnsmasqError, match="dnsmasq failed"):
        proc.start(idle_dnsmasq(tmp_path / "pid"))

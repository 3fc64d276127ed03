"""Gratuitous ARPs for a router's new addresses: sent several times, so a
neighbour that asked while the router's device could not yet be reached
(a port on br-int drops everything until the OVS agent tags it) learns the
address from a later one instead of waiting for its own next probe."""
from __future__ import annotations

import subprocess
import sys
import uuid
from typing import Iterator

import pytest

from neutrino.agents.l3 import garp
from tests.l3host.fabric import need_root, sh

COUNT_ARPS = (
    "import socket,sys,time\n"
    "s=socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0806))\n"
    "s.bind((sys.argv[1], 0)); s.settimeout(0.2); n=0; end=time.monotonic()+float(sys.argv[2])\n"
    "print('ready', flush=True)\n"
    "while time.monotonic() < end:\n"
    "    try:\n"
    "        f=s.recv(100)\n"
    "    except socket.timeout:\n"
    "        continue\n"
    "    n += f[20:22] == b'\\x00\\x01' and f[28:32] == f[38:42] == socket.inet_aton(sys.argv[3])\n"
    "print(n)\n")


@pytest.fixture
def pair() -> Iterator[tuple[str, str]]:
    need_root()
    prefix = "ga" + uuid.uuid4().hex[:6]
    router, neighbour = f"{prefix}-r", f"{prefix}-n"
    try:
        for ns in (router, neighbour):
            sh("ip", "netns", "add", ns)
        sh("ip", "link", "add", "qg-x", "netns", router, "type", "veth",
           "peer", "name", "eth0", "netns", neighbour)
        sh("ip", "-n", router, "addr", "add", "192.0.2.10/24", "dev", "qg-x")
        sh("ip", "-n", neighbour, "addr", "add", "192.0.2.1/24", "dev", "eth0")
        yield router, neighbour
    finally:
        for ns in (router, neighbour):
            sh("ip", "netns", "del", ns, check=False)


def _announce(router: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(["ip", "netns", "exec", router, sys.executable, "-m",
                             "neutrino.agents.l3.garp", "qg-x", "192.0.2.10"])


def test_a_new_address_is_announced_as_often_as_the_schedule_says(
        pair: tuple[str, str]) -> None:
    router, neighbour = pair
    for ns, dev in ((router, "qg-x"), (neighbour, "eth0")):
        sh("ip", "-n", ns, "link", "set", dev, "up")
    listener = subprocess.Popen(
        ["ip", "netns", "exec", neighbour, sys.executable, "-c", COUNT_ARPS, "eth0",
         str(garp.SCHEDULE[-1] + 2), "192.0.2.10"], stdout=subprocess.PIPE, text=True)
    try:
        assert listener.stdout is not None and listener.stdout.readline() == "ready\n"
        _announce(router).wait(30)
        out, _ = listener.communicate(timeout=30)
    finally:
        listener.kill()
    assert int(out) == len(garp.SCHEDULE) > 1


def test_a_neighbour_that_asked_before_the_link_was_up_learns_it_from_a_later_arp(
        pair: tuple[str, str]) -> None:
    """The neighbour's first ARP goes unanswered (the router's side is down,
    as a port not yet tagged on br-int); the link comes up after the first
    announcement was lost, and a later one resolves the neighbour's entry."""
    router, neighbour = pair
    sh("ip", "-n", neighbour, "link", "set", "eth0", "up")
    sh("ip", "netns", "exec", neighbour, "ping", "-c", "1", "-W", "0.05", "192.0.2.10",
       check=False)
    assert "INCOMPLETE" in sh("ip", "-n", neighbour, "neigh", "show", "192.0.2.10").stdout
    announcing = _announce(router)
    try:
        # the first announcement is sent on a link that is still down
        sh("ip", "netns", "exec", router, sys.executable, "-c",
           "import time; time.sleep(%s)" % (garp.SCHEDULE[1] / 2))
        sh("ip", "-n", router, "link", "set", "qg-x", "up")
        announcing.wait(30)
    finally:
        announcing.kill()
    entry = sh("ip", "-n", neighbour, "neigh", "show", "192.0.2.10").stdout
    mac = sh("ip", "-n", router, "-br", "link", "show", "qg-x").stdout.split()[2]
    assert f"lladdr {mac}" in entry, entry

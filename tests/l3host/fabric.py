"""A tiny host for real-packet tests: one "fabric" namespace with a Linux bridge per
network, veth-plugged router devices (an InterfaceDriver) and "instances".

Every name starts with the test's own prefix, and ``cleanup`` removes all of
them, so a failed test leaves nothing behind.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid

import pytest

from neutrino.agents.interface import InterfaceDriver

ECHO_PEER = ("import socket,sys\n"
             "s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
             "s.bind(('0.0.0.0', int(sys.argv[1]))); s.listen(16)\n"
             "while True:\n"
             "    c,a=s.accept(); c.sendall(a[0].encode()); c.close()\n")
ASK = ("import socket,sys\n"
       "s=socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=2)\n"
       "print(s.recv(100).decode())\n")


def need_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces)")
    for tool in ("ip", "nft"):
        if shutil.which(tool) is None:
            pytest.skip(f"needs {tool}")


def sh(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    if check and done.returncode:
        raise AssertionError(f"{' '.join(argv)}: {done.stderr}")
    return done


def namespaces() -> list[str]:
    return [n["name"] for n in json.loads(sh("ip", "-j", "netns", "list").stdout or "[]")]


class Fabric(InterfaceDriver):
    """Linux bridges (one per network id) in one namespace; devices are veth pairs."""

    def __init__(self) -> None:
        self.prefix = "l3t" + uuid.uuid4().hex[:5]
        self.ns = f"{self.prefix}-fab"
        self.extra_ns: list[str] = []
        self.servers: list[subprocess.Popen[bytes]] = []
        self._bridges: dict[str, str] = {}
        sh("ip", "netns", "add", self.ns)
        sh("ip", "-n", self.ns, "link", "set", "lo", "up")

    def bridge(self, network_id: str) -> str:
        if network_id not in self._bridges:
            name = f"br{len(self._bridges)}"
            sh("ip", "-n", self.ns, "link", "add", name, "type", "bridge")
            sh("ip", "-n", self.ns, "link", "set", name, "up")
            self._bridges[network_id] = name
        return self._bridges[network_id]

    def _connect(self, network_id: str, device: str, ns: str, mac: str,
                 mtu: int | None) -> None:
        peer = "p" + uuid.uuid4().hex[:12]
        sh("ip", "link", "add", device, "netns", ns, "type", "veth",
           "peer", "name", peer, "netns", self.ns)
        sh("ip", "-n", ns, "link", "set", device, "address", mac)
        if mtu:
            sh("ip", "-n", ns, "link", "set", device, "mtu", str(mtu))
            sh("ip", "-n", self.ns, "link", "set", peer, "mtu", str(mtu))
        sh("ip", "-n", self.ns, "link", "set", peer, "master", self.bridge(network_id), "up")
        sh("ip", "-n", ns, "link", "set", device, "up")

    # -- InterfaceDriver -------------------------------------------------------------

    def plug(self, network_id: str, port_id: str, device_name: str, mac_address: str,
             namespace: str | None = None, mtu: int | None = None) -> None:
        assert namespace
        if namespace not in namespaces():
            sh("ip", "netns", "add", namespace)
        if sh("ip", "-n", namespace, "link", "show", device_name, check=False).returncode == 0:
            return
        self._connect(network_id, device_name, namespace, mac_address, mtu)

    def unplug(self, device_name: str, namespace: str | None = None) -> None:
        sh("ip", "-n", str(namespace), "link", "del", device_name, check=False)

    # -- the rest of the world -------------------------------------------------------

    def host(self, name: str, network_id: str, cidr: str | None, gateway: str | None,
             mac: str) -> str:
        """An instance or external host: a namespace with eth0 on the network
        (without ``cidr``: IPv6 addresses and routes from router advertisements)."""
        ns = f"{self.prefix}-{name}"
        sh("ip", "netns", "add", ns)
        self.extra_ns.append(ns)
        sh("ip", "-n", ns, "link", "set", "lo", "up")
        if cidr is None:
            sh("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.default.accept_ra=2",
               "net.ipv6.conf.default.autoconf=1")
        self._connect(network_id, "eth0", ns, mac, None)
        if cidr is not None:
            sh("ip", "-n", ns, "addr", "add", cidr, "dev", "eth0")
        if gateway:
            sh("ip", "-n", ns, "route", "add", "default", "via", gateway)
        return ns

    def serve_peer_address(self, ns: str, port: int) -> None:
        """A TCP server in ``ns`` that answers each client with the client's address."""
        self.servers.append(subprocess.Popen(
            ["ip", "netns", "exec", ns, sys.executable, "-c", ECHO_PEER, str(port)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

    def seen_as(self, ns: str, address: str, port: int) -> str | None:
        """Connect from ``ns``: the source address the server saw, or None."""
        for _ in range(10):
            done = sh("ip", "netns", "exec", ns, sys.executable, "-c", ASK, address,
                      str(port), check=False)
            if done.returncode == 0:
                return done.stdout.strip()
            if "refused" not in done.stderr:  # timeouts/unreachable: no need to retry long
                return None
            import time
            time.sleep(0.2)  # the server is still starting
        return None

    def pings(self, ns: str, address: str) -> bool:
        for _ in range(3):
            if sh("ip", "netns", "exec", ns, "ping", "-c1", "-W1", address,
                  check=False).returncode == 0:
                return True
        return False

    def cleanup(self) -> None:
        for proc in self.servers:
            proc.kill()
            proc.wait()
        for ns in namespaces():
            if ns.startswith(self.prefix):
                sh("ip", "netns", "delete", ns, check=False)

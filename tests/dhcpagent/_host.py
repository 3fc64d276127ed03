"""Root-only helpers: an emulated hypervisor namespace with client namespaces
on a network's bridge, and busybox udhcpc as the DHCP client."""
from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from neutrino.agents import iproute
from neutrino.agents.bridge_interface import bridge_name

needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or not all(shutil.which(t) for t in ("ip", "dnsmasq", "busybox")),
    reason="needs root, ip, dnsmasq and busybox")

SCRIPT = """#!/bin/sh
case "$1" in bound|renew) echo "ip=$ip router=$router mtu=$mtu" > "$OUT" ;; esac
exit 0
"""


class Host:
    """An emulated hypervisor: a namespace holding the bridges and the host
    ends of every veth, so nothing lands in the machine's own namespace."""

    def __init__(self) -> None:
        self.tag = uuid.uuid4().hex[:6]
        self.ns = f"dhcpt-h-{self.tag}"
        self.clients: list[str] = []
        iproute.ensure_namespace(self.ns)

    def client(self, mac: str, network_id: str) -> str:
        ns = f"dhcpt-c{len(self.clients)}-{self.tag}"
        tap = f"dtc{len(self.clients)}{self.tag}"
        iproute.ensure_namespace(ns)
        self.clients.append(ns)
        iproute.ip("link", "add", tap, "type", "veth", "peer", "name", "eth0", "netns", ns,
                   namespace=self.ns)
        iproute.ip("link", "set", tap, "master", bridge_name(network_id), "up",
                   namespace=self.ns)
        iproute.ip("link", "set", "eth0", "address", mac, "up", namespace=ns)
        return ns

    def remove(self) -> None:
        for ns in self.clients + [self.ns]:
            iproute.delete_namespace(ns)


def dhcp(client_ns: str, tmp: Path, tries: int = 8) -> dict[str, str]:
    """Run udhcpc once in ``client_ns``; what the server offered."""
    script, out = tmp / "udhcpc.sh", tmp / f"{client_ns}.lease"
    script.write_text(SCRIPT)
    script.chmod(0o755)
    subprocess.run(["ip", "netns", "exec", client_ns, "env", f"OUT={out}", "busybox",
                    "udhcpc", "-i", "eth0", "-f", "-q", "-n", "-t", str(tries), "-T", "1",
                    "-O", "mtu", "-s", str(script)], capture_output=True, timeout=60)
    if not out.exists():
        return {}
    return dict(kv.split("=", 1) for kv in out.read_text().split())

"""Root-only helpers: an emulated hypervisor namespace with client namespaces
on a network's bridge, busybox udhcpc as the DHCP client and ISC dhclient
as the DHCPv6 one (busybox has no udhcpc6 on Debian)."""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import time
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
        # No duplicate address detection: a tentative link-local address
        # cannot be bound, and dhclient -6 would fail until DAD is over.
        iproute.netns_exec(ns, "sysctl", "-qw", "net.ipv6.conf.eth0.accept_dad=0")
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


needs_dhclient = pytest.mark.skipif(not shutil.which("dhclient"),
                                    reason="needs dhclient (Debian isc-dhcp-client)")

# dhclient runs its script with an environment of its own: the output file
# is written into the script.
SCRIPT6 = """#!/bin/sh
case "$reason" in BOUND6|RENEW6|REBIND6|INFORM6)
  printf 'ip=%s\\ndns=%s\\ndomain=%s\\n' "$new_ip6_address" "$new_dhcp6_name_servers" \\
    "$new_dhcp6_domain_search" > {out}.tmp && mv {out}.tmp {out} ;; esac
exit 0
"""

# What an instance asks for (the machine's /etc/dhcp/dhclient.conf is not read).
CONF6 = "request dhcp6.name-servers, dhcp6.domain-search;\n"


def dhcp6(client_ns: str, tmp: Path, stateless: bool = False,
          timeout: float = 15) -> dict[str, list[str]]:
    """Run dhclient -6 in ``client_ns`` until it is answered or ``timeout``
    passes: a Solicit for an address, or (``stateless``) an
    Information-Request for options only. What the server gave, each value a
    list (``ip``, ``dns``, ``domain``); {} when nothing answered."""
    script, out = tmp / f"{client_ns}.sh", tmp / f"{client_ns}.lease6"
    conf = tmp / "dhclient6.conf"
    conf.write_text(CONF6)
    script.write_text(SCRIPT6.replace("{out}", shlex.quote(str(out))))
    script.chmod(0o755)
    out.unlink(missing_ok=True)
    cmd = ["ip", "netns", "exec", client_ns, "dhclient", "-6", "-d",
           *(["-S"] if stateless else []), "-cf", str(conf), "-sf", str(script),
           "-lf", str(tmp / f"{client_ns}.leases"), "-pf", str(tmp / f"{client_ns}.pid"),
           "eth0"]
    with open(tmp / f"{client_ns}.log", "w") as log:  # dhclient's account, for failures
        proc = subprocess.Popen(cmd, stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + timeout
        while not out.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    if not out.exists():
        return {}
    answer = dict(line.split("=", 1) for line in out.read_text().splitlines())
    return {k: v.split() for k, v in answer.items()}

"""The host side of routers: namespaces, addresses, routes and nft, through ``ip``/``nft``.

One thin adapter: each method is one question or one change, run as a
command (``ip -j`` for reads, so the output is JSON and not scraped). Every
command goes through ``run`` so tests and logs see exactly what was asked.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from neutrino.agents import netns
from neutrino.agents.l3 import model

LOG = logging.getLogger(__name__)


class CommandError(RuntimeError):
    def __init__(self, argv: list[str], returncode: int, stderr: str) -> None:
        super().__init__(f"{' '.join(argv)} failed ({returncode}): {stderr.strip()}")
        self.argv, self.returncode, self.stderr = argv, returncode, stderr


def run(argv: list[str], stdin: str | None = None, check: bool = True) -> str:
    LOG.debug("run: %s", " ".join(argv))
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=60)
    if check and done.returncode != 0:
        raise CommandError(argv, done.returncode, done.stderr)
    return done.stdout


NETNS_DIR = "/run/netns"  # where ``ip netns`` keeps the namespaces it names


class LinuxHost:
    """Namespaces and what is inside them, one router at a time (routers
    may be worked on from several threads at once, never one router from two)."""

    def namespaces(self) -> list[str]:
        """Read from ``ip netns``'s directory, not by running it: a full sync
        asks for every router, and a process each was a large share of it."""
        try:
            return sorted(n for n in os.listdir(NETNS_DIR) if not n.startswith("."))
        except FileNotFoundError:
            return []

    def ensure_namespace(self, ns: str) -> None:
        if not os.path.exists(os.path.join(NETNS_DIR, ns)):
            run(["ip", "netns", "add", ns])
            run(["ip", "-n", ns, "link", "set", "lo", "up"])

    def sysctl(self, ns: str, settings: dict[str, str]) -> None:
        """Several ``net.`` settings of ``ns``, written to its
        ``/proc/sys/net`` by a thread that enters it (``netns.run_in``): no
        process, where ``ip netns exec … sysctl`` took two a router."""
        if not settings:
            return
        LOG.debug("sysctl in %s: %s", ns, settings)
        try:
            netns.write_sysctls(ns, settings)
        except OSError as exc:
            raise CommandError(["sysctl", "-w", *(f"{k}={v}" for k, v in settings.items()),
                                f"(in {ns})"], 1, str(exc)) from exc

    def batch(self, ns: str, commands: list[str]) -> None:
        """``ip`` commands (without ``ip``) run in ``ns`` by one ``ip -batch``,
        in order; the first that fails stops the rest and raises."""
        if commands:
            run(["ip", "-n", ns, "-batch", "-"], stdin="".join(f"{c}\n" for c in commands))

    def all_addresses(self, ns: str) -> dict[str, set[str]]:
        """Each device's global addresses (``addresses``), all in one read."""
        out = run(["ip", "-j", "-n", ns, "addr", "show"])
        found: dict[str, set[str]] = {}
        for link in json.loads(out or "[]"):
            found[link["ifname"]] = {f"{a['local']}/{a['prefixlen']}"
                                     for a in link.get("addr_info", ())
                                     if a.get("scope") == "global"}
        return found

    def delete_namespace(self, ns: str) -> None:
        if ns in self.namespaces():
            run(["ip", "netns", "delete", ns])

    def enable_forwarding(self, ns: str) -> None:
        self.sysctl(ns, {"net.ipv4.ip_forward": "1", "net.ipv6.conf.all.forwarding": "1"})

    def disable_ipv6(self, ns: str, devices: list[str]) -> None:
        if not devices:
            return
        self.sysctl(ns, {f"net.ipv6.conf.{d}.disable_ipv6": "1" for d in devices})

    @staticmethod
    def has_ipv6() -> bool:
        return Path("/proc/sys/net/ipv6").exists()

    def set_accept_ra(self, ns: str, device: str, value: int) -> None:
        if not self.has_ipv6():
            return  # a kernel without IPv6: nothing to accept
        self.sysctl(ns, {f"net.ipv6.conf.{device}.accept_ra": str(value)})

    def links(self, ns: str) -> list[str]:
        return list(self.mtus(ns))

    def mtus(self, ns: str) -> dict[str, int]:
        """Each device of the namespace with its MTU."""
        out = run(["ip", "-j", "-n", ns, "link", "show"])
        return {link["ifname"]: link.get("mtu", 0) for link in json.loads(out or "[]")}

    def set_mtu(self, ns: str, device: str, mtu: int) -> None:
        run(["ip", "-n", ns, "link", "set", device, "mtu", str(mtu)])

    @staticmethod
    def address_command(verb: str, device: str, cidr: str) -> str:
        """An ``add``/``del`` of ``cidr`` on ``device`` as a ``batch`` line."""
        extra = (" brd +" if ":" not in cidr else " nodad") if verb == "add" else ""
        return f"addr {verb} {cidr}{extra} dev {device}"

    @staticmethod
    def route_command(destination: str, nexthop: str, device: str | None = None,
                      onlink: bool = False) -> str:
        """A ``route replace`` as a ``batch`` line (``ip`` takes the family from the next hop)."""
        return (f"route replace {destination} via {nexthop}"
                + (f" dev {device}" if device else "") + (" onlink" if onlink else ""))

    def addresses(self, ns: str, device: str) -> set[str]:
        """Global addresses as ``ip/prefixlen`` (link-local ones are the kernel's)."""
        out = run(["ip", "-j", "-n", ns, "addr", "show", "dev", device])
        found = set()
        for link in json.loads(out or "[]"):
            for addr in link.get("addr_info", ()):
                if addr.get("scope") == "global":
                    found.add(f"{addr['local']}/{addr['prefixlen']}")
        return found

    def add_address(self, ns: str, device: str, cidr: str) -> None:
        extra = ["brd", "+"] if ":" not in cidr else ["nodad"]
        run(["ip", "-n", ns, "addr", "add", cidr, *extra, "dev", device])

    def delete_address(self, ns: str, device: str, cidr: str) -> None:
        run(["ip", "-n", ns, "addr", "del", cidr, "dev", device])

    def gateway_routes(self, ns: str, version: int) -> list[dict[str, Any]]:
        """Routes through a next hop in the main table (the kernel's on-link
        routes for the devices' own subnets, and the IPv6 default routes it
        learns from router advertisements, are not ours to manage)."""
        out = run(["ip", "-j", f"-{version}", "-n", ns, "route", "show", "table", "main"])
        return [r for r in json.loads(out or "[]")
                if r.get("gateway") and r.get("protocol") != "ra"]

    def replace_route(self, ns: str, destination: str, nexthop: str,
                      device: str | None = None, onlink: bool = False) -> None:
        argv = ["ip", "-n", ns, "route", "replace", destination, "via", nexthop]
        if device:
            argv += ["dev", device]
        if onlink:
            argv.append("onlink")
        run(argv)

    def delete_route(self, ns: str, destination: str, nexthop: str) -> None:
        run(["ip", "-n", ns, "route", "del", destination, "via", nexthop], check=False)

    # -- ``dvr``: permanent neighbours, policy routing, the rfp-/fpr- pair ---------

    def permanent_neighbours(self, ns: str) -> set[tuple[str, str, str]]:
        """(device, address, MAC) of the namespace's permanent IPv4 neighbours."""
        out = run(["ip", "-j", "-4", "-n", ns, "neigh", "show", "nud", "permanent"])
        return {(n["dev"], n["dst"], n.get("lladdr", "")) for n in json.loads(out or "[]")}

    def replace_neighbour(self, ns: str, device: str, address: str, mac: str) -> None:
        run(["ip", "-n", ns, "neigh", "replace", address, "lladdr", mac, "dev", device,
             "nud", "permanent"])

    def delete_neighbour(self, ns: str, device: str, address: str) -> None:
        run(["ip", "-n", ns, "neigh", "del", address, "dev", device], check=False)

    def rules(self, ns: str) -> set[tuple[str, int, int]]:
        """(source, table, priority) of the IPv4 rules that look up a table of
        their own (not the kernel's local, main and default)."""
        out = run(["ip", "-j", "-4", "-n", ns, "rule", "show"])
        found = set()
        for rule in json.loads(out or "[]"):
            table = str(rule.get("table", ""))
            if table.isdigit() and rule.get("src"):
                src = rule["src"] if "/" in rule["src"] or rule.get("srclen") is None else (
                    f"{rule['src']}/{rule['srclen']}")
                if "/" not in src:
                    src += "/32"
                found.add((src, int(table), int(rule.get("priority", 0))))
        return found

    def add_rule(self, ns: str, source: str, table: int, priority: int) -> None:
        run(["ip", "-4", "-n", ns, "rule", "add", "from", source, "lookup", str(table),
             "priority", str(priority)])

    def delete_rule(self, ns: str, source: str, table: int, priority: int) -> None:
        run(["ip", "-4", "-n", ns, "rule", "del", "from", source, "lookup", str(table),
             "priority", str(priority)], check=False)

    def replace_table_route(self, ns: str, table: int, nexthop: str, device: str) -> None:
        run(["ip", "-4", "-n", ns, "route", "replace", "default", "via", nexthop, "dev",
             device, "table", str(table)])

    def flush_table(self, ns: str, table: int) -> None:
        run(["ip", "-4", "-n", ns, "route", "flush", "table", str(table)], check=False)

    def host_routes(self, ns: str, device: str) -> set[tuple[str, str]]:
        """(destination, next hop) of the routes through ``device``."""
        out = run(["ip", "-j", "-4", "-n", ns, "route", "show", "dev", device])
        return {(r["dst"] if "/" in r["dst"] else r["dst"] + "/32", r["gateway"])
                for r in json.loads(out or "[]") if r.get("gateway")}

    def add_veth_pair(self, ns: str, name: str, peer_ns: str, peer: str) -> None:
        """A veth pair, ``name`` in ``ns`` and ``peer`` in ``peer_ns``, both up."""
        run(["ip", "-n", ns, "link", "add", name, "type", "veth", "peer", "name", peer,
             "netns", peer_ns])
        run(["ip", "-n", ns, "link", "set", name, "up"])
        run(["ip", "-n", peer_ns, "link", "set", peer, "up"])

    def set_proxy_arp(self, ns: str, device: str) -> None:
        self.sysctl(ns, {f"net.ipv4.conf.{device}.proxy_arp": "1"})

    def set_proxy_ndp(self, ns: str, device: str, on: bool) -> None:
        self.sysctl(ns, {f"net.ipv6.conf.{device}.proxy_ndp": str(int(on))})

    def proxy_neighbours(self, ns: str, device: str) -> set[str]:
        """The addresses ``device`` answers neighbour solicitations for."""
        out = run(["ip", "-6", "-n", ns, "neigh", "show", "proxy", "dev", device])
        return {line.split()[0] for line in out.splitlines() if line.strip()}

    def add_proxy_neighbour(self, ns: str, device: str, address: str) -> None:
        run(["ip", "-6", "-n", ns, "neigh", "replace", "proxy", address, "dev", device])

    def delete_proxy_neighbour(self, ns: str, device: str, address: str) -> None:
        run(["ip", "-6", "-n", ns, "neigh", "del", "proxy", address, "dev", device],
            check=False)

    def nft(self, ns: str, script: str) -> None:
        run(["ip", "netns", "exec", ns, "nft", "-f", "-"], stdin=script)

    def reset_tc(self, ns: str, device: str) -> None:
        """No root or ingress qdisc of ours on the device (absent is fine)."""
        for parent in ("root", "ingress"):
            run(["ip", "netns", "exec", ns, "tc", "qdisc", "del", "dev", device, parent],
                check=False)

    def qdiscs(self, ns: str, device: str) -> set[str]:
        """The kinds of the device's qdiscs (``htb``, ``ingress``, the kernel's default)."""
        out = run(["ip", "netns", "exec", ns, "tc", "-j", "qdisc", "show", "dev", device],
                  check=False)
        try:
            return {q.get("kind", "") for q in json.loads(out or "[]")}
        except ValueError:
            return set()

    def tc(self, ns: str, batch: str) -> None:
        run(["ip", "netns", "exec", ns, "tc", "-batch", "-"], stdin=batch)

    def ensure_ifb(self, ns: str, device: str) -> None:
        if device not in self.links(ns):
            run(["ip", "-n", ns, "link", "add", device, "type", "ifb"])
        run(["ip", "-n", ns, "link", "set", device, "up"])

    def delete_link(self, ns: str, device: str) -> None:
        run(["ip", "-n", ns, "link", "del", device], check=False)

    def announce(self, ns: str, device: str, addresses: list[str]) -> None:
        self.announce_all(ns, {device: addresses})

    def announce_all(self, ns: str, by_device: dict[str, list[str]]) -> None:
        """Gratuitous ARPs for addresses just added, sent in the background over
        the next seconds (``garp.SCHEDULE``): the router's wiring goes on
        meanwhile; a failure only delays neighbours. One process for all the
        router's devices (a Python start each was most of a router's CPU)."""
        argv: list[str] = []
        for device, addresses in by_device.items():
            if addresses:
                argv += [*(["+"] if argv else []), device, *addresses]
        if not argv:
            return
        try:
            proc = subprocess.Popen(
                ["ip", "netns", "exec", ns, sys.executable, "-m", "neutrino.agents.l3.garp",
                 *argv], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL)
        except OSError as exc:
            LOG.warning("gratuitous ARP in %s: %s", ns, exc)
            return
        threading.Thread(target=proc.wait, name="garp-reaper", daemon=True).start()

    def forget_connections(self, ns: str, address: str) -> None:
        """Drop conntrack entries to a removed floating IP (when ``conntrack``
        is installed), so established flows do not outlive it."""
        if shutil.which("conntrack") is None:
            return
        for flag in ("--orig-dst", "--reply-src"):
            run(["ip", "netns", "exec", ns, "conntrack", "-D", flag, address], check=False)


OWNED_PREFIXES = (model.NS_PREFIX, "snat-", "fip-")


class OwnRouterNamespaces(LinuxHost):
    """The L3 agent's view of the host limited to the router namespaces it
    made (listed in a file of its state directory, so a restart adopts them).
    A full sync deletes every ``qrouter-`` namespace the agent does not
    serve, as upstream's on a real host; on a machine shared with other
    clouds (the all-in-one beside a test suite, emulated hosts of a test)
    those are not ours."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()  # routers are built from several threads

    def _owned(self) -> set[str]:
        return set(self.path.read_text().split()) if self.path.exists() else set()

    def _write(self, owned: set[str]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("".join(f"{ns}\n" for ns in sorted(owned)))

    def namespaces(self) -> list[str]:
        owned = self._owned()
        return [ns for ns in super().namespaces()
                if not ns.startswith(OWNED_PREFIXES) or ns in owned]

    def ensure_namespace(self, ns: str) -> None:
        with self._lock:
            if ns not in (owned := self._owned()):
                self._write(owned | {ns})
        super().ensure_namespace(ns)

    def delete_namespace(self, ns: str) -> None:
        super().delete_namespace(ns)
        with self._lock:
            self._write(self._owned() - {ns})

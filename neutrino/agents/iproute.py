"""Namespaces, links and addresses through iproute2's ``ip`` (the one adapter
for them): every host change an agent makes to links goes through here, so
it can be read in one place and faked in one place.

``ip -json`` gives structured answers; errors carry ip's own message.
"""
from __future__ import annotations

import json
import logging
import os
import subprocess
from typing import Any

LOG = logging.getLogger(__name__)


class IpError(RuntimeError):
    pass


def ip(*args: str, namespace: str | None = None, check: bool = True,
       stdin: str | None = None) -> str:
    cmd = ["ip"] + (["-n", namespace] if namespace else []) + list(args)
    done = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    if check and done.returncode:
        raise IpError(f"{' '.join(cmd)}: {done.stderr.strip()}")
    return done.stdout


def netns_exec(namespace: str, *cmd: str, check: bool = True) -> str:
    """Run a command inside ``namespace`` (sysctl, iptables, ...)."""
    done = subprocess.run(["ip", "netns", "exec", namespace, *cmd],
                          capture_output=True, text=True)
    if check and done.returncode:
        raise IpError(f"{' '.join(cmd)} in {namespace}: {done.stderr.strip()}")
    return done.stdout


def netns_ok(namespace: str, *cmd: str) -> bool:
    """Whether a command succeeds inside ``namespace`` (a check, e.g. ``iptables -C``)."""
    return subprocess.run(["ip", "netns", "exec", namespace, *cmd],
                          capture_output=True).returncode == 0


def namespaces() -> list[str]:
    try:
        return sorted(n for n in os.listdir("/run/netns") if not n.startswith("."))
    except FileNotFoundError:
        return []


def namespace_exists(namespace: str) -> bool:
    return os.path.exists(os.path.join("/run/netns", namespace))


def ensure_namespace(namespace: str) -> None:
    if not namespace_exists(namespace):
        ip("netns", "add", namespace)
    ip("link", "set", "lo", "up", namespace=namespace)


def add_namespace(namespace: str) -> None:
    """A new namespace with nothing up in it yet: its ``lo`` is for the
    caller to bring up (``batch``) with the rest of what it sets there."""
    ip("netns", "add", namespace)


def batch(namespace: str, commands: list[str]) -> None:
    """``ip`` commands (without ``ip``) run inside ``namespace`` by one
    ``ip -batch``, in order: one process instead of one each. The first that
    fails stops the rest and raises."""
    if commands:
        ip("-batch", "-", namespace=namespace, stdin="".join(f"{c}\n" for c in commands))


def delete_namespace(namespace: str) -> None:
    if namespace_exists(namespace):
        ip("netns", "delete", namespace)


def links(namespace: str | None = None) -> list[dict[str, Any]]:
    return json.loads(ip("-json", "link", "show", namespace=namespace) or "[]")


def link_exists(name: str, namespace: str | None = None) -> bool:
    if namespace and not namespace_exists(namespace):
        return False
    return ip("link", "show", "dev", name, namespace=namespace, check=False) != ""


def delete_link(name: str, namespace: str | None = None) -> None:
    if link_exists(name, namespace):
        ip("link", "delete", "dev", name, namespace=namespace)


def addresses(name: str, namespace: str | None = None) -> list[str]:
    """The device's addresses as ``ip/prefixlen``, link-local ones left out."""
    found = json.loads(ip("-json", "addr", "show", "dev", name, namespace=namespace) or "[]")
    return [f"{a['local']}/{a['prefixlen']}" for dev in found for a in dev.get("addr_info", [])
            if a.get("scope") != "link"]


def set_addresses(name: str, cidrs: list[str], namespace: str | None = None) -> None:
    """Make the device's (non link-local) addresses exactly ``cidrs``."""
    have = set(addresses(name, namespace))
    for cidr in have - set(cidrs):
        ip("addr", "del", cidr, "dev", name, namespace=namespace)
    for cidr in cidrs:
        if cidr not in have:
            ip("addr", "add", cidr, "dev", name, namespace=namespace)

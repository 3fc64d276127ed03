"""Finding a daemon an agent started (dnsmasq, a metadata proxy, radvd,
keepalived, charon, haproxy, gobgpd) by the pid file it wrote, and ending it.

The pid file outlives its process, and the kernel reuses pids, so a pid is
believed only while ``/proc/<pid>/cmdline`` still names what the agent
gave that daemon (its configuration file, its pid file, its program):
the agent never signals a process that merely inherited the number.
"""
from __future__ import annotations

import os
import signal
import time
from typing import Callable


def read_pid(pid_file: str | os.PathLike[str]) -> int | None:
    """The pid written in ``pid_file`` (its first word: haproxy may list
    more); None when there is none to read."""
    try:
        with open(pid_file, encoding="ascii") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def cmdline(pid: int) -> list[str] | None:
    """The arguments process ``pid`` runs with; None when there is no such
    process (or it is a zombie, whose command line is empty)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    return raw.decode(errors="replace").rstrip("\0").split("\0") if raw else None


def pid_of(pid_file: str | os.PathLike[str], marker: str) -> int | None:
    """The pid in ``pid_file`` while that process's command line contains
    ``marker`` (a program's name, or a path the agent passed it)."""
    pid = read_pid(pid_file)
    if pid is None:
        return None
    args = cmdline(pid)
    return pid if args is not None and marker in "\0".join(args) else None


def terminate(pid: int, running: Callable[[], bool], grace: float, kill: bool = True) -> None:
    """SIGTERM to ``pid``, then wait up to ``grace`` seconds while
    ``running()`` (the daemon's own way out: dnsmasq's, keepalived's
    withdrawn addresses, radvd's goodbye advertisements); then SIGKILL if
    ``kill`` and it still runs. A process already gone is fine."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace
    while running() and time.monotonic() < deadline:
        time.sleep(0.05)
    if kill and running():
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

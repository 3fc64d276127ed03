"""CPU time a server spent, read from /proc around a benchmark's row.

Throughput and latency say how long a client waited; a server's CPU per
request says what it cost, whether or not the machine was busy with
other work at the time. Both servers in ``side_by_side.py`` are trees of
processes (a master and its workers, each with threads), so the figure is
the sum over the tree: the time on a CPU of every thread of every live
process under the root, read before and after the row.

Each thread's ``schedstat`` counts nanoseconds, where ``stat``'s user and
system times count clock ticks (10 ms): a row of 50 requests of about a
millisecond each is five ticks, too coarse to compare. A thread that ends
within the row takes its time with it; the servers measured keep theirs.
"""
from __future__ import annotations

import os
from pathlib import Path


def _ppid(pid: int) -> int | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces;
    # after it come the state and the parent's pid.
    return int(text[text.rindex(")") + 2:].split()[1])


def _process_ns(pid: int) -> int:
    """Nanoseconds on a CPU of every live thread of one process."""
    total = 0
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0
    for tid in tids:
        try:
            total += int(Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total


def tree(root: int) -> list[int]:
    """``root`` and every live process below it."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            ppid = _ppid(int(entry))
            if ppid is not None:
                children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def tree_cpu_seconds(root: int) -> float:
    """CPU seconds so far of ``root``'s live threads and its descendants'."""
    return sum(_process_ns(pid) for pid in tree(root)) / 1e9

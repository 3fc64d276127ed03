"""Few long lists built at once in a worker.

A list of a whole collection builds a row, a dict and a shaped dict per
item before its answer is written: with the worker's threads each building
one, those pages are alive together, and the allocator keeps the memory
they filled (pymalloc gives an arena back only when every object in it is
gone, and long-lived ones, a memo entry or a compiled statement, land among
them). That high-water mark was most of what an API worker grew by over
``make bench`` (issue 37 caps a worker's resident memory;
docs/performance.md). The worker's work is serialised by the interpreter
lock anyway, so a few at once still keep one building while another waits
for the database.

Only lists that may be long wait: unfiltered, and not limited to a short
page. A filtered list (by name, by network) and a short page go straight
through, since many of them at once each wait on the database and gain
from running together.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator

from neutrino.db.query import ListQuery

# A page limited to this many items or fewer never waits.
SHORT = 100
# Lists that may be long, built at once in a worker.
AT_ONCE = 2


class Gate:
    """Counts what it let through and what waited, for the tests and
    ``/metrics``-style looks from a debugger."""

    def __init__(self, at_once: int = AT_ONCE) -> None:
        self.at_once = at_once
        self._slots = threading.BoundedSemaphore(at_once)
        self._lock = threading.Lock()
        self.inside = 0
        self.most_inside = 0
        self.waited = 0

    @contextmanager
    def building(self, query: ListQuery) -> Iterator[None]:
        """Around reading, building and serialising a list's answer."""
        if not may_be_long(query):
            yield
            return
        if not self._slots.acquire(blocking=False):
            self._count_wait()
            self._slots.acquire()
        self._enter()
        try:
            yield
        finally:
            with self._lock:
                self.inside -= 1
            self._slots.release()

    def _count_wait(self) -> None:
        with self._lock:
            self.waited += 1

    def _enter(self) -> None:
        with self._lock:
            self.inside += 1
            self.most_inside = max(self.most_inside, self.inside)


def may_be_long(query: ListQuery) -> bool:
    return not query.filters and not query.extra and (query.limit is None or query.limit > SHORT)

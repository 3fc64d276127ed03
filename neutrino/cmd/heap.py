"""An API worker's C heap: few arenas, and what large answers freed given back.

A worker's RSS grew by a third over ``make bench`` (issue 37 caps a worker
at 80 MB). Most of the growth was not live objects (tracemalloc counted a
few MB: the row memo, bounded by its entry count) but glibc's heap: each of
the front's threads allocated from an arena of its own (up to eight per
core), and a list of 1,000 ports frees megabytes of dicts whose pages the
arenas keep. Two arenas hold the threads' contention low (the GIL already
serialises most allocation), and ``malloc_trim`` after large answers hands
their freed pages back. Both are glibc's; elsewhere nothing is done.
"""
from __future__ import annotations

import ctypes
import ctypes.util
from typing import Any

ARENAS = 2
# An answer this large built a page of dicts worth trimming after ...
LARGE = 64 * 1024
# ... and once this many bytes of them were sent, the heap is trimmed.
TRIM_AFTER = 512 * 1024
_M_ARENA_MAX = -8  # glibc's malloc.h


def _glibc() -> Any:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name)
        libc.mallopt, libc.malloc_trim  # noqa: B018 - glibc's, or not glibc
    except (OSError, AttributeError, TypeError):
        return None
    return libc


class Heap:
    """The worker's heap policy: ``limit`` once, before the threads start;
    ``answered`` per answer (any thread); ``settle`` from the sweeper."""

    def __init__(self) -> None:
        self._libc = _glibc()
        self._owed = 0
        self.trims = 0

    def limit(self) -> None:
        """Few arenas for the threads to come, and what building the app
        freed given back."""
        if self._libc is not None:
            self._libc.mallopt(_M_ARENA_MAX, ARENAS)
            self._libc.malloc_trim(0)

    def answered(self, size: int) -> None:
        if size >= LARGE:
            self._owed += size  # (a lost update between threads only delays a trim)

    def settle(self) -> None:
        """Trim when enough large answers were sent since the last trim."""
        if self._owed < TRIM_AFTER or self._libc is None:
            return
        self._owed = 0
        self._libc.malloc_trim(0)
        self.trims += 1

"""A value read again only when the last reading is older than its
``max_age``, one thread reading at a time.

What the API answers from a slow source that callers poll (the health
probes' checks, ``/metrics``' reading of the database) goes through it, so
a load balancer or several Prometheus servers polling often cost each
worker one reading per period, not one per request.
"""
from __future__ import annotations

import threading
import time
from typing import Callable, Generic, TypeVar

T = TypeVar("T")


class Fresh(Generic[T]):
    def __init__(self, read: Callable[[], T], max_age: float) -> None:
        self.read = read
        self.max_age = max_age
        self._value: tuple[float, T] | None = None
        self._lock = threading.Lock()

    def get(self) -> T:
        with self._lock:
            if self._value is not None and time.monotonic() - self._value[0] < self.max_age:
                return self._value[1]
            value = self.read()
            self._value = (time.monotonic(), value)
            return value

    def expire(self) -> None:
        """The next ``get`` reads again."""
        with self._lock:
            self._value = None

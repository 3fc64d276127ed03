"""Polling for a condition that other processes make true."""
from __future__ import annotations

import time
from typing import Any, Callable


def wait_for(predicate: Callable[[], Any], timeout: float = 30, interval: float = 0.2) -> Any:
    """``predicate``'s first true value, asked every ``interval`` seconds;
    after ``timeout``, its last value (false), for the caller's assert to
    report with what it knows."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)

"""Polling for a condition that other processes make true."""
from __future__ import annotations

import time
from typing import Any, Callable


def wait_for(predicate: Callable[[], Any], timeout: float = 30, interval: float = 0.1) -> Any:
    """``predicate``'s first true value, asked every ``interval`` seconds;
    after ``timeout``, its last value (false), for the caller's assert to
    report with what it knows."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)


def until(predicate: Callable[[], Any], timeout: float = 30, interval: float = 0.1) -> Any:
    """``predicate``'s first true value; an AssertionError naming it after
    ``timeout``, for waits that are steps rather than the test's claim."""
    value = wait_for(predicate, timeout, interval)
    if not value:
        raise AssertionError(f"not within {timeout} s: {getattr(predicate, '__qualname__', predicate)}")
    return value

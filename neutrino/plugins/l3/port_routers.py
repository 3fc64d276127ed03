"""Routers a port's change concerns, found inside its transaction and told
once it committed.

A precommit callback sees what the change will take away (a floating IP's
association, a port forwarding) while it is still there; the after-commit
callback, which may tell the routers' agents, comes once it is gone. What
the first found is kept here by port id for the second.
"""
from __future__ import annotations

import threading
from typing import Callable


class PortRouters:
    """``tell(router ids)`` after commit for what ``found`` kept, by port id."""

    def __init__(self, tell: Callable[[list[str]], None]) -> None:
        self._tell = tell
        self._pending: dict[str, list[str]] = {}
        self._lock = threading.Lock()

    def found(self, port_id: str, router_ids: list[str]) -> None:
        """Inside the transaction. A transaction retried, or rolled back,
        leaves what it last found: the next one of the port replaces it."""
        with self._lock:
            if router_ids:
                self._pending[port_id] = router_ids
            else:
                self._pending.pop(port_id, None)

    def committed(self, port_id: str) -> None:
        with self._lock:
            router_ids = self._pending.pop(port_id, [])
        if router_ids:
            self._tell(router_ids)

"""Callbacks service plugins register on core resources' lifecycle.

A service plugin often has a say in what happens to core resources it
refers to: the L3 plugin refuses to let a router's port be deleted through
the ports API and disassociates floating IPs from a port being deleted; a
trunk's parent port cannot go away. The core plugin must not import those
plugins (the layers flow one way), so it announces its transactions here
and the plugins subscribe when they are loaded.

Precommit callbacks run inside the core plugin's transaction (``conn``):
raising refuses the operation and rolls everything back; writing makes the
plugin's change atomic with the core's. After-commit callbacks run once the
change is durable (to tell agents or the compute service); they cannot undo
it, so their failures are logged and the API call still succeeds. A
precommit callback that finds what must be told once the change is durable
(the routers of a port's floating IPs, read before they are disassociated)
hands it to ``db.engine.after_commit`` on the same ``conn``.
"""
from __future__ import annotations

import logging
from collections import defaultdict
from typing import Any, Callable

LOG = logging.getLogger(__name__)

# (conn, ctx, resource) for deletes; (conn, ctx, original, changes) for updates
Callback = Callable[..., None]

PRECOMMIT_CREATE = "precommit_create"  # (conn, ctx, resource) written, not yet committed
PRECOMMIT_DELETE = "precommit_delete"  # the resource as loaded, before its rows go
PRECOMMIT_UPDATE = "precommit_update"  # the resource before the change, and the change
PRECOMMIT_UPDATED = "precommit_updated"  # (conn, ctx, original, current) before commit
AFTER_CREATE = "after_create"  # (ctx, resource) once committed
AFTER_UPDATE = "after_update"  # (ctx, original, current) once committed
AFTER_DELETE = "after_delete"  # (ctx, resource as it was) once committed
AFTER = (AFTER_CREATE, AFTER_UPDATE, AFTER_DELETE)
EVENTS = (PRECOMMIT_CREATE, PRECOMMIT_DELETE, PRECOMMIT_UPDATE, PRECOMMIT_UPDATED, *AFTER)


class Events:
    """Subscribers per (collection, event), called in subscription order."""

    def __init__(self) -> None:
        self._subscribers: dict[tuple[str, str], list[Callback]] = defaultdict(list)
        # after-commit subscribers called with a list of each change's arguments
        self._batches: dict[tuple[str, str], list[Callback]] = defaultdict(list)

    def subscribe(self, plural: str, event: str, callback: Callback) -> None:
        if event not in EVENTS:
            raise ValueError(f"unknown event {event!r}; one of {', '.join(EVENTS)}")
        self._subscribers[(plural, event)].append(callback)

    def subscribe_batch(self, plural: str, event: str, callback: Callback) -> None:
        """``callback(changes)``, ``changes`` a list of the arguments each
        change is announced with, once per ``notify`` or ``notify_many``."""
        if event not in AFTER:
            raise ValueError(f"only after-commit events are announced in batches, not {event!r}")
        self._batches[(plural, event)].append(callback)

    def wants(self, plural: str, event: str) -> bool:
        return bool(self._subscribers.get((plural, event)) or self._batches.get((plural, event)))

    def notify(self, plural: str, event: str, *args: Any) -> None:
        if event in AFTER:
            self.notify_many(plural, event, [args])
            return
        for callback in self._subscribers.get((plural, event), ()):
            callback(*args)

    def notify_many(self, plural: str, event: str, changes: list[tuple[Any, ...]]) -> None:
        """Announce committed changes: each one to every subscriber, then
        all of them to each batch subscriber."""
        if event not in AFTER:
            raise ValueError(f"only after-commit events are announced in batches, not {event!r}")
        for args in changes:
            for callback in self._subscribers.get((plural, event), ()):
                self._safely(plural, event, callback, *args)
        if changes:
            for callback in self._batches.get((plural, event), ()):
                self._safely(plural, event, callback, changes)

    @staticmethod
    def _safely(plural: str, event: str, callback: Callback, *args: Any) -> None:
        try:
            callback(*args)
        except Exception:  # noqa: BLE001 - the change is committed; tell, never undo
            LOG.exception("%s %s subscriber %r failed", plural, event, callback)

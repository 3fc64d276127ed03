"""Notifier hook: the events upstream's notifier hook emits, with its payloads.

``*.start`` goes out before the plugin acts (so it is sent even when the
operation then fails), ``*.end`` after success with what the caller saw:
``create.start`` carries the request body, ``create.end`` one event per
created item (bulk aware); ``update.start`` the body and the id,
``update.end`` the result; ``delete.start`` the id, ``delete.end`` the id
and the original resource.
"""
from __future__ import annotations

from typing import Any

from neutrino.context import Context


class NotifierHook:
    def __init__(self, notifications: Any = None) -> None:
        self.notifications = notifications

    @property
    def enabled(self) -> bool:
        return self.notifications is not None and self.notifications.enabled

    def _send(self, ctx: Context, event: str, payload: Any) -> None:
        if self.enabled:
            self.notifications.info(ctx, event, payload)

    def event(self, ctx: Context, event: str, payload: Any) -> None:
        """A notification of an extension's own (``dhcp_agent.network.add``)."""
        self._send(ctx, event, payload)

    def create_start(self, ctx: Context, singular: str, body: Any) -> None:
        self._send(ctx, f"{singular}.create.start", body)

    def create_end(self, ctx: Context, singular: str, items: list[dict[str, Any]]) -> None:
        for item in items:
            self._send(ctx, f"{singular}.create.end", {singular: item})

    def update_start(self, ctx: Context, singular: str, rid: str, body: Any) -> None:
        if self.enabled:
            self._send(ctx, f"{singular}.update.start", {**body, "id": rid})

    def update_end(self, ctx: Context, singular: str, item: dict[str, Any]) -> None:
        self._send(ctx, f"{singular}.update.end", {singular: item})

    def delete_start(self, ctx: Context, singular: str, rid: str) -> None:
        self._send(ctx, f"{singular}.delete.start", {f"{singular}_id": rid})

    def delete_end(self, ctx: Context, singular: str, rid: str, original: dict[str, Any]) -> None:
        self._send(ctx, f"{singular}.delete.end", {f"{singular}_id": rid, singular: original})

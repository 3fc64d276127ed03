"""What an extension's custom route may answer besides plain JSON, as data.

A plugin's route handler knows its own state, not how the API shows other
collections or announces changes; it says what to show or announce and the
API layer (``neutrino.api.custom_routes``) does it, so no plugin imports
the API.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Listed:
    """Items of a collection, named by id, answered as ``{plural: [...]}``
    and shown as that collection's own API shows them to the caller."""

    plural: str
    ids: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Announced:
    """A change done: the API emits the notification ``event`` with
    ``payload``, then answers ``answer``."""

    event: str
    payload: dict[str, Any]
    answer: Any = None

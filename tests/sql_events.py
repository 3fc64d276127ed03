"""Listening to everything a ``Database`` sends.

Reads go out on an engine of their own (``Database.read_engine``), so a
listener on ``db.engine`` alone would miss them and a count of statements
or transactions would come out low.
"""
from __future__ import annotations

from typing import Any, Callable

from sqlalchemy import event

from neutrino.db.engine import Database


def listen_all(db: Database, name: str, fn: Callable[..., Any]) -> None:
    for engine in db.engines:
        event.listen(engine, name, fn)


def remove_all(db: Database, name: str, fn: Callable[..., Any]) -> None:
    for engine in db.engines:
        event.remove(engine, name, fn)

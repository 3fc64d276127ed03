"""Rows the storage tests write straight into tables, below the plugins."""
from __future__ import annotations

import datetime as dt
import uuid


def network_row(name: str) -> dict[str, object]:
    """The columns of a ``networks`` row, with a fresh id."""
    when = dt.datetime(2026, 1, 1)
    return dict(id=str(uuid.uuid4()), project_id="p", name=name, status="ACTIVE",
                admin_state_up=True, mtu=1500, created_at=when, updated_at=when)

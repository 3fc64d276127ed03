"""Rows the storage tests write straight into tables, below the plugins."""
from __future__ import annotations

import datetime as dt
import uuid


def network_row(name: str) -> dict[str, object]:
    """The columns of a ``networks`` row, with a fresh id."""
    when = dt.datetime(2026, 1, 1)
    return dict(id=str(uuid.uuid4()), project_id="p", name=name, status="ACTIVE",
                admin_state_up=True, mtu=1500, created_at=when, updated_at=when)


def port_row(network_id: str) -> dict[str, object]:
    """The columns of a ``ports`` row on that network, with a fresh id."""
    when = dt.datetime(2026, 1, 1)
    return dict(id=str(uuid.uuid4()), project_id="p", name="", network_id=network_id,
                mac_address="fa:16:3e:00:00:01", admin_state_up=True, status="DOWN",
                device_id="", device_owner="", revision_number=1,
                created_at=when, updated_at=when)

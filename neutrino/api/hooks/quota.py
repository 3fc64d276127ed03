"""Quota enforcement hook: what a request would add, per project.

The hook only states the reservation (resource and count per project);
the plugin checks it inside the transaction that inserts the rows, under a
per-project lock (see ``neutrino.quota.engine``), so that concurrent
requests cannot both pass a check that only one of them may pass.
"""
from __future__ import annotations

from collections import Counter
from typing import Any

from neutrino.context import Context


def reserve(ctx: Context, singular: str, items: list[dict[str, Any]]) -> None:
    """Attach the request's reservation to the context for the plugin."""
    counts = Counter(item.get("project_id") for item in items)
    ctx.quota_request = {project: {singular: count}
                         for project, count in counts.items() if project}

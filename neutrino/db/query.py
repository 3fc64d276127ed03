"""What the API asks of a list, as the plugins' SQL reads take it: filters
(tag filters among them), sorting, pagination and ``fields``, already
validated and converted by the API layer (``neutrino.api.query``)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

TAG_FILTERS = ("tags", "tags-any", "not-tags", "not-tags-any")


@dataclass
class ListQuery:
    """What the API asks of a list: already validated and converted."""

    filters: dict[str, list[Any]] = field(default_factory=dict)
    sorts: list[tuple[str, bool]] = field(default_factory=list)  # (key, ascending)
    limit: int | None = None
    marker: str | None = None
    page_reverse: bool = False
    fields: list[str] | None = None
    # Conditions from extension drivers on attributes they store themselves.
    extra: list[Any] = field(default_factory=list)
    # The dicts go straight into an API answer: the request adds attributes
    # to them and changes nothing inside (``row_memo.Built``).
    answer: bool = False
    # Set by ``paged_select``: whether the marker names a row (None: not looked
    # up there), so the API's 404 for an unknown marker costs no query of its own.
    marker_found: bool | None = None

"""oslo.policy's extension checks (``http:``, ``https:``), each imported
when a rule of its kind is parsed.

oslo.policy imports every check of its ``oslo.policy.rule_checks`` entry
points the first time it parses a rule, and its HTTP check brings requests
(over a hundred modules, about 3.5 MB) into the server's master and so
into every API worker forked from it: issue 37 caps a worker at 80 MB,
and neutron's rules name no such check. The names are read from the entry
points' metadata at once; a check's module is imported on first use.
"""
from __future__ import annotations

from importlib import metadata
from typing import Any, Iterator, Mapping

from oslo_policy import _checks

GROUP = "oslo.policy.rule_checks"


class OnDemand(Mapping[str, Any]):
    """The checks of ``GROUP`` by kind, as oslo.policy's parser asks for them."""

    def __init__(self) -> None:
        self._points = {point.name: point for point in metadata.entry_points(group=GROUP)}
        self._loaded: dict[str, Any] = {}

    def __getitem__(self, kind: str) -> Any:
        if kind not in self._loaded:
            self._loaded[kind] = self._points[kind].load()
        return self._loaded[kind]

    def __contains__(self, kind: object) -> bool:
        return kind in self._points

    def __iter__(self) -> Iterator[str]:
        return iter(self._points)

    def __len__(self) -> int:
        return len(self._points)


def install() -> None:
    """Before oslo.policy loads them all (its first parse of a rule)."""
    if _checks.extension_checks is None:
        _checks.extension_checks = OnDemand()  # type: ignore[assignment]

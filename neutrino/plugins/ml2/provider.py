"""Provider attributes of a request, turned into the segments they ask for.

``provider:*`` (extension ``provider``) describe one segment; ``segments``
(extension ``multi-provider``) a list of them; both at once is an error.
Attributes the caller left out carry the ``AUTO`` default.
"""
from __future__ import annotations

from typing import Any, Callable

from neutrino import errors
from neutrino.plugins.ml2.driver_api import (
    NETWORK_TYPE,
    PHYSICAL_NETWORK,
    PROVIDER_ATTRS,
    SEGMENTATION_ID,
    Segment,
)
from neutrino.resources.attributes import AUTO

SEGMENTS = "segments"


def given(value: Any) -> bool:
    return value is not AUTO and value is not None


def _segment(values: dict[str, Any]) -> Segment | None:
    """A segment from API keys, or None when no network type was given."""
    def get(key: str) -> Any:
        value = values.get(PROVIDER_ATTRS[key], AUTO)
        return value if given(value) else None
    ntype = get(NETWORK_TYPE)
    if ntype is None:
        return None
    return Segment(ntype, get(PHYSICAL_NETWORK), get(SEGMENTATION_ID))


def requested(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The raw segment requests of a create body (possibly empty)."""
    provider = {k: data[k] for k in PROVIDER_ATTRS.values() if given(data.get(k, AUTO))}
    segments = data.get(SEGMENTS, AUTO)
    if provider:
        if given(segments):
            raise errors.SegmentsSetInConjunctionWithProviders()
        return [provider]
    return list(segments) if given(segments) else []


def process(data: dict[str, Any], validate: Callable[[Segment], None],
            is_partial: Callable[[Segment], bool]) -> list[Segment]:
    """Validated segments of a create body; duplicates of a full segment refused."""
    out = []
    for raw in requested(data):
        segment = _segment(raw)
        if segment is None:
            raise errors.InvalidInput(error_message="network_type required")
        validate(segment)
        out.append(segment)
    full = [s for s in out if not is_partial(s)]
    if len(set(full)) != len(full):
        raise errors.SegmentsContainDuplicateEntry()
    return out


def extend_network_dict(network: dict[str, Any], segments: list[Segment]) -> None:
    """One segment shows as ``provider:*``, several as ``segments``."""
    if len(segments) > 1:
        network[SEGMENTS] = [s.as_provider() for s in segments]
    elif segments:
        network.update(segments[0].as_provider())
    else:
        network.update({attr: None for attr in PROVIDER_ATTRS.values()})

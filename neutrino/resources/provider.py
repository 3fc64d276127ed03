"""The ``provider`` and ``multi-provider`` extensions of networks, as data.

``provider:*`` describe a network's one segment; ``segments`` lists several.
Both are admin-only by the policy defaults (``create_network:provider:*``,
``get_network:segments``...). Left out, they default to ``AUTO``: the
plugin allocates a segment itself.
"""
from __future__ import annotations

from typing import Any

from neutrino.resources import validators as v
from neutrino.resources.attributes import AUTO, AttributeMap, attr

NETWORK_TYPE = "provider:network_type"
PHYSICAL_NETWORK = "provider:physical_network"
SEGMENTATION_ID = "provider:segmentation_id"
SEGMENT_KEYS = (NETWORK_TYPE, PHYSICAL_NETWORK, SEGMENTATION_ID)
NETWORK_TYPE_MAX_LEN = 32
PHYSICAL_NETWORK_MAX_LEN = 64


def _segment(value: Any) -> dict[str, Any]:
    """One entry of ``segments``; a missing or zero segmentation id means
    "allocate one", as upstream's segment conversion treats it."""
    if not isinstance(value, dict):
        raise v.Invalid(f"'{value}' is not a dictionary")
    extra = sorted(set(value) - set(SEGMENT_KEYS))
    if extra:
        raise v.Invalid(f"Unrecognized attribute(s) '{', '.join(extra)}'")
    out: dict[str, Any] = {NETWORK_TYPE: AUTO, PHYSICAL_NETWORK: AUTO, SEGMENTATION_ID: AUTO}
    for key, check in ((NETWORK_TYPE, v.string(NETWORK_TYPE_MAX_LEN)),
                       (PHYSICAL_NETWORK, v.string(PHYSICAL_NETWORK_MAX_LEN))):
        if value.get(key) is not None:
            out[key] = check(value[key])
    if value.get(SEGMENTATION_ID):
        out[SEGMENTATION_ID] = v.integer()(value[SEGMENTATION_ID])
    return out


def segments(value: Any) -> list[dict[str, Any]] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise v.Invalid(f"'{value}' is not a list")
    return [_segment(item) for item in value]


PROVIDER: AttributeMap = {"networks": [
    attr(NETWORK_TYPE, v.string(NETWORK_TYPE_MAX_LEN), default=AUTO, allow_post=True,
         allow_put=True, is_filter=True, enforce_policy=True),
    attr(PHYSICAL_NETWORK, v.string(PHYSICAL_NETWORK_MAX_LEN), default=AUTO,
         allow_post=True, allow_put=True, is_filter=True, enforce_policy=True),
    attr(SEGMENTATION_ID, v.integer(), default=AUTO, allow_post=True, allow_put=True,
         is_filter=True, enforce_policy=True, convert_filter=v.filter_int),
]}

MULTI_PROVIDER: AttributeMap = {"networks": [
    attr("segments", segments, default=AUTO, allow_post=True, allow_put=True,
         enforce_policy=True)]}

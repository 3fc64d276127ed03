"""The ``segment`` resource (routed networks) and what it adds to subnets and
networks, declared as data with upstream's names and descriptors."""
from __future__ import annotations

from neutrino.resources import validators as v
from neutrino.resources.attributes import AttributeMap, attr, resource
from neutrino.resources.extensions import described

SEGMENT_EXTENSION = described("segment")
STANDARD_ATTR_SEGMENT = described("standard-attr-segment")
SUBNET_SEGMENTID_WRITABLE = described("subnet-segmentid-writable")
IP_ALLOCATION = described("ip_allocation")
L2_ADJACENCY = described("l2_adjacency")

_I = v.filter_int


# Segments have no owner (admin-only resource) and, in upstream 29, no tag API:
# ``standard-attr-segment`` brings description, timestamps and revision only.
SEGMENT = resource(
    "segment", "segments",
    attr("id", v.uuid, is_filter=True, is_sort_key=True, convert_filter=str),
    # Accepted on POST as on every resource, never shown.
    attr("tenant_id", v.string(255), default=None, allow_post=True, is_visible=False),
    attr("project_id", v.string(255), default=None, allow_post=True, is_visible=False),
    attr("network_id", v.uuid, allow_post=True, is_filter=True, is_sort_key=True,
         convert_filter=str),
    attr("physical_network", v.or_none(v.string(64)), default=None, allow_post=True,
         is_filter=True, is_sort_key=True),
    attr("network_type", v.string(32), allow_post=True, is_filter=True,
         is_sort_key=True),
    # Sortable but, as upstream, not a filter.
    attr("segmentation_id", v.or_none(v.integer()), default=None, allow_post=True,
         is_sort_key=True),
    attr("name", v.or_none(v.string(255)), default=None, allow_post=True,
         allow_put=True, is_filter=True, is_sort_key=True),
    attr("description", v.string(255), default="", allow_post=True, allow_put=True,
         is_filter=True, is_sort_key=True),
    attr("created_at", is_filter=True, is_sort_key=True),
    attr("updated_at", is_filter=True, is_sort_key=True),
    attr("revision_number", is_filter=True, is_sort_key=True, convert_filter=_I),
    has_tags=False,
)


# ``segment_id`` of subnets: settable on create and, once, from null on update
# (``subnet-segmentid-writable``); policy keeps it admin-only.
SUBNET_SEGMENT_ID: AttributeMap = {"subnets": [
    attr("segment_id", v.or_none(v.uuid), default=None, allow_post=True,
         allow_put=True, is_filter=True, is_sort_key=True)]}

# Whether a network is one L2 domain (false once its subnets are bound to segments).
NETWORK_L2_ADJACENCY: AttributeMap = {"networks": [attr("l2_adjacency")]}

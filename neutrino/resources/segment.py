"""The ``segment`` resource (routed networks) and what it adds to subnets and
networks, declared as data with upstream's names and descriptors."""
from __future__ import annotations

from neutrino.resources import validators as v
from neutrino.resources.attributes import Attribute, ResourceDef, attr
from neutrino.resources.extensions import ExtensionDescriptor

SEGMENT = ExtensionDescriptor("segment", "Segment", "Segments extension.",
                              "2016-02-24T17:00:00-00:00")
STANDARD_ATTR_SEGMENT = ExtensionDescriptor(
    "standard-attr-segment", "Standard Attribute Segment Extension",
    "Add standard attributes to Segment resource", "2018-04-09T10:00:00-00:00")
SUBNET_SEGMENTID_WRITABLE = ExtensionDescriptor(
    "subnet-segmentid-writable", "Subnet SegmentID (writable)",
    "Provides a writable segment_id attribute for a subnet resource.",
    "2018-03-12T00:00:00-00:00")
IP_ALLOCATION = ExtensionDescriptor("ip_allocation", "IP Allocation",
                                    "IP allocation extension.", "2016-06-10T23:00:00-00:00")
L2_ADJACENCY = ExtensionDescriptor("l2_adjacency", "L2 Adjacency",
                                   "Display L2 Adjacency for Neutron Networks.",
                                   "2016-04-12T16:00:00-00:00")

_I = v.filter_int


def segment() -> ResourceDef:
    """Segments have no owner (admin-only resource) and, in upstream 29, no
    tag API: ``standard-attr-segment`` brings description, timestamps and
    revision only."""
    r = ResourceDef("segment", "segments", has_tags=False)
    r.add(
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
    )
    return r


def subnet_segment_id() -> list[Attribute]:
    """``segment_id`` of subnets: settable on create and, once, from null on
    update (``subnet-segmentid-writable``); policy keeps it admin-only."""
    return [attr("segment_id", v.or_none(v.uuid), default=None, allow_post=True,
                 allow_put=True, is_filter=True, is_sort_key=True)]


def network_l2_adjacency() -> list[Attribute]:
    """Whether a network is one L2 domain (false once its subnets are bound to
    segments)."""
    return [attr("l2_adjacency")]

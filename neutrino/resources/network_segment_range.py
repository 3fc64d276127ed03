"""``network-segment-range``: the ranges project networks take segment ids
from, managed by admins at runtime, declared as data with upstream's names.

Ranges carry standard attributes (description, tags, timestamps, revision
number), as upstream's model does. ``used`` (segment id -> project of the
network using it) and ``available`` (its free ids) are computed per read.
"""
from __future__ import annotations

from neutrino.resources import validators as v
from neutrino.resources.attributes import attr, resource
from neutrino.resources.extensions import described

NETWORK_SEGMENT_RANGE_EXTENSION = described("network-segment-range")

# The types a range may be of (upstream's NETWORK_SEGMENT_RANGE_TYPES).
RANGE_TYPES = ("vlan", "vxlan", "gre", "geneve")
# The widest id space of those (GRE's); each type's own is checked by the plugin.
LIMIT = (1, 2 ** 32 - 1)

NETWORK_SEGMENT_RANGE = resource(
    "network_segment_range", "network_segment_ranges",
    attr("id", v.uuid, is_filter=True, is_sort_key=True, convert_filter=str),
    attr("name", v.string(255), default="", allow_post=True, allow_put=True,
         is_filter=True, is_sort_key=True),
    attr("description", v.string(255), default="", allow_post=True, allow_put=True,
         is_filter=True, is_sort_key=True),
    # Upstream's list reaches its object layer unchecked, where every field
    # filters and sorts: so do these.
    attr("default", is_filter=True, is_sort_key=True, convert_filter=v.filter_bool),
    attr("shared", v.boolean, default=True, allow_post=True, is_filter=True,
         is_sort_key=True, convert_filter=v.filter_bool),
    # Accepted on POST as on every resource, never shown (upstream drops it).
    attr("tenant_id", v.string(255), default=None, allow_post=True, is_visible=False),
    attr("project_id", v.string(255), default=None, allow_post=True,
         required_by_policy=True, is_filter=True, is_sort_key=True),
    # Not given: refused by the plugin as a type without ranges (upstream's 400).
    attr("network_type", v.or_none(v.values(*RANGE_TYPES)), default=None, allow_post=True,
         is_filter=True, is_sort_key=True),
    attr("physical_network", v.or_none(v.string(64)), default=None, allow_post=True,
         is_filter=True, is_sort_key=True),
    attr("minimum", v.integer(*LIMIT, bits=64), allow_post=True, allow_put=True,
         is_filter=True, is_sort_key=True),
    attr("maximum", v.integer(*LIMIT, bits=64), allow_post=True, allow_put=True,
         is_filter=True, is_sort_key=True),
    attr("used"),
    attr("available"),
    attr("created_at", is_filter=True, is_sort_key=True),
    attr("updated_at", is_filter=True, is_sort_key=True),
    attr("revision_number", is_filter=True, is_sort_key=True, convert_filter=v.filter_int),
    # ``tag-creation``: tags may be given on POST.
    attr("tags", v.list_of(v.string(255)), default=[], allow_post=True),
    url_name="network-segment-ranges",
)

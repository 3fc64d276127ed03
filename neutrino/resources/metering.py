"""``metering`` and ``metering_source_and_destination_fields``, declared as data.

Labels name traffic to count; rules say which (direction, prefixes,
excluded). Neither has standard attributes, nor can be updated, as
upstream. Both live under the ``/metering`` path prefix. A rule shows no
project: it belongs to its label's project, which policy checks read.
"""
from __future__ import annotations

from neutrino.resources import validators as v
from neutrino.resources.attributes import Attribute, attr, resource
from neutrino.resources.extensions import described

METERING = described("metering")
SOURCE_AND_DESTINATION = described("metering_source_and_destination_fields")
DIRECTIONS = ("ingress", "egress")
PREFIXES = ("remote_ip_prefix", "source_ip_prefix", "destination_ip_prefix")


def _project(visible: bool = True) -> list[Attribute]:
    return [attr(name, v.string(255), default=None, allow_post=True, required_by_policy=True,
                 is_visible=visible, is_filter=visible, is_sort_key=visible)
            for name in ("tenant_id", "project_id")]


METERING_LABEL = resource(
    "metering_label", "metering_labels",
    attr("id", v.uuid, is_filter=True, is_sort_key=True, convert_filter=str),
    attr("name", v.string(255), default="", allow_post=True, is_filter=True,
         is_sort_key=True),
    attr("description", v.string(1024), default="", allow_post=True, is_filter=True,
         is_sort_key=True),
    *_project(),
    attr("shared", v.boolean, default=False, allow_post=True, is_filter=True,
         is_sort_key=True, convert_filter=v.filter_bool),
    has_tags=False, url_name="metering/metering-labels",
)


METERING_LABEL_RULE = resource(
    "metering_label_rule", "metering_label_rules",
    attr("id", v.uuid, is_filter=True, is_sort_key=True, convert_filter=str),
    attr("metering_label_id", v.uuid, allow_post=True, is_filter=True, is_sort_key=True,
         required_by_policy=True, convert_filter=str),
    attr("direction", v.values(*DIRECTIONS), allow_post=True, is_filter=True,
         is_sort_key=True),
    attr("excluded", v.boolean, default=False, allow_post=True, is_filter=True,
         is_sort_key=True, convert_filter=v.filter_bool),
    # Checked by the plugin, which words the error as upstream does.
    attr("remote_ip_prefix", default=None, allow_post=True, is_filter=True,
         is_sort_key=True),
    attr("source_ip_prefix", default=None, allow_post=True, allow_put=True,
         is_filter=True, is_sort_key=True),
    attr("destination_ip_prefix", default=None, allow_post=True, allow_put=True,
         is_filter=True, is_sort_key=True),
    *_project(visible=False),
    has_tags=False, url_name="metering/metering-label-rules",
)

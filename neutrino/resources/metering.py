"""``metering`` and ``metering_source_and_destination_fields``, declared as data.

Labels name traffic to count; rules say which (direction, prefixes,
excluded). Neither has standard attributes, nor can be updated, as
upstream. Both live under the ``/metering`` path prefix. A rule shows no
project: it belongs to its label's project, which policy checks read.
"""
from __future__ import annotations

from neutrino.resources import validators as v
from neutrino.resources.attributes import Attribute, ResourceDef, attr
from neutrino.resources.extensions import ExtensionDescriptor

METERING = ExtensionDescriptor("metering", "Neutron Metering", "Neutron Metering extension.",
                               "2013-06-12T10:00:00-00:00")
SOURCE_AND_DESTINATION = ExtensionDescriptor(
    "metering_source_and_destination_fields",
    "Neutron Metering with source and destination filtering",
    "Neutron Metering extension that enables the use of source and destination IP prefixes "
    "to create metering label rules.", "2020-08-21T08:12:00-00:00")
DIRECTIONS = ("ingress", "egress")
PREFIXES = ("remote_ip_prefix", "source_ip_prefix", "destination_ip_prefix")


def _project(visible: bool = True) -> list[Attribute]:
    return [attr(name, v.string(255), default=None, allow_post=True, required_by_policy=True,
                 is_visible=visible, is_filter=visible, is_sort_key=visible)
            for name in ("tenant_id", "project_id")]


def metering_label() -> ResourceDef:
    r = ResourceDef("metering_label", "metering_labels", has_tags=False,
                    url_name="metering/metering-labels")
    r.add(
        attr("id", v.uuid, is_filter=True, is_sort_key=True, convert_filter=str),
        attr("name", v.string(255), default="", allow_post=True, is_filter=True,
             is_sort_key=True),
        attr("description", v.string(1024), default="", allow_post=True, is_filter=True,
             is_sort_key=True),
        *_project(),
        attr("shared", v.boolean, default=False, allow_post=True, is_filter=True,
             is_sort_key=True, convert_filter=v.filter_bool),
    )
    return r


def metering_label_rule() -> ResourceDef:
    r = ResourceDef("metering_label_rule", "metering_label_rules", has_tags=False,
                    url_name="metering/metering-label-rules")
    r.add(
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
    )
    return r

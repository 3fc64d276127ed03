"""``logging``: logs of security-group traffic, declared as data.

A log names what to log (``resource_type``: only ``security_group``), the
group whose ports are logged (``resource_id``), one port (``target_id``),
or neither (every port of its project), and which packets: those a rule
accepts, those none does, or both. Only ``name``, ``description`` and
``enabled`` change after creation. Both collections live under ``/log``;
``loggable_resources`` lists the types a driver can log.
"""
from __future__ import annotations

from neutrino.resources import validators as v
from neutrino.resources.attributes import attr as attribute
from neutrino.resources.attributes import resource, standard_attributes
from neutrino.resources.extensions import described

LOGGING = described("logging")
SECURITY_GROUP = "security_group"
ACCEPT, DROP, ALL = "ACCEPT", "DROP", "ALL"
EVENTS = (ACCEPT, DROP, ALL)

LOG = resource(
    "log", "logs",
    *[a for a in standard_attributes() if a.name != "tags"],
    # checked by the plugin against the types its drivers log, in upstream's words
    attribute("resource_type", v.string(36), allow_post=True, required_by_policy=True,
              is_filter=True, is_sort_key=True),
    attribute("resource_id", v.or_none(v.uuid), default=None, allow_post=True,
              is_filter=True, is_sort_key=True),
    attribute("target_id", v.or_none(v.uuid), default=None, allow_post=True,
              is_filter=True, is_sort_key=True),
    attribute("event", v.values(*EVENTS), default=ALL, allow_post=True, is_filter=True),
    attribute("enabled", v.boolean, default=True, allow_post=True, allow_put=True,
              is_filter=True, is_sort_key=True, convert_filter=v.filter_bool),
    has_tags=False, url_name="log/logs",
)

LOGGABLE_RESOURCE = resource(
    "loggable_resource", "loggable_resources",
    attribute("type"),
    has_tags=False, url_name="log/loggable-resources", primary_key="type",
)

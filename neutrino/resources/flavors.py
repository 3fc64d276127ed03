"""``flavors``: flavors of advanced services and service profiles, as data.

Neither resource has an owner nor standard attributes, as upstream: a
flavor names a loaded service type (checked against the loaded plugins by
the flavors plugin, which alone knows them) and the profiles bound to it;
a profile names a provider's driver or carries metainfo. A flavor's
``service_profiles`` is accepted on create and update but, as upstream,
changes nothing: profiles are bound through
``/v2.0/flavors/{id}/service_profiles``.
"""
from __future__ import annotations

from neutrino.resources import validators as v
from neutrino.resources.attributes import attr, resource
from neutrino.resources.extensions import described

FLAVORS = described("flavors")

_DESCRIPTION = v.or_none(v.string(1024))


FLAVOR = resource(
    "flavor", "flavors",
    attr("id", v.uuid, is_filter=True, is_sort_key=True, convert_filter=str),
    attr("name", v.string(255), default="", allow_post=True, allow_put=True,
         is_filter=True, is_sort_key=True),
    attr("description", _DESCRIPTION, default="", allow_post=True, allow_put=True,
         is_filter=True, is_sort_key=True),
    attr("service_type", v.string(36), allow_post=True, is_filter=True, is_sort_key=True),
    attr("service_profiles", v.list_of(v.uuid), default=[], allow_post=True,
         allow_put=True),
    # null is taken as "not given" (upstream converts only what is not null).
    attr("enabled", v.or_none(v.boolean), default=True, allow_post=True, allow_put=True,
         is_filter=True, is_sort_key=True, convert_filter=v.filter_bool),
    has_tags=False,
)


SERVICE_PROFILE = resource(
    "service_profile", "service_profiles",
    attr("id", v.uuid, is_filter=True, is_sort_key=True, convert_filter=str),
    attr("description", _DESCRIPTION, default="", allow_post=True, allow_put=True,
         is_filter=True, is_sort_key=True),
    attr("driver", v.string(1024), default="", allow_post=True, allow_put=True,
         is_filter=True, is_sort_key=True),
    # Free text; its column holds 4096 characters.
    attr("metainfo", v.or_none(v.string(4096)), default="", allow_post=True,
         allow_put=True, is_sort_key=True),
    attr("enabled", v.or_none(v.boolean), default=True, allow_post=True, allow_put=True,
         is_filter=True, is_sort_key=True, convert_filter=v.filter_bool),
    has_tags=False,
)

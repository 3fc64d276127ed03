"""``address-scope``: address scopes, declared as data.

A scope groups subnet pools whose prefixes never overlap, so addresses
within it can be routed without NAT. Upstream gives scopes no standard
attributes: no description, tags, timestamps or revision number. ``shared``
is an answer per caller, from RBAC entries (``rbac-address-scope``).
"""
from __future__ import annotations

from neutrino.resources import validators as v
from neutrino.resources.attributes import AttributeMap, attr, resource

ADDRESS_SCOPE = resource(
    "address_scope", "address_scopes",
    attr("id", v.uuid, is_filter=True, is_sort_key=True, convert_filter=str),
    attr("name", v.string(255), default="", allow_post=True, allow_put=True,
         is_filter=True, is_sort_key=True),
    attr("tenant_id", v.string(255), default=None, allow_post=True,
         required_by_policy=True, is_filter=True, is_sort_key=True),
    attr("project_id", v.string(255), default=None, allow_post=True,
         required_by_policy=True, is_filter=True, is_sort_key=True),
    # Per caller (RBAC), so not a column to sort on.
    attr("shared", v.boolean, default=False, allow_post=True, allow_put=True,
         is_filter=True, enforce_policy=True, required_by_policy=True,
         convert_filter=v.filter_bool),
    attr("ip_version", v.values(4, 6, convert=v.integer()), allow_post=True,
         is_filter=True, is_sort_key=True, convert_filter=v.filter_int),
    has_tags=False, url_name="address-scopes",
)


# What ``address-scope`` adds to subnet pools.
SUBNETPOOL_ADDRESS_SCOPE: AttributeMap = {"subnetpools": [
    attr("address_scope_id", v.or_none(v.uuid), default=None, allow_post=True,
         allow_put=True, is_filter=True, is_sort_key=True)]}

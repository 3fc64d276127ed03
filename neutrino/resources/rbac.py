"""``rbac_policy``: who besides its owner may use an object, declared as data.

Upstream validates ``target_tenant`` and ``object_type`` while parsing the
body, so a bad value is a 400 ``InvalidInput`` before any policy check;
whether an action fits the object type is the plugin's question
(``InvalidActionForType``), since it depends on the loaded extensions.
"""
from __future__ import annotations

import re
from typing import Any

from neutrino.resources import validators as v
from neutrino.resources.attributes import attr, resource

WILDCARD = "*"
ACCESS_AS_SHARED = "access_as_shared"
ACCESS_AS_EXTERNAL = "access_as_external"
# Object types with RBAC here, and the actions each accepts. Networks take
# ``access_as_external`` with the external-net extension; upstream adds
# further types (qos_policy, security_group, ...) with their plugins.
OBJECT_TYPES: dict[str, tuple[str, ...]] = {"network": (ACCESS_AS_SHARED, ACCESS_AS_EXTERNAL),
                                             "subnetpool": (ACCESS_AS_SHARED,),
                                             "address_scope": (ACCESS_AS_SHARED,),
                                             "security_group": (ACCESS_AS_SHARED,),
                                             "address_group": (ACCESS_AS_SHARED,)}

# A project id as Keystone writes it (32 hex digits) or as a dashed UUID.
_PROJECT_ID = re.compile(r"^(?:[0-9a-fA-F]{32}|[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12})$")


def target_tenant(value: Any) -> str:
    if isinstance(value, str) and (value == WILDCARD or _PROJECT_ID.match(value)):
        return value
    # NotConvertible: upstream reports it as "Invalid input for operation".
    raise v.NotConvertible(f"'{value}' is not a valid target project ID; "
                           f"expected a UUID or '{WILDCARD}'")


def object_type(value: Any) -> str:
    if isinstance(value, str) and value in OBJECT_TYPES:
        return value
    raise v.NotConvertible(f"'{value}' is not a valid RBAC object type")


RBAC_POLICY = resource(
    "rbac_policy", "rbac_policies",
    attr("id", v.uuid, is_filter=True, is_sort_key=True, convert_filter=str),
    attr("project_id", v.string(255), default=None, allow_post=True,
         required_by_policy=True, is_filter=True, is_sort_key=True),
    attr("tenant_id", v.string(255), default=None, allow_post=True,
         required_by_policy=True, is_filter=True, is_sort_key=True),
    attr("object_type", object_type, allow_post=True, enforce_policy=True,
         is_filter=True, is_sort_key=True),
    attr("object_id", v.uuid, allow_post=True, enforce_policy=True,
         is_filter=True, is_sort_key=True),
    attr("action", v.string(255), allow_post=True, enforce_policy=True,
         is_filter=True, is_sort_key=True),
    attr("target_tenant", target_tenant, allow_post=True, allow_put=True,
         enforce_policy=True, is_filter=True, is_sort_key=True),
    has_tags=False, url_name="rbac-policies",
)

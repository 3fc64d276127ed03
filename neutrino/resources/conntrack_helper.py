"""Router conntrack helpers declared as data (``l3-conntrack-helper``).

``/v2.0/routers/{id}/conntrack_helpers``: the owner is the router's
(``ext_parent_owner``); ``expose-l3-conntrack-helper`` shows each router's
helpers. As upstream, reads do not look the router up for the caller: a
router the caller may not see lists nothing, and its helpers are hidden as
the web layer's 404 (``quiet_parent``).
"""
from __future__ import annotations

from typing import Any

from neutrino.resources import validators as v
from neutrino.resources.attributes import AttributeMap, attr, resource
from neutrino.resources.port_forwarding import pf_protocol

CTH_PARENT_KEY = "router_id"


def cth_protocol(value: Any) -> str:
    """Upstream's protocol check (the port forwardings' names), where a
    number that is not a string is refused before it is looked at."""
    if not isinstance(value, str):
        raise v.NotConvertible(f"Input value {value} must be string type")
    return pf_protocol(value)


CONNTRACK_HELPER = resource(
    "conntrack_helper", "conntrack_helpers",
    attr("id", v.uuid, is_filter=True, is_sort_key=True, convert_filter=str),
    attr("project_id", v.string(255), default=None, allow_post=True,
         required_by_policy=True, is_visible=False),
    attr("tenant_id", v.string(255), default=None, allow_post=True,
         required_by_policy=True, is_visible=False),
    attr("protocol", cth_protocol, allow_post=True, allow_put=True, is_filter=True,
         is_sort_key=True),
    attr("port", v.integer(1, 65535), allow_post=True, allow_put=True, is_filter=True,
         is_sort_key=True),
    attr("helper", v.string(64), allow_post=True, allow_put=True, is_filter=True,
         is_sort_key=True),
    attr(CTH_PARENT_KEY, is_visible=False),
    parent="routers", parent_key=CTH_PARENT_KEY, has_tags=False,
    policy_name="router_conntrack_helper", quiet_parent=True,
)

# ``expose-l3-conntrack-helper``: filled by the plugin for a whole list at once.
EXPOSED_IN_ROUTERS: AttributeMap = {"routers": [attr("conntrack_helpers")]}

"""NDP proxies (``l3-ndp-proxy``) and the routers' ``enable_ndp_proxy``
(``l3-ext-ndp-proxy``), declared as data.

An NDP proxy makes a router answer neighbour solicitations on its gateway
for one global IPv6 address of a port behind it, so the external network
reaches that address without routes of its own. Only ``name`` and
``description`` change after creation; ``ip_address``, when not given, is
the port's first address on a subnet the router is attached to.
"""
from __future__ import annotations

from typing import Any

from neutrino.resources import validators as v
from neutrino.resources.attributes import AttributeMap, attr, resource
from neutrino.resources.extensions import described

NDP_PROXY_EXT = described("l3-ndp-proxy")
EXT_NDP_PROXY = described("l3-ext-ndp-proxy")
ENABLE_NDP_PROXY = "enable_ndp_proxy"


def boolean_or_none(value: Any) -> bool | None:
    """``convert_to_boolean_if_not_none``: null is kept (then the default rules)."""
    return None if value is None else v.boolean(value)


NDP_PROXY = resource(
    "ndp_proxy", "ndp_proxies",
    attr("id", v.uuid, allow_post=False, is_filter=True, is_sort_key=True, convert_filter=str),
    attr("name", v.string(255), default="", allow_post=True, allow_put=True, is_filter=True,
         is_sort_key=True),
    attr("description", v.string(255), default="", allow_post=True, allow_put=True,
         is_filter=True),
    attr("tenant_id", v.string(255), default=None, allow_post=True, required_by_policy=True,
         is_filter=True, is_sort_key=True),
    attr("project_id", v.string(255), default=None, allow_post=True, required_by_policy=True,
         is_filter=True, is_sort_key=True),
    attr("router_id", v.uuid, allow_post=True, is_filter=True, is_sort_key=True,
         convert_filter=str),
    attr("port_id", v.uuid, allow_post=True, is_filter=True, is_sort_key=True,
         convert_filter=str),
    attr("ip_address", v.or_none(v.ip_address), default=None, allow_post=True,
         is_filter=True, is_sort_key=True),
    attr("created_at", is_filter=True, is_sort_key=True),
    attr("updated_at", is_filter=True, is_sort_key=True),
    attr("revision_number", is_filter=True, is_sort_key=True, convert_filter=v.filter_int),
    has_tags=False,
)

# ``l3-ext-ndp-proxy``: unset (``ATTR_NOT_SPECIFIED`` upstream) lets the plugin
# decide from the gateway and [DEFAULT] enable_ndp_proxy_by_default.
ROUTER_ENABLE_NDP_PROXY: AttributeMap = {"routers": [
    # Not a filter here: a list filtered by it would need the state table's
    # join, and a filter that is accepted must filter.
    attr(ENABLE_NDP_PROXY, boolean_or_none, default=None, allow_post=True, allow_put=True)]}

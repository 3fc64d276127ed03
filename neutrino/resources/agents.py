"""``agent`` and ``availability_zone``: the agents on hosts, as data.

Agents create their records themselves through state reports; the API only
shows them, lets an admin disable one (``admin_state_up``) or describe it,
and forgets a dead one (DELETE). Availability zones are read-only and
derived from the agents' reports.
"""
from __future__ import annotations

from neutrino.resources import validators as v
from neutrino.resources.attributes import Attribute, attr, resource

_B = v.filter_bool


AGENT = resource(
    "agent", "agents",
    *[attr(name, is_filter=True, is_sort_key=True)
      for name in ("id", "agent_type", "binary", "topic", "host", "availability_zone")],
    attr("admin_state_up", v.boolean, allow_put=True, is_filter=True, is_sort_key=True,
         convert_filter=_B),
    attr("description", v.or_none(v.string(255)), allow_put=True, is_filter=True,
         is_sort_key=True),
    attr("created_at", is_filter=True, is_sort_key=True),
    attr("started_at", is_filter=True, is_sort_key=True),
    attr("heartbeat_timestamp", is_filter=True, is_sort_key=True),
    attr("alive", is_filter=True, convert_filter=_B),
    attr("configurations"),
    attr("resources_synced", is_filter=True, convert_filter=_B),
    has_tags=False,
)

AVAILABILITY_ZONE = resource(
    "availability_zone", "availability_zones",
    attr("name", is_filter=True, is_sort_key=True),
    attr("resource", is_filter=True, is_sort_key=True),
    attr("state", is_filter=True, is_sort_key=True),
    has_tags=False,
)


def _zone_attributes(sortable_hints: bool) -> list[Attribute]:
    """``availability_zone_hints`` (asked for on create) and the zones of the
    agents hosting the resource (read-only)."""
    return [attr("availability_zones"),
            attr("availability_zone_hints", v.availability_zone_hints, allow_post=True,
                 default=[], is_sort_key=sortable_hints)]


# ``network_availability_zone``: the zones of the DHCP agents serving the network.
NETWORK_AZ = {"networks": _zone_attributes(sortable_hints=True)}
# ``router_availability_zone``: the zones of the L3 agents hosting the router.
ROUTER_AZ = {"routers": _zone_attributes(sortable_hints=False)}

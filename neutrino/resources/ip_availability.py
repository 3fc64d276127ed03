"""``network-ip-availability``: per network and subnet address usage, as data.

Read-only and computed: ``ip_version`` only filters (it is never shown at
the top level; each subnet entry carries its own), as upstream.
"""
from __future__ import annotations

from neutrino.resources import validators as v
from neutrino.resources.attributes import attr, resource
from neutrino.resources.extensions import described

AVAILABILITY = described("network-ip-availability")
DETAILS = described("network-ip-availability-details")


NETWORK_IP_AVAILABILITY = resource(
    "network_ip_availability", "network_ip_availabilities",
    attr("network_id", is_filter=True, is_sort_key=True, convert_filter=str),
    attr("network_name", is_filter=True),
    attr("tenant_id", is_filter=True),
    attr("project_id", is_filter=True),
    attr("total_ips"),
    attr("used_ips"),
    attr("subnet_ip_availability"),
    # Upstream compares the raw text, so a non-number matches nothing (no 400).
    attr("ip_version", is_visible=False, is_filter=True),
    attr("ip_availability_details"),
    has_tags=False, url_name="network-ip-availabilities", primary_key="network_id",
)


def version_filter(values: list[str]) -> list[int]:
    """The IP versions a filter names; text that is no number names none."""
    out = []
    for value in values:
        try:
            out.append(v.filter_int(str(value)))
        except (ValueError, v.Invalid):
            continue
    return out

"""``service-type``: the providers of advanced services, read-only, as data."""
from __future__ import annotations

from neutrino.resources import validators as v
from neutrino.resources.attributes import attr, resource
from neutrino.resources.extensions import described

SERVICE_TYPE = described("service-type")


SERVICE_PROVIDER = resource(
    "service_provider", "service_providers",
    attr("service_type", is_filter=True),
    attr("name", is_filter=True),
    attr("default", is_filter=True, convert_filter=v.filter_bool),
    # What service profiles name; never shown, as upstream.
    attr("driver", is_visible=False),
    has_tags=False, url_name="service-providers", primary_key="name",
)

"""``auto-allocated-topology`` declared as data: the topology a project gets
with one call, and the ``is_default`` flag it picks its external network by.
"""
from __future__ import annotations

from neutrino.resources import validators as v
from neutrino.resources.attributes import AttributeMap, attr, resource

TOPOLOGY = resource(
    "auto_allocated_topology", "auto_allocated_topologies",
    attr("id"), attr("project_id"), attr("tenant_id"),
    has_tags=False, url_name="auto-allocated-topology",
)

# Which external network topologies are built on; admin-only by policy.
IS_DEFAULT: AttributeMap = {"networks": [
    attr("is_default", v.boolean, default=False, allow_post=True, allow_put=True,
         enforce_policy=True, required_by_policy=True)]}

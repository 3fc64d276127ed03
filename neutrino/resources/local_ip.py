"""``local_ip``: node-local virtual IPs, declared as data.

A local IP is an address of a network (``local_ip_address``), held by a
port (``local_port_id``: given, or made with device owner
``network:local_ip`` when only the network is). Ports associated with it
(``/v2.0/local_ips/{id}/port_associations``, keyed by ``fixed_port_id``)
answer for it to instances on their own host: with ``ip_mode`` translate
the address is translated to the associated port's ``fixed_ip``, with
passthrough it reaches that port unchanged. Only ``name`` and
``description`` change after creation; associations never change.
"""
from __future__ import annotations

from neutrino.resources import validators as v
from neutrino.resources.attributes import attr, resource, standard_attributes
from neutrino.resources.extensions import described

LOCAL_IP_EXT = described("local_ip")
TRANSLATE, PASSTHROUGH = "translate", "passthrough"
IP_MODES = (TRANSLATE, PASSTHROUGH)
DEVICE_OWNER = "network:local_ip"
PARENT_KEY = "local_ip_id"

LOCAL_IP = resource(
    "local_ip", "local_ips",
    *[a for a in standard_attributes() if a.name != "tags"],
    attr("local_port_id", v.uuid, default=None, allow_post=True, is_filter=True,
         is_sort_key=True, convert_filter=str),
    attr("network_id", v.uuid, default=None, allow_post=True, is_filter=True,
         is_sort_key=True, convert_filter=str),
    attr("local_ip_address", v.or_none(v.ip_address), default=None, allow_post=True,
         is_filter=True, is_sort_key=True),
    attr("ip_mode", v.one_of(*IP_MODES), default=TRANSLATE, allow_post=True,
         is_filter=True, is_sort_key=True),
    has_tags=False,
)

PORT_ASSOCIATION = resource(
    "port_association", "port_associations",
    attr(PARENT_KEY),
    attr("local_ip_address", is_filter=True, is_sort_key=True),
    attr("fixed_port_id", v.uuid, allow_post=True, is_filter=True, is_sort_key=True,
         convert_filter=str),
    attr("fixed_ip", v.or_none(v.ip_address), default=None, allow_post=True,
         is_filter=True, is_sort_key=True),
    attr("host", is_filter=True, is_sort_key=True),
    attr("project_id", v.string(255), default=None, allow_post=True,
         required_by_policy=True, is_visible=False),
    attr("tenant_id", v.string(255), default=None, allow_post=True,
         required_by_policy=True, is_visible=False),
    parent="local_ips", parent_key=PARENT_KEY, has_tags=False,
    policy_name="local_ip_port_association", primary_key="fixed_port_id",
    scoped_by_parent=True, lists_unseen_parent=True,
)

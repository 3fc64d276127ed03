"""``port-security`` declared as data: whether a network's and a port's
traffic is filtered (security groups, allowed address pairs)."""
from __future__ import annotations

from neutrino.resources import validators as v
from neutrino.resources.attributes import AttributeMap, attr

ENABLED = "port_security_enabled"

PORT_SECURITY: AttributeMap = {
    "networks": [attr(ENABLED, v.boolean, default=True, allow_post=True, allow_put=True,
                      is_filter=True, enforce_policy=True, convert_filter=v.filter_bool)],
    # None on create means "as the network says".
    "ports": [attr(ENABLED, v.boolean, default=None, allow_post=True, allow_put=True,
                   is_filter=True, enforce_policy=True, convert_filter=v.filter_bool)],
}

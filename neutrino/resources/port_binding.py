"""The ``binding`` extension of ports declared as data: where and how a port
is wired.

The caller says where the port lives, what kind of NIC it is and anything
the mechanism drivers need to know; the drivers answer with the VIF type
and details, which only policy-allowed callers see.
"""
from __future__ import annotations

import json
from typing import Any

from neutrino.resources import validators as v
from neutrino.resources.attributes import AttributeMap, attr

HOST = "binding:host_id"
VNIC = "binding:vnic_type"
PROFILE = "binding:profile"
VIF_TYPE = "binding:vif_type"
VIF_DETAILS = "binding:vif_details"

VNIC_NORMAL = "normal"
VNIC_DIRECT = "direct"
VNIC_MACVTAP = "macvtap"
VNIC_BAREMETAL = "baremetal"
VNIC_DIRECT_PHYSICAL = "direct-physical"
VNIC_TYPES = (VNIC_NORMAL, VNIC_DIRECT, VNIC_MACVTAP, VNIC_BAREMETAL, VNIC_DIRECT_PHYSICAL,
              "virtio-forwarder", "smart-nic", "vdpa", "remote-managed")


def host(value: Any) -> str:
    """Upstream stores whatever scalar it is given as text; null clears it."""
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise v.Invalid(f"'{value}' is not a valid string")
    text = str(value)
    if len(text) > 255:
        raise v.Invalid(f"'{text}' exceeds maximum length of 255")
    return text


def vnic_type(value: Any) -> str:
    if value not in VNIC_TYPES:
        raise v.Invalid(f"{value} is not in valid_values")
    return str(value)


def profile(value: Any) -> dict[str, Any]:
    out = v.dict_or_empty(value)
    if len(json.dumps(out)) > 4095:
        raise v.Invalid("binding:profile is too large")
    return out


BINDING: AttributeMap = {"ports": [
    attr(HOST, host, default="", allow_post=True, allow_put=True, is_filter=True,
         enforce_policy=True),
    attr(VNIC, vnic_type, default=VNIC_NORMAL, allow_post=True, allow_put=True,
         is_filter=True, enforce_policy=True),
    attr(PROFILE, profile, default=None, allow_post=True, allow_put=True,
         enforce_policy=True),
    attr(VIF_TYPE, enforce_policy=True),
    attr(VIF_DETAILS, enforce_policy=True),
]}

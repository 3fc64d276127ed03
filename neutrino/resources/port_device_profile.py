"""``port-device-profile`` declared as data: the accelerator (Cyborg) device
profile a port was created for; it cannot change afterwards."""
from __future__ import annotations

from neutrino.resources import validators as v
from neutrino.resources.attributes import AttributeMap, attr

DEVICE_PROFILE = "device_profile"

PORT_DEVICE_PROFILE: AttributeMap = {
    "ports": [attr(DEVICE_PROFILE, v.or_none(v.string(255)), default=None,
                   allow_post=True)],
}

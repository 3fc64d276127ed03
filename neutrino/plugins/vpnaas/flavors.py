"""``vpn-flavors``: a VPN service made with a flavor is served by the
provider the flavor's service profile names, as upstream's plugin picks it
(the flavors plugin loaded, a VPN flavor, enabled, a profile naming a
provider's driver); only the IPsec (strongSwan) provider exists here.
"""
from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins.flavor_bindings import flavor_row
from neutrino.plugins.vpnaas import exceptions as exc

DRIVERS = ("neutron_vpnaas.services.vpn.service_drivers.ipsec.IPsecVPNDriver",
           "neutron_vpnaas.services.vpn.service_drivers.ipsec.IPsecVpnDriver")


class VpnFlavors:
    def __init__(self, db: Any) -> None:
        self.db = db
        self.loaded = False

    def check(self, ctx: Context, flavor_id: str | None) -> None:
        if flavor_id is None:
            return
        if not self.loaded:
            raise exc.FlavorsPluginNotLoaded()
        b, p = t.flavorserviceprofilebindings.c, t.serviceprofiles.c
        with self.db.reader() as conn:
            flavor = flavor_row(conn, flavor_id)
            if flavor is None:
                raise errors.FlavorNotFound(flavor_id=flavor_id)
            if flavor.service_type != "VPN":
                raise errors.InvalidServiceType(service_type=flavor.service_type)
            if not flavor.enabled:
                raise exc.FlavorDisabled()
            drivers = [r.driver for r in conn.execute(
                sa.select(p.driver).join(t.flavorserviceprofilebindings,
                                         b.service_profile_id == p.id)
                .where(b.flavor_id == flavor_id, p.enabled.is_(True)))]
        if not any(d in DRIVERS for d in drivers):
            raise exc.NoProviderFoundForFlavor(flavor_id=flavor_id)

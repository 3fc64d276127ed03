"""``l3-flavors``: a router made with a flavor is served by the provider
the flavor's first bound service profile names, as upstream's L3 driver
controller chooses it.

Only upstream's four in-tree providers exist here. Each supports exactly
one ``ha``/``distributed`` combination; a router asking for a flag its
flavor's provider does not support is refused (InvalidInput). A flag left
out is not taken from the provider: it keeps its configured default, which
is what upstream does (a ``dvr`` flavored router made without
``distributed`` is not distributed there either). Upstream checks neither
the flavor's ``enabled`` nor its service type; neither is checked here.
"""
from __future__ import annotations

from typing import Any, Callable

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.db import tables as t
from neutrino.plugins.flavor_bindings import flavor_row, profile_row

FLAVORS_PLUGINS = ("flavors", "neutron.services.flavors.flavors_plugin.FlavorsPlugin")
_PATH = "neutron.services.l3_router.service_providers"
# provider name -> (its driver, what it supports as {flag: the one value})
PROVIDERS: dict[str, tuple[str, dict[str, bool]]] = {
    "dvrha": (f"{_PATH}.dvrha.DvrHaDriver", {"distributed": True, "ha": True}),
    "dvr": (f"{_PATH}.dvr.DvrDriver", {"distributed": True, "ha": False}),
    "ha": (f"{_PATH}.ha.HaDriver", {"distributed": False, "ha": True}),
    "single_node": (f"{_PATH}.single_node.SingleNodeDriver",
                    {"distributed": False, "ha": False}),
}
L3 = "L3_ROUTER_NAT"


def enabled(conf: Any) -> bool:
    """Whether the flavors plugin is loaded (upstream lists ``l3-flavors`` only then)."""
    return any(p.strip() in FLAVORS_PLUGINS for p in conf.service_plugins)


def provider_of(conn: Connection, flavor_id: Any,
                with_driver: Callable[[str], list[dict[str, Any]]]) -> str:
    """The provider a router of ``flavor_id`` gets, with upstream's errors
    on the way: the flavor, a bound profile, an enabled one, a provider
    with its driver."""
    flavor = flavor_row(conn, str(flavor_id)) if isinstance(flavor_id, str) else None
    if flavor is None:
        raise errors.FlavorNotFound(flavor_id=flavor_id)
    sp_id = conn.execute(
        sa.select(t.flavorserviceprofilebindings.c.service_profile_id)
        .where(t.flavorserviceprofilebindings.c.flavor_id == flavor.id)
        .order_by(t.flavorserviceprofilebindings.c.service_profile_id).limit(1)).scalar()
    if sp_id is None:
        raise errors.FlavorServiceProfileBindingNotFound(sp_id="", fl_id=flavor.id)
    profile = profile_row(conn, sp_id)
    if not profile.enabled:
        raise errors.ServiceProfileDisabled()
    providers = with_driver(profile.driver)
    if not providers:
        raise errors.ServiceProfileDriverNotFound(driver=profile.driver)
    first = providers[0]
    if first.get("service_type") != L3 or first.get("name") not in PROVIDERS:
        # No router driver of that name could serve it (upstream fails unanswered).
        raise errors.ServiceProfileDriverNotFound(driver=profile.driver)
    return str(first["name"])


def check_flags(provider: str, data: dict[str, Any]) -> None:
    """The ``distributed`` and ``ha`` a request names are what ``provider`` supports."""
    for flag in ("distributed", "ha"):
        asked = data.get(flag)
        if isinstance(asked, bool) and asked != PROVIDERS[provider][1][flag]:
            raise errors.InvalidInput(
                error_message=f"Provider {provider} does not support {flag}={asked}")

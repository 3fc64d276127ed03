"""A server with the flavors plugin, the router and QoS plugins (service
types a flavor may name), one configured L3 provider and one of another
service (drivers a service profile may name)."""
from __future__ import annotations

from typing import Any, Iterator

import pytest

from tests.api._helpers import created, unique
from tests.conftest import Server

DRIVER = "neutron.services.l3_router.service_providers.single_node.SingleNodeDriver"
VPN_DRIVER = "neutron_vpnaas.services.vpn.service_drivers.ipsec.IPsecVPNDriver"
CONF = ("service_plugins = router,qos,flavors\n"
        f"[service_providers]\nservice_provider = L3_ROUTER_NAT:single_node:{DRIVER}\n"
        f"service_provider = VPN:strongswan:{VPN_DRIVER}\n")
FLAVORS = "/v2.0/flavors"
PROFILES = "/v2.0/service_profiles"


@pytest.fixture(scope="package")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("flavors"), extra=CONF).start()
    yield srv
    srv.stop()


def flavor(client: Any, **attrs: Any) -> dict[str, Any]:
    attrs.setdefault("name", unique("flavor"))
    attrs.setdefault("service_type", "L3_ROUTER_NAT")
    return created(client.post(FLAVORS, {"flavor": attrs}), "flavor")


def profile(client: Any, **attrs: Any) -> dict[str, Any]:
    if "driver" not in attrs:
        attrs.setdefault("metainfo", '{"data": "value"}')
    return created(client.post(PROFILES, {"service_profile": attrs}), "service_profile")


def bind(client: Any, flavor_id: str, profile_id: str) -> tuple[int, Any]:
    return client.post(f"{FLAVORS}/{flavor_id}/service_profiles",
                       {"service_profile": {"id": profile_id}})

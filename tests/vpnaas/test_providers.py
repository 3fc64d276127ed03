"""``[service_providers]`` VPN lines as upstream writes them (no server)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from neutrino.plugins.loader import PluginLoadError
from neutrino.plugins.vpnaas.plugin import VpnPlugin

IPSEC = "neutron_vpnaas.services.vpn.service_drivers.ipsec.IPsecVPNDriver"


def _conf(*lines: str) -> SimpleNamespace:
    return SimpleNamespace(service_providers=SimpleNamespace(service_provider=list(lines)))


def test_without_a_vpn_line_the_strongswan_provider_is_the_default() -> None:
    assert VpnPlugin._providers(_conf("L3_ROUTER_NAT:x:y")) == (
        {"service_type": "VPN", "name": "strongswan", "driver": IPSEC, "default": True},)


def test_a_configured_ipsec_provider_is_listed_as_configured_only() -> None:
    assert VpnPlugin._providers(_conf(f"VPN:ipsec:{IPSEC}:default")) == ()


def test_a_driver_that_is_not_ipsec_stops_start_up() -> None:
    with pytest.raises(PluginLoadError, match="VPN driver"):
        VpnPlugin._providers(_conf("VPN:cisco:neutron_vpnaas.services.vpn.cisco.Driver"))

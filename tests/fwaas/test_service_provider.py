"""``[service_providers] service_provider = FIREWALL_V2:...`` read as upstream writes it."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from neutrino.plugins.firewall.plugin import AGENT_DRIVER, DEFAULT_PROVIDER, _provider
from neutrino.plugins.loader import PluginLoadError


def conf(*lines: str) -> SimpleNamespace:
    return SimpleNamespace(service_providers=SimpleNamespace(service_provider=list(lines)))


def test_without_a_firewall_line_the_plugin_brings_upstreams_agent_driver() -> None:
    assert _provider(conf("VPN:strongswan:x.y.Z:default")) == DEFAULT_PROVIDER
    assert DEFAULT_PROVIDER["name"] == "fwaas_db" and DEFAULT_PROVIDER["driver"] == AGENT_DRIVER


def test_the_configured_default_provider_names_the_driver() -> None:
    chosen = _provider(conf(f"FIREWALL_V2:other:{AGENT_DRIVER}",
                            f"FIREWALL_V2:mine:{AGENT_DRIVER}:default"))
    assert (chosen["name"], chosen["default"]) == ("mine", True)


def test_a_driver_neutrino_does_not_serve_stops_start_up() -> None:
    ovn = "neutron_fwaas.services.firewall.service_drivers.ovn.firewall_l3_driver.OVNFwaasDriver"
    with pytest.raises(PluginLoadError, match="is not served"):
        _provider(conf(f"FIREWALL_V2:ovn:{ovn}:default"))

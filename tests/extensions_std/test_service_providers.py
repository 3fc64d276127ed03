"""``service-type``: ``GET /v2.0/service-providers``, as upstream 29 answers."""
from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path
from typing import Iterator

import pytest

from tests.conftest import Client, Server

URL = "/v2.0/service-providers"
PROVIDERS = ("[service_providers]\n"
             "service_provider = L3_ROUTER_NAT:ha:neutron.services.l3_router.ha.HaDriver\n"
             "service_provider = L3_ROUTER_NAT:single_node:neutron.sn.Driver:default\n"
             "service_provider = VPN:strongswan:neutron_vpnaas.Driver\n")


@pytest.fixture(scope="module")
def providers_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("providers"), extra=PROVIDERS).start()
    yield srv
    srv.stop()


L3_PROVIDERS = [{"service_type": "L3_ROUTER_NAT", "name": name, "default": False}
                for name in ("dvrha", "dvr", "ha", "single_node")]


def test_the_router_plugin_brings_upstreams_l3_providers(admin):
    """The session server loads ``router``: upstream's router plugin lists
    its four drivers' providers with nothing configured."""
    assert admin.get(URL) == (200, {"service_providers": L3_PROVIDERS})
    assert admin.get(f"{URL}?name=dvr")[1]["service_providers"] == [L3_PROVIDERS[1]]
    aliases = {e["alias"]: e for e in admin.get("/v2.0/extensions")[1]["extensions"]}
    assert aliases["service-type"]["name"] == "Neutron Service Type Management"


def test_configured_providers_are_listed_with_their_default(providers_server):
    admin = Client(providers_server.url)
    status, body = admin.get(URL)
    assert status == 200
    assert body["service_providers"] == [
        {"service_type": "L3_ROUTER_NAT", "name": "ha", "default": False},
        {"service_type": "L3_ROUTER_NAT", "name": "single_node", "default": True},
        {"service_type": "VPN", "name": "strongswan", "default": False}]
    assert [p["name"] for p in admin.get(f"{URL}?service_type=VPN")[1]["service_providers"]] \
        == ["strongswan"]
    assert [p["name"] for p in admin.get(f"{URL}?name=ha")[1]["service_providers"]] == ["ha"]
    assert admin.get(f"{URL}?fields=name")[1]["service_providers"] == [
        {"name": "ha"}, {"name": "single_node"}, {"name": "strongswan"}]


def test_readers_see_providers_and_callers_without_a_role_do_not(providers_server):
    reader = Client(providers_server.url, uuid.uuid4().hex, "reader")
    assert len(reader.get(URL)[1]["service_providers"]) == 3
    nobody = Client(providers_server.url, uuid.uuid4().hex, "observer")
    assert nobody.get(URL) == (200, {"service_providers": []})


def test_a_malformed_provider_line_stops_startup(tmp_path: Path):
    conf = tmp_path / "n.conf"
    conf.write_text(f"[DEFAULT]\nauth_strategy = noauth\nstate_path = {tmp_path}/var\n"
                    f"[service_providers]\nservice_provider = L3_ROUTER_NAT:ha\n")
    result = subprocess.run([sys.executable, "-m", "neutrino.cmd.main", "serve",
                             "--config-file", str(conf)], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode != 0
    assert "service_provider: 'L3_ROUTER_NAT:ha' is not" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_configured_provider_wins_over_the_router_plugins_own(tmp_path: Path):
    srv = Server(tmp_path, extra="service_plugins = router\n" + PROVIDERS).start()
    try:
        providers = Client(srv.url).get(URL)[1]["service_providers"]
    finally:
        srv.stop()
    assert providers == [
        {"service_type": "L3_ROUTER_NAT", "name": "ha", "default": False},
        {"service_type": "L3_ROUTER_NAT", "name": "single_node", "default": True},
        {"service_type": "VPN", "name": "strongswan", "default": False},
        L3_PROVIDERS[0], L3_PROVIDERS[1]]

"""The all-in-one's route from the host: which host routes are in its way,
and the pair's names and addresses (pure parts; tests/aio runs it for real)."""
from __future__ import annotations

import ipaddress

import pytest
from oslo_config import cfg

from neutrino.aio.host_route import in_the_way, link_for
from neutrino.aio.run import host_route_of
from neutrino.conf import aio as aio_conf
from neutrino.service import StartupError

EXTERNAL = ipaddress.ip_network("172.24.4.0/24")


def test_routes_overlapping_the_prefix_are_in_the_way_and_a_default_route_is_not() -> None:
    routes = [{"dst": "default", "gateway": "192.0.2.1", "dev": "eth0"},
              {"dst": "192.0.2.0/24", "dev": "eth0"},
              {"type": "local", "dst": "127.0.0.1", "dev": "lo", "table": "local"}]
    assert in_the_way(routes, [EXTERNAL]) is None
    assert in_the_way(routes + [{"dst": "172.16.0.0/12", "dev": "vpn0"}],
                      [EXTERNAL]) == "172.16.0.0/12 dev vpn0"
    assert in_the_way([{"type": "local", "dst": "172.24.4.9", "dev": "br0", "table": "local"}],
                      [EXTERNAL]) == "172.24.4.9 dev br0 table local"


def test_each_namespace_has_its_own_pair_on_the_links_first_two_addresses() -> None:
    one, two = link_for("neutrino-aio", "169.254.172.24/30"), link_for("x-aio", "169.254.1.0/30")
    assert len({one.host_device, one.inner_device, two.host_device, two.inner_device}) == 4
    assert all(len(name) <= 15 for name in (one.host_device, one.inner_device))
    assert (str(one.host_address), str(one.inner_address)) == (
        "169.254.172.25/30", "169.254.172.26/30")


@pytest.mark.parametrize("link", ["169.254.172.24/31", "not-a-network", "169.254.172.25/30"])
def test_an_unusable_host_link_stops_start_up_naming_the_option(link: str) -> None:
    conf = cfg.ConfigOpts()
    aio_conf.register(conf)
    conf([])
    conf.set_override("host_link", link, "aio")
    with pytest.raises(StartupError, match=r"\[aio\] host_link"):
        host_route_of(conf)

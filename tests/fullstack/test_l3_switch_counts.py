"""What an L3 agent's full sync asks of the switch, on a private userspace
Open vSwitch: the same number of OVSDB transactions and reads whatever the
number of routers (the devices attached together before the routers are
applied), and never a listing of br-int's ports, whose cost is the
switch's number of ports (issue 37: per-router time grew with the routers
when every device plugged asked for that list and added its port alone).
Counts, never times.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any, Iterator

import pytest

from neutrino.agents.l3.agent import L3Agent
from neutrino.agents.l3.linux import OwnRouterNamespaces
from neutrino.agents.ovs.interface import OVSInterfaceDriver
from neutrino.agents.ovs.ovsctl import OvsCtl
from neutrino.service import make_conf
from tests.fullstack.counting_ovs import CountingOvs
from tests.fullstack.hosts import Host, host, needs_ovs, ovs  # noqa: F401 - host, ovs: fixtures
from tests.l3host.routers import fip, gateway, interface, router

pytestmark = needs_ovs()


class Plugin:
    """The server's answers to the agent: these routers, statuses taken."""

    def __init__(self, routers: list[dict[str, Any]]) -> None:
        self.routers = routers

    def sync_routers(self, router_ids: list[str] | None = None) -> list[dict[str, Any]]:
        return [r for r in self.routers if router_ids is None or r["id"] in router_ids]

    def update_floatingip_statuses(self, router_id: str, statuses: dict[str, str]) -> None:
        pass


def routers(count: int, first: int) -> list[dict[str, Any]]:
    """``count`` routers with a gateway, two interfaces and a floating IP each."""
    made = []
    for n in range(first, first + count):
        mac = f"fa:16:3e:37:{n:02x}:%02x"
        made.append(router(
            [interface(f"10.37.{2 * n}.0/24", f"10.37.{2 * n}.1", mac % 1),
             interface(f"10.37.{2 * n + 1}.0/24", f"10.37.{2 * n + 1}.1", mac % 2)],
            gateway("172.24.37.0/24", f"172.24.37.{10 + n}", "172.24.37.1", mac % 3),
            [fip(f"172.24.37.{100 + n}", f"10.37.{2 * n}.5", "")]))
    return made


def agent(tmp_path: Path, served: list[dict[str, Any]]) -> tuple[L3Agent, CountingOvs]:
    """A new agent process's view: its own switch adapter and driver."""
    path = tmp_path / "l3.conf"
    path.write_text(f"[DEFAULT]\nhost = l3counts\nstate_path = {tmp_path}\n"
                    "interface_driver = openvswitch\nenable_metadata_proxy = false\n"
                    f"ha_confs_path = {tmp_path / 'ha'}\nra_confs = {tmp_path / 'ra'}\n"
                    "[AGENT]\nreport_interval = 0\n")
    switch = CountingOvs()
    made = L3Agent(make_conf(["--config-file", str(path)]), OVSInterfaceDriver(switch),
                   plugin_rpc=Plugin(served),
                   namespaces=OwnRouterNamespaces(tmp_path / "owned-namespaces"))
    return made, switch


def addresses(ns: str) -> set[str]:
    out = subprocess.run(["ip", "-j", "-n", ns, "addr", "show"], capture_output=True,
                         text=True, check=True).stdout
    return {a["local"] for link in json.loads(out) for a in link.get("addr_info", ())}


@pytest.fixture
def cleanup(ovs: OvsCtl) -> Iterator[list[L3Agent]]:  # noqa: F811 - the fixture
    """Agents whose routers are removed afterwards (devices, namespaces), even
    after a failure."""
    agents: list[L3Agent] = []
    yield agents
    for made in agents:
        for rid in list(made.routers.applied):
            made.routers.remove(rid)


def ready(host: Host) -> None:  # noqa: F811 - the fixture
    if "br-int" not in host.vsctl("list-br").split():
        host.vsctl("add-br", "br-int", "--", "set", "bridge", "br-int",
                   "datapath_type=netdev", "fail-mode=secure")


@pytest.mark.parametrize("count", [1, 4])
def test_a_cold_sync_asks_the_switch_the_same_whatever_its_routers(
        host: Host, tmp_path: Path, cleanup: list[L3Agent], count: int) -> None:  # noqa: F811
    ready(host)
    served = routers(count, first=10 * count)
    made, switch = agent(tmp_path, served)
    cleanup.append(made)
    assert made.process()
    # one read of which ports exist, one transaction adding the 3 x count
    # devices, and no listing of br-int's ports
    assert (switch.transactions, switch.reads, switch.listings) == (1, 1, 0)
    on_switch = host.vsctl("list-ports", "br-int").split()
    for r in served:
        ns = f"qrouter-{r['id']}"
        wanted = [p["fixed_ips"][0]["ip_address"] for p in [*r["_interfaces"], r["gw_port"]]]
        assert set(wanted) <= addresses(ns)
        devices = [f"qr-{p['id']}"[:14] for p in r["_interfaces"]]
        devices.append(f"qg-{r['gw_port']['id']}"[:14])
        assert set(devices) <= set(on_switch)


def test_a_restart_adopts_with_one_read_and_reattaches_a_lost_port_in_one_transaction(
        host: Host, tmp_path: Path, cleanup: list[L3Agent]) -> None:  # noqa: F811
    ready(host)
    served = routers(3, first=60)
    first, _ = agent(tmp_path, served)
    cleanup.append(first)
    assert first.process()
    restarted, switch = agent(tmp_path, served)
    cleanup.append(restarted)
    assert restarted.process()
    assert (switch.transactions, switch.reads, switch.listings) == (0, 1, 0)
    # a port deleted behind the agent's back (its device goes with it)
    lost = served[1]["_interfaces"][0]
    device = f"qr-{lost['id']}"[:14]
    host.vsctl("del-port", "br-int", device)
    again, switch = agent(tmp_path, served)
    cleanup.append(again)
    assert again.process()
    assert (switch.transactions, switch.listings) == (1, 0)
    assert device in host.vsctl("list-ports", "br-int").split()
    assert lost["fixed_ips"][0]["ip_address"] in addresses(f"qrouter-{served[1]['id']}")

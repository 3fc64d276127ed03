"""The placement report: an Open vSwitch agent's devices, as its options
describe them, become resource providers in a real Placement, under the
compute node named by its hypervisor, with upstream's names, UUIDs, traits
and inventories; the agent's ``resources_synced`` tells whether it worked.
"""
from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest

from neutrino.agents.ovs.agent import OvsAgent
from neutrino.agents.ovs.memory_switch import MemorySwitch
from tests.conftest import Client, Server
from tests.placement.conftest import Placement
from tests.rpc.bus import agent_conf, bus
from tests.rpc.conftest import fresh_vhost
from tests.waiting import until

OVS_NAMESPACE = uuid.UUID("87ee7d5c-73bb-11e8-9008-c4d987b2a692")
AGENT_TYPE = "Open vSwitch agent"


@pytest.fixture(scope="module")
def vhost() -> Iterator[str]:
    with fresh_vhost() as name:
        yield name


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, vhost: str,
        placement: Placement) -> Iterator[Server]:
    server = Server(tmp_path_factory.mktemp("placement-report"), extra=(
        f"transport_url = {bus(vhost)}\n"
        "service_plugins = qos,placement\n"
        "[ml2]\nmechanism_drivers = openvswitch\n"
        "[placement]\nauth_type = admin_token\n"
        f"endpoint = {placement.url}\ntoken = admin\n"))
    server.start()
    yield server
    server.stop()


def _agent(tmp: Path, vhost: str, host: str, hypervisor: str) -> OvsAgent:
    conf = agent_conf(tmp, vhost, host, (
        "[ovs]\nbridge_mappings = physnet1:br-phy1\n"
        "resource_provider_bandwidths = br-phy1:10000:20000,rp_tunnelled:3000:\n"
        f"resource_provider_default_hypervisor = {hypervisor}\n"
        f"resource_provider_packet_processing_without_direction = {hypervisor}:500\n"
        "resource_provider_inventory_defaults = reserved:100\n"))
    return OvsAgent(conf, ovs=MemorySwitch([]))  # type: ignore[arg-type]


def _synced(admin: Client, host: str) -> Any:
    agents = admin.get(f"/v2.0/agents?host={host}")[1]["agents"]
    return agents[0]["resources_synced"] if agents else None


def _providers(placement: Placement, root: str) -> dict[str, dict[str, Any]]:
    found = placement.call("GET", f"/resource_providers?in_tree={root}")["resource_providers"]
    return {rp["name"]: rp for rp in found}


def test_an_agents_devices_become_providers_with_traits_and_inventories(
        srv: Server, placement: Placement, vhost: str, tmp_path: Path) -> None:
    hypervisor = f"compute-{uuid.uuid4().hex[:6]}"
    root = str(uuid.uuid4())
    placement.call("POST", "/resource_providers", {"uuid": root, "name": hypervisor})
    admin = Client(srv.url, roles="admin")
    agent = _agent(tmp_path, vhost, f"host-{hypervisor}", hypervisor)
    try:
        assert agent.register() == "new"
        until(lambda: _synced(admin, agent.host) is True, timeout=60)
    finally:
        agent.stop()

    providers = _providers(placement, root)
    agent_rp = str(uuid.uuid5(OVS_NAMESPACE, hypervisor))
    phy_rp = str(uuid.uuid5(OVS_NAMESPACE, f"{hypervisor}:br-phy1"))
    tun_rp = str(uuid.uuid5(OVS_NAMESPACE, f"{hypervisor}:rp_tunnelled"))
    assert {name: (rp["uuid"], rp["parent_provider_uuid"]) for name, rp in providers.items()} == {
        hypervisor: (root, None),
        f"{hypervisor}:{AGENT_TYPE}": (agent_rp, root),
        f"{hypervisor}:{AGENT_TYPE}:br-phy1": (phy_rp, agent_rp),
        f"{hypervisor}:{AGENT_TYPE}:rp_tunnelled": (tun_rp, agent_rp)}

    def inventories(rp: str) -> dict[str, dict[str, Any]]:
        return dict(placement.call("GET", f"/resource_providers/{rp}/inventories")["inventories"])

    def traits(rp: str) -> set[str]:
        return set(placement.call("GET", f"/resource_providers/{rp}/traits")["traits"])

    phy = inventories(phy_rp)
    assert {k: (v["total"], v["reserved"]) for k, v in phy.items()} == {
        "NET_BW_EGR_KILOBIT_PER_SEC": (10000, 100), "NET_BW_IGR_KILOBIT_PER_SEC": (20000, 100)}
    assert {k: v["total"] for k, v in inventories(tun_rp).items()} == {
        "NET_BW_EGR_KILOBIT_PER_SEC": 3000}
    # packet processing goes on the agent's provider
    assert {k: (v["total"], v["reserved"]) for k, v in inventories(agent_rp).items()} == {
        "NET_PACKET_RATE_KILOPACKET_PER_SEC": (500, 0)}
    vnic = {"CUSTOM_VNIC_TYPE_NORMAL", "CUSTOM_VNIC_TYPE_DIRECT"}
    assert traits(phy_rp) == {"CUSTOM_PHYSNET_PHYSNET1", *vnic}
    assert traits(tun_rp) == {"CUSTOM_NETWORK_TUNNEL_PROVIDER", *vnic}
    assert traits(agent_rp) == vnic


def test_without_the_compute_nodes_provider_the_sync_fails_until_it_exists(
        srv: Server, placement: Placement, vhost: str, tmp_path: Path) -> None:
    hypervisor = f"compute-{uuid.uuid4().hex[:6]}"
    admin = Client(srv.url, roles="admin")
    agent = _agent(tmp_path, vhost, f"host-{hypervisor}", hypervisor)
    try:
        agent.register()
        until(lambda: _synced(admin, agent.host) is False, timeout=60)
        # the compute service registers its node; the agent's next report syncs
        root = str(uuid.uuid4())
        placement.call("POST", "/resource_providers", {"uuid": root, "name": hypervisor})
        agent.report_state()
        until(lambda: _synced(admin, agent.host) is True, timeout=60)
    finally:
        agent.stop()
    assert f"{hypervisor}:{AGENT_TYPE}:br-phy1" in _providers(placement, root)


def test_a_restarted_agent_is_synced_again(
        srv: Server, placement: Placement, vhost: str, tmp_path: Path) -> None:
    hypervisor = f"compute-{uuid.uuid4().hex[:6]}"
    root = str(uuid.uuid4())
    placement.call("POST", "/resource_providers", {"uuid": root, "name": hypervisor})
    admin = Client(srv.url, roles="admin")
    phy_rp = str(uuid.uuid5(OVS_NAMESPACE, f"{hypervisor}:br-phy1"))
    agent = _agent(tmp_path, vhost, f"host-{hypervisor}", hypervisor)
    try:
        agent.register()
        until(lambda: _synced(admin, agent.host) is True, timeout=60)
    finally:
        agent.stop()
    # someone empties the bridge's inventory; heartbeats of a synced agent leave it
    generation = placement.call("GET", f"/resource_providers/{phy_rp}")["generation"]
    placement.call("PUT", f"/resource_providers/{phy_rp}/inventories",
                   {"resource_provider_generation": generation, "inventories": {}})
    restarted = _agent(tmp_path, vhost, f"host-{hypervisor}", hypervisor)
    try:
        assert restarted.register() in ("alive", "revived")  # with start_flag

        def restored() -> bool:
            found = placement.call("GET", f"/resource_providers/{phy_rp}/inventories")
            return bool(found["inventories"])
        until(restored, timeout=60)
    finally:
        restarted.stop()

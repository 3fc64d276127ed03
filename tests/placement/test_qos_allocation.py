"""A bound port's allocation in a real Placement follows its QoS policy.

The compute service allocated an instance's resources, the port's minimum
bandwidth among them on a bridge's provider, and wrote where into the
port's ``binding:profile``; a change of the port's (or its network's)
policy changes the instance's allocation on that provider by the rules'
difference, and the profile's request groups, or is refused (409 as
upstream) leaving both as they were.
"""
from __future__ import annotations

import uuid
from typing import Any, Iterator

import pytest

from tests.conftest import Client, Server
from tests.placement.conftest import Placement
from tests.qos._qos import error, manager, policy, rule

EGR, IGR = "NET_BW_EGR_KILOBIT_PER_SEC", "NET_BW_IGR_KILOBIT_PER_SEC"
PPS = "NET_PACKET_RATE_KILOPACKET_PER_SEC"


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, placement: Placement) -> Iterator[Server]:
    server = Server(tmp_path_factory.mktemp("qos-allocation"), extra=(
        "service_plugins = qos\n"
        "[ml2]\nextension_drivers = port_security,qos\nmechanism_drivers = openvswitch\n"
        "[placement]\nauth_type = admin_token\n"
        f"endpoint = {placement.url}\ntoken = admin\n"))
    server.start()
    yield server
    server.stop()


class Instance:
    """An instance as the compute service leaves it in Placement: its VCPUs
    on the compute node, its port's minimum rules' resources on a bridge."""

    def __init__(self, placement: Placement, held: dict[str, int],
                 bridge_inventory: dict[str, int] | None = None) -> None:
        self.placement = placement
        self.id = str(uuid.uuid4())
        self.node, self.bridge = str(uuid.uuid4()), str(uuid.uuid4())
        placement.call("POST", "/resource_providers",
                       {"uuid": self.node, "name": f"node-{self.node[:8]}"})
        placement.call("POST", "/resource_providers", {
            "uuid": self.bridge, "name": f"node-{self.node[:8]}:br-phy",
            "parent_provider_uuid": self.node})
        self._inventory(self.node, {"VCPU": 8})
        self._inventory(self.bridge, bridge_inventory or {EGR: 10000, IGR: 10000, PPS: 1000})
        placement.call("PUT", f"/allocations/{self.id}", {
            "allocations": {self.node: {"resources": {"VCPU": 2}},
                            self.bridge: {"resources": held}},
            "project_id": uuid.uuid4().hex, "user_id": uuid.uuid4().hex,
            "consumer_generation": None})

    def _inventory(self, rp: str, totals: dict[str, int]) -> None:
        generation = self.placement.call("GET", f"/resource_providers/{rp}")["generation"]
        self.placement.call("PUT", f"/resource_providers/{rp}/inventories", {
            "resource_provider_generation": generation,
            "inventories": {rc: {"total": n} for rc, n in totals.items()}})

    def held(self) -> dict[str, dict[str, int]]:
        found = self.placement.call("GET", f"/allocations/{self.id}")["allocations"]
        return {rp: a["resources"] for rp, a in found.items()}


@pytest.fixture
def admin(srv: Server) -> Client:
    """The compute service's view: admin and service of a project of its own."""
    return Client(srv.url, uuid.uuid4().hex, "admin,service")


@pytest.fixture
def owner(srv: Server) -> Client:
    """Who makes the (shared) policies."""
    return manager(srv.url)


@pytest.fixture
def instance(placement: Placement) -> Instance:
    """An instance holding 1000 egress and 2000 ingress kbps on its bridge."""
    return Instance(placement, {EGR: 1000, IGR: 2000})


def _group(port_id: str, rule_ids: list[str]) -> str:
    return str(uuid.uuid5(uuid.UUID(port_id), ":".join(sorted(rule_ids))))


def _bandwidth_policy(owner: Client, egress: int, ingress: int) -> tuple[str, list[str]]:
    pid = policy(owner, shared=True)["id"]
    ids = [rule(owner, pid, "minimum_bandwidth", min_kbps=egress, direction="egress")["id"],
           rule(owner, pid, "minimum_bandwidth", min_kbps=ingress, direction="ingress")["id"]]
    return pid, ids


def _network(admin: Client, **attrs: Any) -> str:
    status, body = admin.post("/v2.0/networks", {"network": {"name": "alloc", **attrs}})
    assert status == 201, body
    return str(body["network"]["id"])


def _instance_port(admin: Client, net: str, instance: Instance, rule_ids: list[str],
                   legacy: bool = False, **attrs: Any) -> dict[str, Any]:
    """The instance's port, its profile saying where the compute service
    allocated the group of ``rule_ids`` (``legacy``: the provider alone)."""
    status, body = admin.post("/v2.0/ports", {"port": {
        "network_id": net, "device_owner": "compute:nova", "device_id": instance.id, **attrs}})
    assert status == 201, body
    port_id = body["port"]["id"]
    allocation = (instance.bridge if legacy
                  else {_group(port_id, rule_ids): instance.bridge})
    status, body = admin.put(f"/v2.0/ports/{port_id}", {"port": {
        "binding:profile": {"allocation": allocation}}})
    assert status == 200, body
    return dict(body["port"])


def _bound(admin: Client, owner: Client, instance: Instance
           ) -> tuple[str, list[str], dict[str, Any]]:
    """A policy asking what ``instance`` holds (1000/2000), its rules, and the
    instance's port under it: (policy, rule ids, port)."""
    pid, ids = _bandwidth_policy(owner, 1000, 2000)
    return pid, ids, _instance_port(admin, _network(admin), instance, ids, qos_policy_id=pid)


def _set_policy(admin: Client, port: dict[str, Any], policy_id: str | None) -> Any:
    return admin.put(f"/v2.0/ports/{port['id']}", {"port": {"qos_policy_id": policy_id}})


def test_a_new_policy_changes_the_instances_allocation_and_the_ports_groups(
        admin: Client, owner: Client, instance: Instance) -> None:
    _, _, port = _bound(admin, owner, instance)
    new, new_ids = _bandwidth_policy(owner, 3000, 500)
    port_id = port["id"]

    status, body = _set_policy(admin, port, new)
    assert status == 200, body
    assert body["port"]["binding:profile"] == {
        "allocation": {_group(port["id"], new_ids): instance.bridge}}
    assert instance.held() == {instance.node: {"VCPU": 2},
                               instance.bridge: {EGR: 3000, IGR: 500}}
    # and down again; the profile read back says the same
    lower, lower_ids = _bandwidth_policy(owner, 100, 200)
    status, body = _set_policy(admin, port, lower)
    assert status == 200, body
    assert instance.held()[instance.bridge] == {EGR: 100, IGR: 200}
    shown = admin.get(f"/v2.0/ports/{port_id}")[1]["port"]
    assert shown["binding:profile"] == {
        "allocation": {_group(port_id, lower_ids): instance.bridge}}


def test_removing_the_policy_takes_its_resources_out_of_the_allocation(
        admin: Client, owner: Client, instance: Instance) -> None:
    _, _, port = _bound(admin, owner, instance)

    status, body = _set_policy(admin, port, None)
    assert status == 200, body
    assert body["port"]["binding:profile"] == {"allocation": {}}
    assert instance.held() == {instance.node: {"VCPU": 2}}


def test_the_old_single_provider_allocation_stands_for_the_bandwidth_group(
        admin: Client, owner: Client, instance: Instance) -> None:
    old, _ = _bandwidth_policy(owner, 1000, 2000)
    new, new_ids = _bandwidth_policy(owner, 1500, 2500)
    port = _instance_port(admin, _network(admin), instance, [], legacy=True,
                          qos_policy_id=old)

    status, body = _set_policy(admin, port, new)
    assert status == 200, body
    assert body["port"]["binding:profile"]["allocation"] == {
        _group(port["id"], new_ids): instance.bridge}
    assert instance.held()[instance.bridge] == {EGR: 1500, IGR: 2500}


def test_a_change_beyond_the_inventory_is_refused_and_changes_nothing(
        admin: Client, owner: Client, instance: Instance) -> None:
    old, ids, port = _bound(admin, owner, instance)
    too_much, _ = _bandwidth_policy(owner, 50000, 2000)
    port_id = port["id"]
    allocation = {_group(port_id, ids): instance.bridge}

    message = error(_set_policy(admin, port, too_much), 409,
                    "QosPlacementAllocationUpdateConflict")
    assert instance.id in message
    shown = admin.get(f"/v2.0/ports/{port_id}")[1]["port"]
    assert shown["qos_policy_id"] == old
    assert shown["binding:profile"] == {"allocation": allocation}
    assert shown["revision_number"] == port["revision_number"]
    assert instance.held()[instance.bridge] == {EGR: 1000, IGR: 2000}


def test_an_allocation_gone_from_placement_refuses_the_change(
        admin: Client, owner: Client, instance: Instance, placement: Placement) -> None:
    old, _, port = _bound(admin, owner, instance)
    new, _ = _bandwidth_policy(owner, 3000, 500)
    port_id = port["id"]
    placement.call("DELETE", f"/allocations/{instance.id}")

    error(_set_policy(admin, port, new), 400, "PlacementAllocationRemoved")
    assert admin.get(f"/v2.0/ports/{port_id}")[1]["port"]["qos_policy_id"] == old


def test_the_networks_new_policy_changes_its_instance_ports_allocations(
        admin: Client, owner: Client, instance: Instance) -> None:
    old, ids = _bandwidth_policy(owner, 1000, 2000)
    new, new_ids = _bandwidth_policy(owner, 2000, 3000)
    net = _network(admin, qos_policy_id=old)
    port = _instance_port(admin, net, instance, ids)
    port_id = port["id"]
    assert port["qos_network_policy_id"] == old

    status, body = admin.put(f"/v2.0/networks/{net}", {"network": {"qos_policy_id": new}})
    assert status == 200, body
    assert instance.held()[instance.bridge] == {EGR: 2000, IGR: 3000}
    shown = admin.get(f"/v2.0/ports/{port_id}")[1]["port"]
    assert shown["binding:profile"] == {
        "allocation": {_group(port_id, new_ids): instance.bridge}}
    assert shown["revision_number"] > port["revision_number"]


def test_the_networks_policy_change_beyond_the_inventory_is_refused(
        admin: Client, owner: Client, instance: Instance) -> None:
    old, ids = _bandwidth_policy(owner, 1000, 2000)
    too_much, _ = _bandwidth_policy(owner, 1000, 90000)
    net = _network(admin, qos_policy_id=old)
    _instance_port(admin, net, instance, ids)

    error(admin.put(f"/v2.0/networks/{net}", {"network": {"qos_policy_id": too_much}}), 409,
          "QosPlacementAllocationUpdateConflict")
    assert admin.get(f"/v2.0/networks/{net}")[1]["network"]["qos_policy_id"] == old
    assert instance.held()[instance.bridge] == {EGR: 1000, IGR: 2000}


def test_an_update_refused_after_placement_changed_takes_the_change_back(
        admin: Client, owner: Client, instance: Instance) -> None:
    """Placement is changed inside the port's update; when the update then
    fails (an address on a subnet that does not exist), the instance gets
    back what it held."""
    old, _, port = _bound(admin, owner, instance)
    new, _ = _bandwidth_policy(owner, 3000, 500)

    status, body = admin.put(f"/v2.0/ports/{port['id']}", {"port": {
        "qos_policy_id": new, "fixed_ips": [{"subnet_id": str(uuid.uuid4())}]}})
    assert 400 <= status < 500, body
    assert admin.get(f"/v2.0/ports/{port['id']}")[1]["port"]["qos_policy_id"] == old
    assert instance.held()[instance.bridge] == {EGR: 1000, IGR: 2000}


def test_a_provider_the_instance_holds_nothing_on_refuses_the_change(
        admin: Client, owner: Client, instance: Instance) -> None:
    old, ids, port = _bound(admin, owner, instance)
    new, _ = _bandwidth_policy(owner, 3000, 500)
    elsewhere = {_group(port["id"], ids): str(uuid.uuid4())}
    assert admin.put(f"/v2.0/ports/{port['id']}", {"port": {
        "binding:profile": {"allocation": elsewhere}}})[0] == 200

    error(_set_policy(admin, port, new), 400, "PlacementAllocationRpNotExists")
    shown = admin.get(f"/v2.0/ports/{port['id']}")[1]["port"]
    assert (shown["qos_policy_id"], shown["binding:profile"]) == (old, {"allocation": elsewhere})
    assert instance.held()[instance.bridge] == {EGR: 1000, IGR: 2000}


def test_a_port_losing_its_own_policy_takes_its_networks_minimum_rules(
        admin: Client, owner: Client, instance: Instance) -> None:
    """The port's resource request is then its network's policy's: so is
    what the instance holds for it."""
    network_policy, network_ids = _bandwidth_policy(owner, 700, 800)
    own, ids = _bandwidth_policy(owner, 1000, 2000)
    port = _instance_port(admin, _network(admin, qos_policy_id=network_policy), instance, ids,
                          qos_policy_id=own)

    status, body = _set_policy(admin, port, None)
    assert status == 200, body
    assert body["port"]["binding:profile"] == {
        "allocation": {_group(port["id"], network_ids): instance.bridge}}
    assert instance.held()[instance.bridge] == {EGR: 700, IGR: 800}

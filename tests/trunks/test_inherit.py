"""Subports with ``segmentation_type: inherit`` take their network's
segmentation, as upstream's trunk plugin does (test_trunk.py's
test_add_subport, test_trunk_negative.py's
test_create_subport_invalid_inherit_network_segmentation_type)."""
from __future__ import annotations

import uuid
from typing import Any, Iterator

import pytest

from tests.api._helpers import error, network, port
from tests.conftest import Client, Server

EXTRA = ("service_plugins = trunk\n"
         "[ml2]\ntype_drivers = local,vlan,vxlan\ntenant_network_types = local\n"
         "mechanism_drivers = openvswitch\n"
         "[ml2_type_vlan]\nnetwork_vlan_ranges = physnet1:100:400\n"
         "[ml2_type_vxlan]\nvni_ranges = 1:1000\n")


@pytest.fixture(scope="module")
def vlan_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("trunk-inherit"), extra=EXTRA).start()
    yield srv
    srv.stop()


@pytest.fixture
def admin(vlan_server: Server) -> Client:
    return Client(vlan_server.url)


@pytest.fixture
def member(vlan_server: Server) -> Client:
    return Client(vlan_server.url, uuid.uuid4().hex, "member")


def _port_on(admin: Client, member: Client, network_type: str, seg_id: int) -> dict[str, Any]:
    """A port of ``member``'s project on a provider network the admin made for it."""
    project = member.session.headers["X-Project-Id"]
    provider: dict[str, Any] = {"provider:network_type": network_type,
                                "provider:segmentation_id": seg_id, "project_id": project}
    if network_type == "vlan":
        provider["provider:physical_network"] = "physnet1"
    net = network(admin, **provider)
    return port(member, net["id"])


def test_inherit_takes_each_subports_network_segmentation(admin: Client,
                                                          member: Client) -> None:
    parent = _port_on(admin, member, "vlan", 150)
    sub1, sub2 = _port_on(admin, member, "vlan", 151), _port_on(admin, member, "vlan", 152)
    status, body = member.post("/v2.0/trunks", {"trunk": {"port_id": parent["id"], "sub_ports": [
        {"port_id": sub1["id"], "segmentation_type": "inherit"},
        {"port_id": sub2["id"], "segmentation_type": "inherit"}]}})
    assert status == 201, body
    expected = sorted([{"port_id": sub1["id"], "segmentation_type": "vlan", "segmentation_id": 151},
                       {"port_id": sub2["id"], "segmentation_type": "vlan", "segmentation_id": 152}],
                      key=lambda s: s["port_id"])
    assert sorted(body["trunk"]["sub_ports"], key=lambda s: s["port_id"]) == expected
    # add_subports inherits the same way; a given segmentation_id is ignored
    sub3 = _port_on(admin, member, "vlan", 153)
    status, body = member.put(f"/v2.0/trunks/{body['trunk']['id']}/add_subports", {"sub_ports": [
        {"port_id": sub3["id"], "segmentation_type": "inherit", "segmentation_id": 7}]})
    assert status == 200, body
    assert {"port_id": sub3["id"], "segmentation_type": "vlan",
            "segmentation_id": 153} in body["sub_ports"]


def test_inheriting_a_segmentation_the_trunk_driver_cannot_carry_is_400(admin: Client,
                                                                        member: Client) -> None:
    parent = _port_on(admin, member, "vxlan", 500)
    trunk_id = member.post("/v2.0/trunks", {"trunk": {"port_id": parent["id"]}})[1]["trunk"]["id"]
    sub = _port_on(admin, member, "vxlan", 501)
    msg = error(member.put(f"/v2.0/trunks/{trunk_id}/add_subports", {"sub_ports": [
        {"port_id": sub["id"], "segmentation_type": "inherit", "segmentation_id": -1}]}),
        400, "InvalidInput")
    assert msg == "Invalid input for operation: Unknown segmentation_type 'vxlan'."
    assert member.get(f"/v2.0/trunks/{trunk_id}")[1]["trunk"]["sub_ports"] == []
    # a local network has no segmentation id to inherit
    parent = _port_on(admin, member, "vlan", 170)
    trunk_id = member.post("/v2.0/trunks", {"trunk": {"port_id": parent["id"]}})[1]["trunk"]["id"]
    local = port(member, network(member)["id"])
    msg = error(member.put(f"/v2.0/trunks/{trunk_id}/add_subports", {"sub_ports": [
        {"port_id": local["id"], "segmentation_type": "inherit"}]}), 400, "InvalidInput")
    assert msg == ("Invalid input for operation: Invalid subport details: segmentation_id "
                   "'None' is not an integer.")


def test_a_port_of_another_project_has_nothing_to_inherit(admin: Client, member: Client,
                                                          vlan_server: Server) -> None:
    """Upstream reads the network of the ports the caller sees: another
    project's port keeps no segmentation details, and is refused for that."""
    other = Client(vlan_server.url, uuid.uuid4().hex, "member")
    parent = _port_on(admin, member, "vlan", 160)
    foreign = _port_on(admin, other, "vlan", 161)
    asked = {"port_id": foreign["id"], "segmentation_type": "inherit"}
    msg = error(member.post("/v2.0/trunks", {"trunk": {"port_id": parent["id"],
                                                       "sub_ports": [asked]}}),
                400, "InvalidInput")
    assert msg == (f"Invalid input for operation: Invalid subport details '{asked}': missing "
                   "segmentation information. Must specify both segmentation_id and "
                   "segmentation_type.")
    # the admin sees it, and the subport inherits
    status, body = admin.post("/v2.0/trunks", {"trunk": {"port_id": parent["id"],
                                                         "sub_ports": [asked]}})
    assert status == 201, body
    assert body["trunk"]["sub_ports"] == [{"port_id": foreign["id"], "segmentation_type": "vlan",
                                           "segmentation_id": 161}]

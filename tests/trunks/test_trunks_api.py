"""``/v2.0/trunks``: trunk ports, their subports and ``trunk_details``.

Error types, messages and response shapes were observed on upstream
Neutron 29 (trunk plugin with the Open vSwitch driver).
"""
from __future__ import annotations

from typing import Any

import pytest

from tests.api._helpers import ZERO_UUID, error, network, port
from tests.conftest import Client


def _vlan(port_id: str, seg_id: int) -> dict[str, Any]:
    return {"port_id": port_id, "segmentation_type": "vlan", "segmentation_id": seg_id}


def _trunk(client: Client, parent: str, *subports: dict[str, Any],
           **attrs: Any) -> dict[str, Any]:
    status, body = client.post("/v2.0/trunks", {"trunk": {
        "port_id": parent, "sub_ports": list(subports), **attrs}})
    assert status == 201, body
    return body["trunk"]


@pytest.fixture
def ports(member: Client) -> list[dict[str, Any]]:
    net = network(member)
    return [port(member, net["id"], name=f"p{i}") for i in range(4)]


def test_a_trunk_is_created_down_with_its_subports(member: Client, project_id: str,
                                                   ports: list[dict[str, Any]]) -> None:
    trunk = _trunk(member, ports[0]["id"], _vlan(ports[1]["id"], 100), name="t",
                   description="d", tags=["x"])
    assert set(trunk) == {"admin_state_up", "id", "project_id", "name", "port_id", "status",
                          "sub_ports", "revision_number", "description", "created_at",
                          "updated_at", "tenant_id", "tags"}
    assert (trunk["status"], trunk["admin_state_up"], trunk["revision_number"]) == (
        "DOWN", True, 0)
    assert (trunk["project_id"], trunk["name"], trunk["tags"]) == (project_id, "t", ["x"])
    assert trunk["sub_ports"] == [_vlan(ports[1]["id"], 100)]
    status, body = member.get(f"/v2.0/trunks/{trunk['id']}")
    assert status == 200 and body["trunk"] == trunk


def test_the_parent_port_shows_trunk_details_with_subport_macs(
        member: Client, ports: list[dict[str, Any]]) -> None:
    trunk = _trunk(member, ports[0]["id"], _vlan(ports[1]["id"], 100))
    parent = member.get(f"/v2.0/ports/{ports[0]['id']}")[1]["port"]
    assert parent["trunk_details"] == {"trunk_id": trunk["id"], "sub_ports": [
        {**_vlan(ports[1]["id"], 100), "mac_address": ports[1]["mac_address"]}]}
    sub = member.get(f"/v2.0/ports/{ports[1]['id']}")[1]["port"]
    assert "trunk_details" not in sub
    listed = member.get(f"/v2.0/ports?network_id={ports[0]['network_id']}")[1]["ports"]
    details = {p["id"]: p.get("trunk_details") for p in listed}
    assert details[ports[0]["id"]] == parent["trunk_details"]
    assert details[ports[2]["id"]] is None


def test_subports_are_added_listed_and_removed(member: Client,
                                               ports: list[dict[str, Any]]) -> None:
    trunk = _trunk(member, ports[0]["id"])
    status, body = member.put(f"/v2.0/trunks/{trunk['id']}/add_subports",
                              {"sub_ports": [_vlan(ports[2]["id"], 9), _vlan(ports[1]["id"], 8)]})
    assert status == 200, body
    # The action answers with the trunk itself, not wrapped, as upstream.
    assert body["id"] == trunk["id"] and body["status"] == "DOWN"
    expected = sorted([_vlan(ports[2]["id"], 9), _vlan(ports[1]["id"], 8)],
                      key=lambda s: s["port_id"])
    assert body["sub_ports"] == expected
    assert member.get(f"/v2.0/trunks/{trunk['id']}/get_subports") == (
        200, {"sub_ports": expected})
    status, body = member.put(f"/v2.0/trunks/{trunk['id']}/remove_subports",
                              {"sub_ports": [{"port_id": ports[2]["id"]}]})
    assert status == 200, body
    assert body["sub_ports"] == [_vlan(ports[1]["id"], 8)]


def test_get_subports_is_a_get_and_the_others_are_puts(admin: Client,
                                                        ports: list[dict[str, Any]]) -> None:
    trunk = _trunk(admin, ports[0]["id"])
    error(admin.put(f"/v2.0/trunks/{trunk['id']}/get_subports", {}), 405,
          "HTTPMethodNotAllowed")
    error(admin.get(f"/v2.0/trunks/{trunk['id']}/add_subports"), 405, "HTTPMethodNotAllowed")


def test_a_port_is_the_parent_or_subport_of_one_trunk_only(
        admin: Client, ports: list[dict[str, Any]]) -> None:
    p = [x["id"] for x in ports]
    _trunk(admin, p[0], _vlan(p[1], 100))
    assert error(admin.post("/v2.0/trunks", {"trunk": {"port_id": p[0]}}), 409,
                 "ParentPortInUse") == (f"Port {p[0]} is currently in use and is not "
                                        f"eligible for use as a parent port.")
    assert error(admin.post("/v2.0/trunks", {"trunk": {"port_id": p[1]}}), 409,
                 "TrunkPortInUse") == f"Port {p[1]} is in use by another trunk."
    error(admin.post("/v2.0/trunks", {"trunk": {"port_id": p[2], "sub_ports": [
        _vlan(p[1], 101)]}}), 409, "TrunkPortInUse")
    error(admin.post("/v2.0/trunks", {"trunk": {"port_id": p[2], "sub_ports": [
        _vlan(p[0], 101)]}}), 409, "ParentPortInUse")
    error(admin.post("/v2.0/trunks", {"trunk": {"port_id": p[2], "sub_ports": [
        _vlan(p[2], 101)]}}), 409, "ParentPortInUse")
    assert admin.get(f"/v2.0/trunks?port_id={p[2]}") == (200, {"trunks": []})


def test_a_segmentation_id_is_used_once_per_trunk(admin: Client,
                                                   ports: list[dict[str, Any]]) -> None:
    p = [x["id"] for x in ports]
    trunk = _trunk(admin, p[0], _vlan(p[1], 100))
    assert error(admin.put(f"/v2.0/trunks/{trunk['id']}/add_subports",
                           {"sub_ports": [_vlan(p[2], 100)]}), 409, "DuplicateSubPort") == (
        f"segmentation_type vlan and segmentation_id 100 already in use on trunk "
        f"{trunk['id']}.")
    assert error(admin.put(f"/v2.0/trunks/{trunk['id']}/add_subports",
                           {"sub_ports": [_vlan(p[2], 7), _vlan(p[3], 7)]}),
                 400, "InvalidInput") == (f"Invalid input for operation: Segmentation ID "
                                          f"'7' for '{p[3]}' is not unique.")
    assert admin.get(f"/v2.0/trunks/{trunk['id']}/get_subports")[1]["sub_ports"] == [
        _vlan(p[1], 100)]


@pytest.mark.parametrize("sub, message", [
    ({"segmentation_type": "vlan", "segmentation_id": 0},
     "Invalid input for operation: Segmentation ID '0' is not in range."),
    ({"segmentation_type": "vlan", "segmentation_id": 4095},
     "Invalid input for operation: Segmentation ID '4095' is not in range."),
    ({"segmentation_type": "foo", "segmentation_id": 5},
     "Invalid input for operation: Unknown segmentation_type 'foo'."),
    ({"segmentation_type": "vlan", "segmentation_id": "abc"},
     "Invalid input for operation: Invalid subport details: segmentation_id 'abc' is not "
     "an integer."),
])
def test_bad_segmentations_are_invalid_input(admin: Client, ports: list[dict[str, Any]],
                                             sub: dict[str, Any], message: str) -> None:
    trunk = _trunk(admin, ports[0]["id"])
    assert error(admin.put(f"/v2.0/trunks/{trunk['id']}/add_subports", {"sub_ports": [
        {"port_id": ports[1]["id"], **sub}]}), 400, "InvalidInput") == message
    assert error(admin.post("/v2.0/trunks", {"trunk": {"port_id": ports[2]["id"], "sub_ports": [
        {"port_id": ports[1]["id"], **sub}]}}), 400, "InvalidInput") == message


def test_malformed_subport_lists_are_refused_as_upstream(admin: Client,
                                                         ports: list[dict[str, Any]]) -> None:
    p = [x["id"] for x in ports]
    trunk = _trunk(admin, p[0])
    missing = {"port_id": p[1], "segmentation_type": "vlan"}
    assert error(admin.put(f"/v2.0/trunks/{trunk['id']}/add_subports",
                           {"sub_ports": [missing]}), 400, "InvalidInput") == (
        f"Invalid input for operation: Invalid subport details '{missing}': missing "
        f"segmentation information. Must specify both segmentation_id and segmentation_type.")
    assert error(admin.put(f"/v2.0/trunks/{trunk['id']}/add_subports",
                           {"sub_ports": [{"port_id": "xyz"}]}), 400, "InvalidInput") == (
        "Invalid input for operation: Invalid UUID for subport: 'xyz'.")
    assert error(admin.put(f"/v2.0/trunks/{trunk['id']}/add_subports",
                           {"sub_ports": {}}), 400, "InvalidInput") == (
        "Invalid input for operation: Invalid data format for subports: '{}' is not a list.")
    # On POST the API layer reports the same check on the attribute.
    assert error(admin.post("/v2.0/trunks", {"trunk": {"port_id": p[1], "sub_ports": [
        {"port_id": "xyz", "segmentation_type": "vlan", "segmentation_id": 7}]}}),
        400, "HTTPBadRequest") == (
        "Invalid input for sub_ports. Reason: Invalid UUID for subport: 'xyz'.")
    assert error(admin.post("/v2.0/trunks", {"trunk": {"port_id": "abc"}}), 400,
                 "HTTPBadRequest") == "Invalid input for port_id. Reason: 'abc' is not a valid UUID."
    assert error(admin.post("/v2.0/trunks", {"trunk": {"port_id": p[1], "status": "ACTIVE"}}),
                 400, "HTTPBadRequest") == "Attribute 'status' not allowed in POST"
    assert error(admin.put(f"/v2.0/trunks/{trunk['id']}", {"trunk": {"sub_ports": []}}),
                 400, "HTTPBadRequest") == "Cannot update read-only attribute sub_ports"


def test_unknown_ports_and_trunks_are_not_found(admin: Client,
                                                ports: list[dict[str, Any]]) -> None:
    error(admin.post("/v2.0/trunks", {"trunk": {"port_id": ZERO_UUID}}), 404, "PortNotFound")
    trunk = _trunk(admin, ports[0]["id"])
    error(admin.put(f"/v2.0/trunks/{trunk['id']}/add_subports",
                    {"sub_ports": [_vlan(ZERO_UUID, 5)]}), 404, "PortNotFound")
    assert error(admin.put(f"/v2.0/trunks/{trunk['id']}/remove_subports",
                           {"sub_ports": [{"port_id": ports[1]["id"]}]}), 404,
                 "SubPortNotFound") == (f"SubPort {ports[1]['id']} on trunk {trunk['id']} "
                                        f"could not be found.")
    for result in (admin.get(f"/v2.0/trunks/{ZERO_UUID}"),
                   admin.get(f"/v2.0/trunks/{ZERO_UUID}/get_subports"),
                   admin.put(f"/v2.0/trunks/{ZERO_UUID}/add_subports", {"sub_ports": []}),
                   admin.delete(f"/v2.0/trunks/{ZERO_UUID}")):
        assert error(result, 404, "TrunkNotFound") == f"Trunk {ZERO_UUID} could not be found."


def test_a_subport_attached_to_a_device_is_in_use(admin: Client,
                                                  ports: list[dict[str, Any]]) -> None:
    p = ports[1]
    admin.put(f"/v2.0/ports/{p['id']}", {"port": {"device_id": "vm-1"}})
    trunk = _trunk(admin, ports[0]["id"])
    assert error(admin.put(f"/v2.0/trunks/{trunk['id']}/add_subports",
                           {"sub_ports": [_vlan(p["id"], 9)]}), 409, "PortInUse") == (
        f"Unable to complete operation on port {p['id']} for network {p['network_id']}. "
        f"Port already has an attached device vm-1.")
    # A parent may have a device (the instance the trunk belongs to).
    _trunk(admin, p["id"])


def test_ports_in_a_trunk_cannot_be_deleted(admin: Client,
                                            ports: list[dict[str, Any]]) -> None:
    p = [x["id"] for x in ports]
    trunk = _trunk(admin, p[0], _vlan(p[1], 100))
    assert error(admin.delete(f"/v2.0/ports/{p[0]}"), 409, "PortInUseAsTrunkParent") == (
        f"Port {p[0]} is currently a parent port for trunk {trunk['id']}.")
    assert error(admin.delete(f"/v2.0/ports/{p[1]}"), 409, "PortInUseAsSubPort") == (
        f"Port {p[1]} is currently a subport for trunk {trunk['id']}.")
    assert admin.get(f"/v2.0/ports/{p[1]}")[0] == 200
    assert admin.delete(f"/v2.0/trunks/{trunk['id']}")[0] == 204
    assert admin.delete(f"/v2.0/ports/{p[0]}")[0] == 204
    assert admin.delete(f"/v2.0/ports/{p[1]}")[0] == 204


def test_a_disabled_trunk_keeps_its_subports_and_stays(admin: Client,
                                                       ports: list[dict[str, Any]]) -> None:
    p = [x["id"] for x in ports]
    trunk = _trunk(admin, p[0], _vlan(p[1], 100))
    status, body = admin.put(f"/v2.0/trunks/{trunk['id']}", {"trunk": {"admin_state_up": False}})
    assert status == 200 and body["trunk"]["revision_number"] == 1
    message = f"Trunk {trunk['id']} is currently disabled."
    assert error(admin.put(f"/v2.0/trunks/{trunk['id']}/add_subports",
                           {"sub_ports": [_vlan(p[2], 9)]}), 409, "TrunkDisabled") == message
    error(admin.put(f"/v2.0/trunks/{trunk['id']}/remove_subports",
                    {"sub_ports": [{"port_id": p[1]}]}), 409, "TrunkDisabled")
    error(admin.delete(f"/v2.0/trunks/{trunk['id']}"), 409, "TrunkDisabled")
    # Its own attributes still change, as upstream.
    status, body = admin.put(f"/v2.0/trunks/{trunk['id']}", {"trunk": {"name": "renamed"}})
    assert status == 200 and body["trunk"]["name"] == "renamed"
    assert body["trunk"]["sub_ports"] == [_vlan(p[1], 100)]


def test_a_trunk_on_a_bound_parent_cannot_be_made_or_deleted(
        admin: Client, ports: list[dict[str, Any]]) -> None:
    p = [x["id"] for x in ports]
    trunk = _trunk(admin, p[0])
    admin.put(f"/v2.0/ports/{p[0]}", {"port": {"binding:host_id": "host-a"}})
    assert error(admin.delete(f"/v2.0/trunks/{trunk['id']}"), 409, "TrunkInUse") == (
        f"Trunk {trunk['id']} is currently in use.")
    admin.put(f"/v2.0/ports/{p[2]}", {"port": {"binding:host_id": "host-a"}})
    error(admin.post("/v2.0/trunks", {"trunk": {"port_id": p[2]}}), 409, "ParentPortInUse")
    admin.put(f"/v2.0/ports/{p[0]}", {"port": {"binding:host_id": ""}})
    assert admin.delete(f"/v2.0/trunks/{trunk['id']}")[0] == 204


def test_another_projects_trunk_does_not_exist(member: Client, other: Client,
                                               ports: list[dict[str, Any]]) -> None:
    trunk = _trunk(member, ports[0]["id"])
    for result in (other.get(f"/v2.0/trunks/{trunk['id']}"),
                   other.put(f"/v2.0/trunks/{trunk['id']}", {"trunk": {"name": "x"}}),
                   other.delete(f"/v2.0/trunks/{trunk['id']}"),
                   other.get(f"/v2.0/trunks/{trunk['id']}/get_subports"),
                   other.put(f"/v2.0/trunks/{trunk['id']}/add_subports", {"sub_ports": []})):
        error(result, 404, "TrunkNotFound")
    assert other.get(f"/v2.0/trunks?id={trunk['id']}") == (200, {"trunks": []})
    # Nor may its ports be used: they do not exist for the other project.
    error(other.post("/v2.0/trunks", {"trunk": {"port_id": ports[1]["id"]}}), 404,
          "PortNotFound")
    theirs = port(other, network(other)["id"])
    error(other.post("/v2.0/trunks", {"trunk": {"port_id": theirs["id"], "sub_ports": [
        _vlan(ports[1]["id"], 5)]}}), 404, "PortNotFound")


def test_a_reader_sees_but_does_not_change_trunks(server: Any, project_id: str,
                                                  member: Client,
                                                  ports: list[dict[str, Any]]) -> None:
    trunk = _trunk(member, ports[0]["id"])
    reader = Client(server.url, project_id, "reader")
    assert reader.get(f"/v2.0/trunks/{trunk['id']}")[0] == 200
    assert reader.get(f"/v2.0/trunks/{trunk['id']}/get_subports")[0] == 200
    assert error(reader.put(f"/v2.0/trunks/{trunk['id']}/add_subports",
                            {"sub_ports": [_vlan(ports[1]["id"], 5)]}),
                 403, "PolicyNotAuthorized") == "rule:add_subports is disallowed by policy"
    error(reader.put(f"/v2.0/trunks/{trunk['id']}", {"trunk": {"name": "x"}}), 403,
          "PolicyNotAuthorized")
    error(reader.delete(f"/v2.0/trunks/{trunk['id']}"), 403, "PolicyNotAuthorized")


def test_trunks_filter_and_carry_tags(admin: Client, ports: list[dict[str, Any]]) -> None:
    trunk = _trunk(admin, ports[0]["id"], name="tagged")
    assert admin.put(f"/v2.0/trunks/{trunk['id']}/tags/blue")[0] == 201
    status, body = admin.get(f"/v2.0/trunks?tags=blue&port_id={ports[0]['id']}")
    assert [t["id"] for t in body["trunks"]] == [trunk["id"]]
    assert body["trunks"][0]["tags"] == ["blue"]
    assert admin.get(f"/v2.0/trunks?port_id={ports[0]['id']}&admin_state_up=false") == (
        200, {"trunks": []})


def test_trunk_extensions_are_listed_with_upstreams_descriptors(admin: Client) -> None:
    assert admin.get("/v2.0/extensions/trunk")[1]["extension"] == {
        "alias": "trunk", "name": "Trunk Extension",
        "description": "Provides support for trunk ports",
        "updated": "2016-01-01T10:00:00-00:00", "links": []}
    assert admin.get("/v2.0/extensions/trunk-details")[1]["extension"] == {
        "alias": "trunk-details", "name": "Trunk port details",
        "description": "Expose trunk port details",
        "updated": "2016-01-01T10:00:00-00:00", "links": []}

"""Address groups over the API: addresses, their actions, use by rules, policy."""
from __future__ import annotations

from typing import Any

from tests.api._helpers import ZERO_UUID, created, error, unique
from tests.conftest import Client
from tests.secgroups.conftest import group, rule


def address_group(client: Client, **attrs: Any) -> dict[str, Any]:
    attrs.setdefault("name", unique("ag"))
    return created(client.post("/v2.0/address-groups", {"address_group": attrs}),
                   "address_group")


def test_addresses_are_normalised_deduplicated_and_ordered(member: Client) -> None:
    ag = address_group(member, addresses=["10.0.0.1/24", "10.0.0.9/24", "2001:db8::1/128",
                                          "192.168.0.0/16"])
    assert ag["addresses"] == ["10.0.0.0/24", "192.168.0.0/16", "2001:db8::1/128"]
    assert ag["description"] == "" and ag["project_id"] == member.session.headers["X-Project-Id"]
    assert "tags" not in ag
    assert member.get(f"/v2.0/address-groups/{ag['id']}")[1]["address_group"] == ag
    assert address_group(member)["addresses"] == []


def test_addresses_must_be_cidrs_and_change_only_through_actions(member: Client) -> None:
    msg = error(member.post("/v2.0/address-groups", {"address_group": {"addresses": ["bad"]}}),
                400, "HTTPBadRequest")
    assert msg == "Invalid input for addresses. Reason: 'bad' is not a valid IP subnet."
    ag = address_group(member)
    msg = error(member.put(f"/v2.0/address-groups/{ag['id']}",
                           {"address_group": {"addresses": ["10.0.0.0/8"]}}),
                400, "HTTPBadRequest")
    assert msg == "Cannot update read-only attribute addresses"
    status, body = member.put(f"/v2.0/address-groups/{ag['id']}",
                              {"address_group": {"name": "renamed", "description": "d"}})
    assert status == 200 and body["address_group"]["name"] == "renamed"


def test_add_and_remove_addresses(member: Client) -> None:
    ag = address_group(member, addresses=["10.0.0.0/24"])
    base = f"/v2.0/address-groups/{ag['id']}"
    msg = error(member.put(f"{base}/add_addresses", {"addresses": ["10.0.0.1/24"]}), 400,
                "AddressesAlreadyExist")
    assert msg == (f"Addresses ['10.0.0.0/24'] already exist in the address group {ag['id']}.")
    status, body = member.put(f"{base}/add_addresses", {"addresses": ["192.168.0.0/16"]})
    assert status == 200, body
    assert body["address_group"]["addresses"] == ["10.0.0.0/24", "192.168.0.0/16"]
    assert body["address_group"]["revision_number"] > ag["revision_number"]
    msg = error(member.put(f"{base}/remove_addresses", {"addresses": ["172.16.0.0/16"]}), 404,
                "AddressesNotFound")
    assert msg == f"Addresses ['172.16.0.0/16'] not found in the address group {ag['id']}."
    status, body = member.put(f"{base}/remove_addresses", {"addresses": ["10.0.0.0/24"]})
    assert status == 200 and body["address_group"]["addresses"] == ["192.168.0.0/16"]
    error(member.put(f"{base}/add_addresses", {"addresses": ["foo"]}), 400)
    error(member.put(f"/v2.0/address-groups/{ZERO_UUID}/add_addresses",
                     {"addresses": ["10.1.0.0/16"]}), 404, "AddressGroupNotFound")


def test_a_group_in_use_by_a_rule_cannot_be_deleted(member: Client) -> None:
    ag = address_group(member, addresses=["10.0.0.0/24"])
    sg = group(member)
    r = rule(member, sg["id"], remote_address_group_id=ag["id"])
    assert r["remote_address_group_id"] == ag["id"]
    msg = error(member.delete(f"/v2.0/address-groups/{ag['id']}"), 409, "AddressGroupInUse")
    assert msg == (f"Address group {ag['id']} is in use on one or more security group rules.")
    assert member.delete(f"/v2.0/security-group-rules/{r['id']}")[0] == 204
    assert member.delete(f"/v2.0/address-groups/{ag['id']}")[0] == 204
    msg = error(member.get(f"/v2.0/address-groups/{ag['id']}"), 404, "AddressGroupNotFound")
    assert msg == f"Address group {ag['id']} could not be found."


def test_remote_address_group_excludes_other_remotes(member: Client) -> None:
    ag = address_group(member)
    sg = group(member)
    error(member.post("/v2.0/security-group-rules", {"security_group_rule": {
        "security_group_id": sg["id"], "direction": "ingress",
        "remote_address_group_id": ag["id"], "remote_ip_prefix": "10.0.0.0/8"}}),
        400, "SecurityGroupMultipleRemoteEntites")


def test_other_projects_address_groups_are_404(member: Client, other: Client,
                                               admin: Client) -> None:
    ag = address_group(member)
    error(other.get(f"/v2.0/address-groups/{ag['id']}"), 404, "AddressGroupNotFound")
    error(other.put(f"/v2.0/address-groups/{ag['id']}/add_addresses",
                    {"addresses": ["10.0.0.0/8"]}), 404, "AddressGroupNotFound")
    error(other.delete(f"/v2.0/address-groups/{ag['id']}"), 404, "AddressGroupNotFound")
    assert ag["id"] not in {a["id"] for a in other.get("/v2.0/address-groups")[1]
                            ["address_groups"]}
    sg = group(other)
    error(other.post("/v2.0/security-group-rules", {"security_group_rule": {
        "security_group_id": sg["id"], "direction": "ingress",
        "remote_address_group_id": ag["id"]}}), 404, "AddressGroupNotFound")
    assert admin.get(f"/v2.0/address-groups/{ag['id']}")[0] == 200


def test_reader_reads_but_cannot_change_address_groups(member: Client, reader: Client) -> None:
    ag = address_group(member)
    assert reader.get(f"/v2.0/address-groups/{ag['id']}")[0] == 200
    error(reader.post("/v2.0/address-groups", {"address_group": {"name": "r"}}), 403,
          "PolicyNotAuthorized")
    error(reader.put(f"/v2.0/address-groups/{ag['id']}/add_addresses",
                     {"addresses": ["10.0.0.0/8"]}), 403, "PolicyNotAuthorized")
    error(reader.delete(f"/v2.0/address-groups/{ag['id']}"), 403, "PolicyNotAuthorized")


def test_list_and_filter_address_groups(member: Client) -> None:
    ag = address_group(member, name="findme", description="x")
    found = member.get("/v2.0/address-groups?name=findme&fields=id&fields=name")[1]
    assert found["address_groups"] == [{"id": ag["id"], "name": "findme"}]

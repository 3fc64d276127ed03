"""Networks over real HTTP: CRUD, bulk atomicity, revisions, in-use rules."""
from __future__ import annotations

import re

import pytest

from tests.api import _helpers as h

STANDARD = {"id", "project_id", "tenant_id", "name", "description", "created_at",
            "updated_at", "revision_number", "tags"}
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def test_network_create_returns_201_with_defaults_and_standard_attributes(member, project_id):
    net = h.network(member, name="n1")
    assert STANDARD <= set(net)
    assert net["project_id"] == net["tenant_id"] == project_id
    assert (net["admin_state_up"], net["status"], net["shared"]) == (True, "ACTIVE", False)
    assert net["subnets"] == [] and net["tags"] == [] and net["description"] == ""
    assert net["mtu"] == 1500
    assert TIMESTAMP.match(net["created_at"]) and TIMESTAMP.match(net["updated_at"])
    assert isinstance(net["revision_number"], int)


def test_network_show_update_delete_status_codes(member):
    net = h.network(member)
    status, body = member.get(f"/v2.0/networks/{net['id']}")
    assert status == 200 and body["network"]["id"] == net["id"]
    status, body = member.put(f"/v2.0/networks/{net['id']}",
                              {"network": {"name": "renamed", "description": "d"}})
    assert status == 200
    assert (body["network"]["name"], body["network"]["description"]) == ("renamed", "d")
    assert body["network"]["revision_number"] > net["revision_number"]
    assert member.delete(f"/v2.0/networks/{net['id']}") == (204, None)
    h.error(member.get(f"/v2.0/networks/{net['id']}"), 404, "NetworkNotFound")


def test_network_appears_in_list(member):
    net = h.network(member)
    status, body = member.get("/v2.0/networks")
    assert status == 200
    assert net["id"] in [n["id"] for n in body["networks"]]


def test_unknown_network_is_404_network_not_found(member):
    msg = h.error(member.get(f"/v2.0/networks/{h.ZERO_UUID}"), 404, "NetworkNotFound")
    assert msg == f"Network {h.ZERO_UUID} could not be found."
    h.error(member.put(f"/v2.0/networks/{h.ZERO_UUID}", {"network": {"name": "x"}}), 404,
            "NetworkNotFound")
    h.error(member.delete(f"/v2.0/networks/{h.ZERO_UUID}"), 404, "NetworkNotFound")


def test_bulk_network_create_returns_all_items(member):
    names = [h.unique(), h.unique()]
    status, body = member.post("/v2.0/networks", {"networks": [{"name": n} for n in names]})
    assert status == 201
    assert [n["name"] for n in body["networks"]] == names


def test_bulk_network_create_with_a_bad_item_creates_nothing(member):
    name = h.unique()
    h.error(member.post("/v2.0/networks",
                        {"networks": [{"name": name}, {"name": name, "admin_state_up": "x"}]}),
            400)
    assert member.get(f"/v2.0/networks?name={name}")[1]["networks"] == []


def test_bulk_subnet_create_failing_in_the_plugin_creates_nothing(member):
    """The second subnet overlaps the first: the whole bulk is rolled back."""
    net = h.network(member)
    items = [{"network_id": net["id"], "ip_version": 4, "cidr": "10.0.0.0/24"},
             {"network_id": net["id"], "ip_version": 4, "cidr": "10.0.0.0/25"}]
    h.error(member.post("/v2.0/subnets", {"subnets": items}), 400, "InvalidInput")
    assert member.get(f"/v2.0/subnets?network_id={net['id']}")[1]["subnets"] == []


def test_update_with_read_only_attribute_is_400_and_changes_nothing(member):
    net = h.network(member, name="keep")
    h.error(member.put(f"/v2.0/networks/{net['id']}",
                       {"network": {"name": "changed", "status": "DOWN"}}), 400)
    h.error(member.put(f"/v2.0/networks/{net['id']}", {"network": {"id": h.ZERO_UUID}}), 400)
    after = member.get(f"/v2.0/networks/{net['id']}")[1]["network"]
    assert (after["name"], after["status"]) == ("keep", "ACTIVE")
    assert after["revision_number"] == net["revision_number"]


def test_create_with_unknown_attribute_is_400(member):
    name = h.unique()
    h.error(member.post("/v2.0/networks", {"network": {"name": name, "colour": "red"}}), 400)
    h.error(member.post("/v2.0/networks", {"network": {"name": name, "status": "DOWN"}}), 400)
    assert member.get(f"/v2.0/networks?name={name}")[1]["networks"] == []


def test_create_with_bad_value_is_400_invalid_input(member):
    msg = h.error(member.post("/v2.0/networks", {"network": {"admin_state_up": "maybe"}}),
                  400, "InvalidInput")
    assert "'maybe' cannot be converted to boolean" in msg


def test_malformed_json_body_is_400(member):
    status, body = member.req("POST", "/v2.0/networks", data=b"{not json",
                              headers={"Content-Type": "application/json"})
    assert status == 400 and body["NeutronError"]["detail"] == ""


def test_unknown_url_is_404(member):
    h.error(member.get("/v2.0/nothings"), 404)
    h.error(member.get("/v2.0/networks/x/y/z"), 404)


def test_if_match_with_stale_revision_is_412_and_current_revision_succeeds(member):
    net = h.network(member)
    url = f"/v2.0/networks/{net['id']}"
    rev = net["revision_number"]
    msg = h.error(member.put(url, {"network": {"name": "x"}},
                             headers={"If-Match": f"revision_number={rev + 7}"}),
                  412, "RevisionNumberConstraintFailed")
    assert msg == f"Constrained to {rev + 7}, but current revision is {rev}"
    status, body = member.put(url, {"network": {"name": "x"}},
                              headers={"If-Match": f"revision_number={rev}"})
    assert status == 200 and body["network"]["revision_number"] == rev + 1
    h.error(member.delete(url, headers={"If-Match": f"revision_number={rev}"}), 412)
    assert member.delete(url, headers={"If-Match": f"revision_number={rev + 1}"})[0] == 204


def test_delete_network_with_port_is_409_network_in_use_naming_the_port(member):
    net = h.network(member)
    p = h.port(member, net["id"])
    msg = h.error(member.delete(f"/v2.0/networks/{net['id']}"), 409, "NetworkInUse")
    assert net["id"] in msg and p["id"] in msg
    assert member.get(f"/v2.0/networks/{net['id']}")[0] == 200


def test_delete_network_removes_its_subnets(member):
    net = h.network(member)
    sub = h.subnet(member, net["id"])
    assert member.delete(f"/v2.0/networks/{net['id']}")[0] == 204
    h.error(member.get(f"/v2.0/subnets/{sub['id']}"), 404, "SubnetNotFound")


def test_network_lists_its_subnets_and_subnet_creation_bumps_revision(member):
    net = h.network(member)
    sub = h.subnet(member, net["id"])
    after = member.get(f"/v2.0/networks/{net['id']}")[1]["network"]
    assert after["subnets"] == [sub["id"]]
    assert after["revision_number"] > net["revision_number"]


def test_admin_state_up_and_mtu_are_updatable(member):
    net = h.network(member, admin_state_up=False)
    assert net["admin_state_up"] is False
    status, body = member.put(f"/v2.0/networks/{net['id']}",
                              {"network": {"admin_state_up": True, "mtu": 1400}})
    assert status == 200
    assert (body["network"]["admin_state_up"], body["network"]["mtu"]) == (True, 1400)


def test_delete_network_removes_its_dhcp_port(admin):
    net = h.network(admin)
    h.subnet(admin, net["id"])
    dhcp = h.port(admin, net["id"], device_owner="network:dhcp")
    assert admin.delete(f"/v2.0/networks/{net['id']}")[0] == 204
    h.error(admin.get(f"/v2.0/ports/{dhcp['id']}"), 404, "PortNotFound")


def test_update_bumps_updated_at_not_created_at(member):
    net = h.network(member)
    body = member.put(f"/v2.0/networks/{net['id']}", {"network": {"name": "z"}})[1]["network"]
    assert body["created_at"] == net["created_at"]
    assert body["updated_at"] >= net["updated_at"]


# -- MTU minimums: where a subnet needs them, not on a bare network -------------

def _conflict(result, net_id, minimum):
    msg = h.error(result, 409, "NetworkMTUSubnetConflict")
    assert msg == f"MTU of {net_id} is not valid, subnet requires a minimum of {minimum}"


@pytest.mark.parametrize("mtu", [67, 1279])
def test_a_network_without_subnets_takes_an_mtu_below_the_ip_minimums(member, mtu):
    """Upstream refuses nothing at network create (test_networks_negative's
    test_create_subnet_mtu_below_minimum_* create such networks first)."""
    assert h.network(member, mtu=mtu)["mtu"] == mtu


def test_mtu_0_means_the_largest_and_negative_is_400(member):
    assert h.network(member, mtu=0)["mtu"] == 1500
    msg = h.error(member.post("/v2.0/networks", {"network": {"mtu": -1}}), 400, "HTTPBadRequest")
    assert msg == "Invalid input for mtu. Reason: '-1' should be non-negative."


def test_subnet_on_a_network_below_68_is_409(member, admin):
    """Upstream's test_create_subnet_mtu_below_minimum_ipv4: whatever the
    subnet's version, the IPv4 minimum is named."""
    net = h.network(member, mtu=67)
    for cidr, version in (("10.0.0.0/24", 4), ("2001:db8:0:1::/64", 6)):
        body = {"subnet": {"network_id": net["id"], "ip_version": version, "cidr": cidr}}
        _conflict(member.post("/v2.0/subnets", body), net["id"], 68)
        _conflict(admin.post("/v2.0/subnets", body), net["id"], 68)
    assert member.get(f"/v2.0/subnets?network_id={net['id']}")[1]["subnets"] == []


def test_ipv6_subnet_on_a_network_below_1280_is_409_ipv4_is_fine(member):
    """Upstream's test_create_subnet_mtu_below_minimum_ipv6."""
    net = h.network(member, mtu=1279)
    h.subnet(member, net["id"], "10.0.0.0/24")
    _conflict(member.post("/v2.0/subnets", {"subnet": {
        "network_id": net["id"], "ip_version": 6, "cidr": "2001:db8:0:1::/64"}}), net["id"], 1280)


def test_mtu_update_below_what_the_subnets_need_is_409(member, admin):
    """Upstream's test_update_network_mtu_below_minimum_ipv4 and _ipv6."""
    v4 = h.network(member, mtu=1280)
    h.subnet(member, v4["id"], "10.0.0.0/24")
    for client in (member, admin):
        for mtu in (67, 0):
            _conflict(client.put(f"/v2.0/networks/{v4['id']}", {"network": {"mtu": mtu}}),
                      v4["id"], 68)
    assert member.put(f"/v2.0/networks/{v4['id']}", {"network": {"mtu": 1279}})[0] == 200
    v6 = h.network(member, mtu=1280)
    h.subnet(member, v6["id"], "2001:db8:0:1::/64")
    _conflict(member.put(f"/v2.0/networks/{v6['id']}", {"network": {"mtu": 1279}}),
              v6["id"], 1280)
    _conflict(member.put(f"/v2.0/networks/{v6['id']}", {"network": {"mtu": 67}}), v6["id"], 68)
    assert member.get(f"/v2.0/networks/{v6['id']}")[1]["network"]["mtu"] == 1280


def test_mtu_update_to_0_without_subnets_takes_the_largest(member):
    net = h.network(member, mtu=1000)
    status, body = member.put(f"/v2.0/networks/{net['id']}", {"network": {"mtu": 0}})
    assert status == 200 and body["network"]["mtu"] == 1500, body

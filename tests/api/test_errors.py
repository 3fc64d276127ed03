"""The error envelope and the 400s of the web layer, as upstream shapes them."""
from __future__ import annotations

from tests.api import _helpers as h


def test_every_error_is_a_neutron_error_envelope(member):
    h.error(member.get(f"/v2.0/ports/{h.ZERO_UUID}"), 404, "PortNotFound")
    h.error(member.get(f"/v2.0/subnetpools/{h.ZERO_UUID}"), 404, "SubnetPoolNotFound")
    h.error(member.post("/v2.0/networks", {"nope": {}}), 400)
    h.error(member.post("/v2.0/networks", {"network": "notadict"}), 400)
    h.error(member.post("/v2.0/networks", [1, 2]), 400)


def test_conversion_error_is_invalid_input_as_upstream(member):
    net = h.network(member)
    msg = h.error(member.put(f"/v2.0/networks/{net['id']}",
                             {"network": {"admin_state_up": "notbool"}}), 400, "InvalidInput")
    assert msg == "Invalid input for operation: 'notbool' cannot be converted to boolean."


def test_bulk_port_create_with_conflicting_item_creates_nothing(member):
    net = h.network(member)
    h.subnet(member, net["id"])
    name = h.unique()
    items = [{"network_id": net["id"], "name": name, "fixed_ips": [{"ip_address": "10.0.0.5"}]},
             {"network_id": net["id"], "name": name, "fixed_ips": [{"ip_address": "10.0.0.5"}]}]
    h.error(member.post("/v2.0/ports", {"ports": items}), 409, "IpAddressAlreadyAllocated")
    assert member.get(f"/v2.0/ports?name={name}")[1]["ports"] == []
    assert h.port(member, net["id"], fixed_ips=[{"ip_address": "10.0.0.5"}])


def test_port_update_to_taken_address_is_409_and_keeps_the_old_one(member):
    net = h.network(member)
    h.subnet(member, net["id"])
    h.port(member, net["id"], fixed_ips=[{"ip_address": "10.0.0.5"}])
    p = h.port(member, net["id"], fixed_ips=[{"ip_address": "10.0.0.6"}])
    h.error(member.put(f"/v2.0/ports/{p['id']}",
                       {"port": {"fixed_ips": [{"ip_address": "10.0.0.5"}]}}),
            409, "IpAddressAlreadyAllocated")
    after = member.get(f"/v2.0/ports/{p['id']}")[1]["port"]
    assert [f["ip_address"] for f in after["fixed_ips"]] == ["10.0.0.6"]
    assert after["revision_number"] == p["revision_number"]


def test_malformed_json_is_http_bad_request_as_upstream(member):
    msg = h.error(member.req("POST", "/v2.0/networks", data=b"{not json",
                             headers={"Content-Type": "application/json"}),
                  400, "HTTPBadRequest")
    assert msg == "Body contains invalid data"


def test_unknown_attribute_is_http_bad_request_as_upstream(member):
    msg = h.error(member.post("/v2.0/networks", {"network": {"foo": 1}}), 400, "HTTPBadRequest")
    assert msg == "Unrecognized attribute(s) 'foo'"


def test_read_only_attribute_is_http_bad_request_as_upstream(member):
    net = h.network(member)
    msg = h.error(member.put(f"/v2.0/networks/{net['id']}", {"network": {"status": "DOWN"}}),
                  400, "HTTPBadRequest")
    assert msg == "Cannot update read-only attribute status"


def test_validation_failure_is_http_bad_request_as_upstream(member):
    msg = h.error(member.post("/v2.0/networks", {"network": {"name": "x" * 300}}), 400,
                  "HTTPBadRequest")
    assert msg.startswith("Invalid input for name. Reason: ")


def test_unknown_filter_is_http_bad_request_as_upstream(member):
    msg = h.error(member.get("/v2.0/networks?colour=red"), 400, "HTTPBadRequest")
    assert msg == "['colour'] is invalid attribute for filtering"


def test_unparseable_if_match_is_ignored_as_upstream(member):
    net = h.network(member)
    status, _ = member.put(f"/v2.0/networks/{net['id']}", {"network": {"name": "x"}},
                           headers={"If-Match": "garbage"})
    assert status == 200

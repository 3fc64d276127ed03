"""``/v2.0/flavors``: admins write flavors, every reader reads them.

Every expectation here was observed on upstream Neutron 29 (flavors plugin
with the router plugin loaded).
"""
from __future__ import annotations

import uuid

from tests.api._helpers import ZERO_UUID, error
from tests.conftest import Client
from tests.flavors.conftest import FLAVORS, bind, flavor, profile


def test_a_flavor_shows_upstreams_attributes_and_every_reader_sees_it(
        admin: Client, member: Client, other: Client) -> None:
    fl = flavor(admin, name="gold", description="fast routers")
    assert fl == {"id": fl["id"], "name": "gold", "description": "fast routers",
                  "service_type": "L3_ROUTER_NAT", "enabled": True, "service_profiles": []}
    for client in (admin, member, other):
        assert client.get(f"{FLAVORS}/{fl['id']}") == (200, {"flavor": fl})
        assert client.get(f"{FLAVORS}?id={fl['id']}") == (200, {"flavors": [fl]})


def test_callers_without_a_reader_role_see_no_flavors(admin: Client, server) -> None:
    fl = flavor(admin)
    nobody = Client(server.url, uuid.uuid4().hex, "observer")
    assert nobody.get(f"{FLAVORS}?id={fl['id']}") == (200, {"flavors": []})
    error(nobody.get(f"{FLAVORS}/{fl['id']}"), 404, "FlavorNotFound")


def test_members_may_not_create_update_or_delete_flavors(admin: Client,
                                                          member: Client) -> None:
    assert "create_flavor is disallowed" in error(
        member.post(FLAVORS, {"flavor": {"service_type": "L3_ROUTER_NAT"}}),
        403, "PolicyNotAuthorized")
    fl = flavor(admin)
    assert "update_flavor is disallowed" in error(
        member.put(f"{FLAVORS}/{fl['id']}", {"flavor": {"name": "mine"}}),
        403, "PolicyNotAuthorized")
    assert "delete_flavor is disallowed" in error(
        member.delete(f"{FLAVORS}/{fl['id']}"), 403, "PolicyNotAuthorized")
    assert admin.get(f"{FLAVORS}/{fl['id']}") == (200, {"flavor": fl})


def test_a_flavor_names_a_service_type_a_loaded_plugin_provides(admin: Client,
                                                                member: Client) -> None:
    assert flavor(admin, service_type="FLAVORS")["service_type"] == "FLAVORS"
    assert flavor(admin, service_type="QOS")["service_type"] == "QOS"
    for wanted in ("NOPE", "METERING", 5):
        assert error(admin.post(FLAVORS, {"flavor": {"service_type": wanted}}),
                     400, "InvalidServiceType") == f"Invalid service type: {wanted}."
    # Checked with the body, before policy.
    error(member.post(FLAVORS, {"flavor": {"service_type": "NOPE"}}), 400,
          "InvalidServiceType")
    assert admin.get(f"{FLAVORS}?service_type=NOPE") == (200, {"flavors": []})


def test_service_type_is_required_and_cannot_change(admin: Client) -> None:
    assert error(admin.post(FLAVORS, {"flavor": {"name": "x"}}), 400, "HTTPBadRequest") == (
        "Failed to parse request. Required attribute 'service_type' not specified")
    fl = flavor(admin)
    assert error(admin.put(f"{FLAVORS}/{fl['id']}", {"flavor": {"service_type": "QOS"}}),
                 400) == "Cannot update read-only attribute service_type"


def test_a_flavor_has_no_owner(admin: Client) -> None:
    error(admin.post(FLAVORS, {"flavor": {"service_type": "L3_ROUTER_NAT",
                                          "project_id": "p"}}), 400, "HTTPBadRequest")


def test_flavors_are_created_one_at_a_time(admin: Client) -> None:
    assert error(admin.post(FLAVORS, {"flavors": [{"service_type": "L3_ROUTER_NAT"}]}),
                 400, "HTTPBadRequest") == "Bulk operation not supported"


def test_an_update_changes_name_description_and_enabled_but_not_profiles(
        admin: Client) -> None:
    fl = flavor(admin)
    sp = profile(admin)
    assert bind(admin, fl["id"], sp["id"])[0] == 201
    status, body = admin.put(f"{FLAVORS}/{fl['id']}", {"flavor": {
        "name": "silver", "description": None, "enabled": False, "service_profiles": []}})
    assert status == 200, body
    assert body["flavor"] == {**fl, "name": "silver", "description": None, "enabled": False,
                              "service_profiles": [sp["id"]]}
    # null leaves enabled as it is
    status, body = admin.put(f"{FLAVORS}/{fl['id']}", {"flavor": {"enabled": None}})
    assert (status, body["flavor"]["enabled"]) == (200, False)
    assert admin.get(f"{FLAVORS}/{fl['id']}")[1]["flavor"]["name"] == "silver"


def test_profiles_given_on_create_are_checked_but_not_bound(admin: Client) -> None:
    assert flavor(admin, service_profiles=[ZERO_UUID])["service_profiles"] == []
    assert error(admin.post(FLAVORS, {"flavor": {"service_type": "L3_ROUTER_NAT",
                                                 "service_profiles": ["x"]}}), 400) == (
        "Invalid input for service_profiles. Reason: 'x' is not a valid UUID.")


def test_bad_attribute_values_are_refused(admin: Client) -> None:
    error(admin.post(FLAVORS, {"flavor": {"service_type": "L3_ROUTER_NAT", "name": None}}),
          400, "HTTPBadRequest")
    error(admin.post(FLAVORS, {"flavor": {"service_type": "L3_ROUTER_NAT",
                                          "description": "d" * 1025}}), 400, "HTTPBadRequest")
    assert error(admin.post(FLAVORS, {"flavor": {"service_type": "L3_ROUTER_NAT",
                                                 "enabled": "maybe"}}), 400, "InvalidInput") \
        == "Invalid input for operation: 'maybe' cannot be converted to boolean."


def test_an_unknown_flavor_is_flavor_not_found(admin: Client) -> None:
    for result in (admin.get(f"{FLAVORS}/{ZERO_UUID}"),
                   admin.put(f"{FLAVORS}/{ZERO_UUID}", {"flavor": {"name": "x"}}),
                   admin.delete(f"{FLAVORS}/{ZERO_UUID}")):
        assert error(result, 404, "FlavorNotFound") == f"Flavor {ZERO_UUID} could not be found."
    assert error(admin.get(f"{FLAVORS}/33"), 404) == "Flavor 33 could not be found."
    assert admin.get(f"{FLAVORS}?id=33") == (200, {"flavors": []})


def test_a_deleted_flavor_is_gone(admin: Client) -> None:
    fl = flavor(admin)
    assert admin.delete(f"{FLAVORS}/{fl['id']}") == (204, None)
    assert admin.get(f"{FLAVORS}?id={fl['id']}") == (200, {"flavors": []})
    error(admin.get(f"{FLAVORS}/{fl['id']}"), 404, "FlavorNotFound")


def test_flavors_filter_sort_page_and_select_fields(admin: Client) -> None:
    tag = uuid.uuid4().hex[:8]
    made = [flavor(admin, name=f"{tag}-{n}", description=tag, enabled=n != 1)
            for n in range(3)]
    status, body = admin.get(f"{FLAVORS}?description={tag}&sort_key=name&sort_dir=desc")
    assert [f["name"] for f in body["flavors"]] == [f"{tag}-2", f"{tag}-1", f"{tag}-0"]
    status, body = admin.get(f"{FLAVORS}?description={tag}&enabled=false&fields=id")
    assert body == {"flavors": [{"id": made[1]["id"]}]}
    status, body = admin.get(f"{FLAVORS}?description={tag}&sort_key=name&sort_dir=asc"
                             f"&limit=2&fields=name")
    assert body["flavors"] == [{"name": f"{tag}-0"}, {"name": f"{tag}-1"}]
    assert body["flavors_links"][0]["rel"] == "next"
    status, body = admin.get(f"{FLAVORS}?description={tag}&sort_key=name&sort_dir=asc"
                             f"&limit=2&marker={made[1]['id']}")
    assert [f["id"] for f in body["flavors"]] == [made[2]["id"]]
    assert error(admin.get(f"{FLAVORS}?service_profiles={made[0]['id']}"), 400) == (
        "['service_profiles'] is invalid attribute for filtering")


def test_flavors_extension_is_listed_with_upstreams_descriptor(admin: Client) -> None:
    status, body = admin.get("/v2.0/extensions/flavors")
    assert status == 200
    assert body["extension"] == {
        "name": "Neutron Service Flavors", "alias": "flavors",
        "description": "Flavor specification for Neutron advanced services.",
        "updated": "2015-09-17T10:00:00-00:00", "links": []}

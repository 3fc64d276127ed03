"""``/v2.0/flavors/{id}/service_profiles``: which profiles a flavor offers.

Upstream's answers, oddities included (a bind answers the flavor's id);
where upstream fails with a 500 (an unknown flavor or profile), the answer
is the missing one's 404.
"""
from __future__ import annotations

from tests.api._helpers import ZERO_UUID, error
from tests.conftest import Client
from tests.flavors.conftest import FLAVORS, PROFILES, bind, flavor, profile


def test_a_bound_profile_is_listed_on_its_flavor(admin: Client, member: Client) -> None:
    fl, sp = flavor(admin), profile(admin)
    assert bind(admin, fl["id"], sp["id"]) == (201, {"service_profile": {"id": fl["id"]}})
    for client in (admin, member):
        assert client.get(f"{FLAVORS}/{fl['id']}")[1]["flavor"]["service_profiles"] == [sp["id"]]
    assert admin.get(f"{FLAVORS}/{fl['id']}/service_profiles/{sp['id']}") == (
        200, {"service_profile": {}})


def test_a_flavor_offers_several_profiles_and_a_profile_serves_several_flavors(
        admin: Client) -> None:
    one, two = flavor(admin), flavor(admin)
    sps = sorted([profile(admin)["id"], profile(admin)["id"]])
    for sp_id in sps:
        assert bind(admin, one["id"], sp_id)[0] == 201
    assert bind(admin, two["id"], sps[0])[0] == 201
    listed = {f["id"]: f["service_profiles"]
              for f in admin.get(f"{FLAVORS}?id={one['id']}&id={two['id']}")[1]["flavors"]}
    assert listed == {one["id"]: sps, two["id"]: [sps[0]]}


def test_binding_twice_is_a_conflict(admin: Client) -> None:
    fl, sp = flavor(admin), profile(admin)
    bind(admin, fl["id"], sp["id"])
    assert error(bind(admin, fl["id"], sp["id"]), 409, "FlavorServiceProfileBindingExists") \
        == f"Service Profile {sp['id']} is already associated with flavor {fl['id']}."


def test_binding_an_unknown_flavor_or_profile_is_not_found(admin: Client) -> None:
    fl, sp = flavor(admin), profile(admin)
    error(bind(admin, ZERO_UUID, sp["id"]), 404, "FlavorNotFound")
    error(bind(admin, fl["id"], ZERO_UUID), 404, "ServiceProfileNotFound")
    assert admin.get(f"{FLAVORS}/{fl['id']}")[1]["flavor"]["service_profiles"] == []


def test_a_bind_body_is_checked_as_upstream_words_it(admin: Client) -> None:
    fl = flavor(admin)
    url = f"{FLAVORS}/{fl['id']}/service_profiles"
    cases = [({}, "Resource body required"),
             ([1], "Body contains invalid data"),
             ({"service_profile": "x"}, "Object 'service_profile' contains invalid data"),
             ({"service_profile": {}},
              "Failed to parse request. Required attribute 'id' not specified"),
             ({"service_profile": {"id": "xx"}},
              "Invalid input for id. Reason: 'xx' is not a valid UUID."),
             ({"service_profile": {"id": ZERO_UUID, "foo": 1}},
              "Unrecognized attribute(s) 'foo'")]
    for body, message in cases:
        assert error(admin.post(url, body), 400, "HTTPBadRequest") == message


def test_a_bound_profile_can_be_neither_changed_nor_deleted(admin: Client) -> None:
    fl, sp = flavor(admin), profile(admin)
    bind(admin, fl["id"], sp["id"])
    in_use = f"Service Profile {sp['id']} is used by some service instance."
    assert error(admin.put(f"{PROFILES}/{sp['id']}", {"service_profile": {"enabled": False}}),
                 409, "ServiceProfileInUse") == in_use
    assert error(admin.delete(f"{PROFILES}/{sp['id']}"), 409, "ServiceProfileInUse") == in_use
    assert admin.delete(f"{FLAVORS}/{fl['id']}/service_profiles/{sp['id']}") == (204, None)
    assert admin.put(f"{PROFILES}/{sp['id']}",
                     {"service_profile": {"enabled": False}})[0] == 200
    assert admin.delete(f"{PROFILES}/{sp['id']}") == (204, None)


def test_deleting_a_flavor_releases_its_profiles(admin: Client) -> None:
    fl, sp = flavor(admin), profile(admin)
    bind(admin, fl["id"], sp["id"])
    assert admin.delete(f"{FLAVORS}/{fl['id']}") == (204, None)
    assert admin.delete(f"{PROFILES}/{sp['id']}") == (204, None)


def test_unbinding_or_showing_what_is_not_bound_is_not_found(admin: Client) -> None:
    fl, sp = flavor(admin), profile(admin)
    message = f"Service Profile {sp['id']} is not associated with flavor {fl['id']}."
    url = f"{FLAVORS}/{fl['id']}/service_profiles/{sp['id']}"
    assert error(admin.delete(url), 404, "FlavorServiceProfileBindingNotFound") == message
    assert error(admin.get(url), 404, "FlavorServiceProfileBindingNotFound") == message


def test_members_may_not_bind_unbind_or_read_bindings(admin: Client, member: Client) -> None:
    fl, sp = flavor(admin), profile(admin)
    assert "create_flavor_service_profile is disallowed" in error(
        bind(member, fl["id"], sp["id"]), 403, "PolicyNotAuthorized")
    bind(admin, fl["id"], sp["id"])
    url = f"{FLAVORS}/{fl['id']}/service_profiles/{sp['id']}"
    error(member.get(url), 403, "PolicyNotAuthorized")
    assert "delete_flavor_service_profile is disallowed" in error(
        member.delete(url), 403, "PolicyNotAuthorized")
    assert admin.get(f"{FLAVORS}/{fl['id']}")[1]["flavor"]["service_profiles"] == [sp["id"]]


def test_what_upstream_routes_but_cannot_answer_is_not_served(admin: Client) -> None:
    """Upstream answers these with a 500 (its plugin lacks the methods)."""
    fl = flavor(admin)
    error(admin.get(f"{FLAVORS}/{fl['id']}/service_profiles"), 405)
    error(admin.get(f"{FLAVORS}/{fl['id']}/next_providers"), 404)

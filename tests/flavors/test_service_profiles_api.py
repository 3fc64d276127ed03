"""``/v2.0/service_profiles``: admin only; a profile names a known
provider's driver or carries metainfo.

Every expectation here was observed on upstream Neutron 29.
"""
from __future__ import annotations

from tests.api._helpers import ZERO_UUID, error
from tests.conftest import Client
from tests.flavors.conftest import DRIVER, PROFILES, profile


def test_a_profile_shows_upstreams_attributes(admin: Client) -> None:
    sp = profile(admin, description="d", metainfo='{"data": "value"}')
    assert sp == {"id": sp["id"], "description": "d", "driver": "", "enabled": True,
                  "metainfo": '{"data": "value"}'}
    assert admin.get(f"{PROFILES}/{sp['id']}") == (200, {"service_profile": sp})


def test_a_profile_needs_a_driver_or_metainfo(admin: Client) -> None:
    for body in ({}, {"metainfo": ""}, {"metainfo": None}, {"driver": ""}):
        assert error(admin.post(PROFILES, {"service_profile": body}), 400,
                     "ServiceProfileEmpty") == "Service Profile needs either a driver or metainfo."


def test_a_profiles_driver_is_a_known_providers(admin: Client) -> None:
    sp = profile(admin, driver=DRIVER)
    assert (sp["driver"], sp["metainfo"]) == (DRIVER, "")
    assert error(admin.post(PROFILES, {"service_profile": {"driver": "x.y"}}), 404,
                 "ServiceProfileDriverNotFound") == "Service Profile driver x.y could not be found."
    assert error(admin.put(f"{PROFILES}/{sp['id']}", {"service_profile": {"driver": "bad"}}),
                 404, "ServiceProfileDriverNotFound") == (
        "Service Profile driver bad could not be found.")
    assert admin.get(f"{PROFILES}/{sp['id']}")[1]["service_profile"]["driver"] == DRIVER


def test_the_providers_list_does_not_show_drivers(admin: Client) -> None:
    """The configured ones first, then the router plugin's own."""
    assert admin.get("/v2.0/service-providers") == (200, {"service_providers": [
        {"service_type": "L3_ROUTER_NAT", "name": "single_node", "default": False},
        {"service_type": "VPN", "name": "strongswan", "default": False},
        *[{"service_type": "L3_ROUTER_NAT", "name": name, "default": False}
          for name in ("dvrha", "dvr", "ha")]]})


def test_an_update_changes_what_it_names(admin: Client) -> None:
    sp = profile(admin)
    status, body = admin.put(f"{PROFILES}/{sp['id']}", {"service_profile": {
        "enabled": False, "metainfo": "zz", "description": None}})
    assert status == 200, body
    assert body["service_profile"] == {**sp, "enabled": False, "metainfo": "zz",
                                       "description": None}
    assert admin.get(f"{PROFILES}/{sp['id']}") == (200, body)


def test_metainfo_and_driver_must_be_text(admin: Client) -> None:
    error(admin.post(PROFILES, {"service_profile": {"metainfo": {"a": 1}}}), 400,
          "HTTPBadRequest")
    assert error(admin.post(PROFILES, {"service_profile": {"metainfo": "x", "driver": None}}),
                 400) == "Invalid input for driver. Reason: 'None' is not a valid string."
    error(admin.post(PROFILES, {"service_profile": {"metainfo": "m" * 4097}}), 400,
          "HTTPBadRequest")


def test_profiles_are_created_one_at_a_time(admin: Client) -> None:
    assert error(admin.post(PROFILES, {"service_profiles": [{"metainfo": "x"}]}), 400,
                 "HTTPBadRequest") == "Bulk operation not supported"


def test_members_neither_see_nor_change_profiles(admin: Client, member: Client) -> None:
    sp = profile(admin)
    assert "create_service_profile is disallowed" in error(
        member.post(PROFILES, {"service_profile": {"metainfo": "x"}}), 403,
        "PolicyNotAuthorized")
    assert member.get(f"{PROFILES}?id={sp['id']}") == (200, {"service_profiles": []})
    error(member.get(f"{PROFILES}/{sp['id']}"), 404, "HTTPNotFound")
    error(member.put(f"{PROFILES}/{sp['id']}", {"service_profile": {"enabled": False}}),
          404, "HTTPNotFound")
    error(member.delete(f"{PROFILES}/{sp['id']}"), 404, "HTTPNotFound")
    assert admin.get(f"{PROFILES}/{sp['id']}") == (200, {"service_profile": sp})


def test_an_unknown_profile_is_service_profile_not_found(admin: Client) -> None:
    assert error(admin.get(f"{PROFILES}/33"), 404, "ServiceProfileNotFound") == (
        "Service Profile 33 could not be found.")
    error(admin.delete(f"{PROFILES}/{ZERO_UUID}"), 404, "ServiceProfileNotFound")
    assert admin.get(f"{PROFILES}?id=33") == (200, {"service_profiles": []})


def test_a_deleted_profile_is_gone(admin: Client) -> None:
    sp = profile(admin)
    assert admin.delete(f"{PROFILES}/{sp['id']}") == (204, None)
    assert admin.get(f"{PROFILES}?id={sp['id']}") == (200, {"service_profiles": []})


def test_profiles_filter_and_select_fields(admin: Client) -> None:
    sp = profile(admin, driver=DRIVER, enabled=False)
    status, body = admin.get(f"{PROFILES}?driver={DRIVER}&enabled=false&fields=id")
    assert {"id": sp["id"]} in body["service_profiles"]
    assert all(set(p) == {"id"} for p in body["service_profiles"])
    assert error(admin.get(f"{PROFILES}?metainfo=x"), 400) == (
        "['metainfo'] is invalid attribute for filtering")

"""``l3-flavors``: a router made with a flavor keeps it, and is served by
the provider the flavor's first service profile names.

Every expectation here was observed on upstream Neutron 29, except the
one said otherwise.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.api._helpers import ZERO_UUID, created, error, unique
from tests.conftest import Client, Server
from tests.flavors.conftest import DRIVER, FLAVORS, VPN_DRIVER, bind, flavor, profile

ROUTERS = "/v2.0/routers"
DVR_DRIVER = "neutron.services.l3_router.service_providers.dvr.DvrDriver"


def l3_flavor(admin: Client, driver: str = DRIVER, **attrs: Any) -> dict[str, Any]:
    fl = flavor(admin, **attrs)
    assert bind(admin, fl["id"], profile(admin, driver=driver)["id"])[0] == 201
    return fl


def router(client: Client, **attrs: Any) -> tuple[int, Any]:
    return client.post(ROUTERS, {"router": {"name": unique("r"), **attrs}})


def names(client: Client) -> list[str]:
    return [r["name"] for r in client.get(ROUTERS)[1]["routers"]]


def test_a_member_makes_a_router_of_a_flavor_and_it_shows_it(
        admin: Client, member: Client, other: Client) -> None:
    fl = l3_flavor(admin)
    r = created(router(member, flavor_id=fl["id"]), "router")
    assert r["flavor_id"] == fl["id"]
    assert member.get(f"{ROUTERS}/{r['id']}")[1]["router"]["flavor_id"] == fl["id"]
    shown = admin.get(f"{ROUTERS}/{r['id']}")[1]["router"]
    assert (shown["flavor_id"], shown["distributed"], shown["ha"]) == (fl["id"], False, False)
    error(other.get(f"{ROUTERS}/{r['id']}"), 404, "RouterNotFound")
    assert created(router(member), "router")["flavor_id"] is None


def test_a_routers_flavor_cannot_be_changed(admin: Client, member: Client) -> None:
    fl, other_fl = l3_flavor(admin), l3_flavor(admin)
    r = created(router(member, flavor_id=fl["id"]), "router")
    for client in (member, admin):
        assert error(client.put(f"{ROUTERS}/{r['id']}", {"router": {"flavor_id": other_fl["id"]}}),
                     400, "HTTPBadRequest") == "Cannot update read-only attribute flavor_id"
    assert admin.get(f"{ROUTERS}/{r['id']}")[1]["router"]["flavor_id"] == fl["id"]


def test_a_flavor_a_router_uses_cannot_be_deleted(admin: Client, member: Client) -> None:
    fl = l3_flavor(admin)
    r = created(router(member, flavor_id=fl["id"]), "router")
    assert error(admin.delete(f"{FLAVORS}/{fl['id']}"), 409, "FlavorInUse") == (
        f"Flavor {fl['id']} is used by some service instance.")
    assert member.delete(f"{ROUTERS}/{r['id']}")[0] == 204
    assert admin.delete(f"{FLAVORS}/{fl['id']}")[0] == 204


def test_a_flavor_that_does_not_exist_is_not_found_and_nothing_is_made(
        admin: Client, member: Client) -> None:
    for value, shown in ((ZERO_UUID, ZERO_UUID), ("abc", "abc"), (None, "None"), (5, "5")):
        assert error(router(member, name="none", flavor_id=value), 404, "FlavorNotFound") == (
            f"Flavor {shown} could not be found.")
    assert "none" not in names(member)


def test_a_flavor_must_lead_to_an_enabled_profile_with_a_router_driver(
        admin: Client, member: Client) -> None:
    lonely = flavor(admin)
    assert error(router(member, name="bad", flavor_id=lonely["id"]), 404,
                 "FlavorServiceProfileBindingNotFound") == (
        f"Service Profile  is not associated with flavor {lonely['id']}.")
    off = flavor(admin)
    bind(admin, off["id"], profile(admin, driver=DRIVER, enabled=False)["id"])
    assert error(router(member, name="bad", flavor_id=off["id"]), 503,
                 "ServiceProfileDisabled") == "Service Profile is not enabled."
    meta = flavor(admin)
    bind(admin, meta["id"], profile(admin)["id"])
    assert error(router(member, name="bad", flavor_id=meta["id"]), 404,
                 "ServiceProfileDriverNotFound") == "Service Profile driver  could not be found."
    assert "bad" not in names(member)


def test_a_profile_of_another_services_provider_is_refused(admin: Client,
                                                           member: Client) -> None:
    """Not observed: upstream fails without an answer (no router driver of
    that provider's name); here the driver is not found among the router's."""
    vpn = l3_flavor(admin, driver=VPN_DRIVER)
    assert error(router(member, name="bad", flavor_id=vpn["id"]), 404,
                 "ServiceProfileDriverNotFound") == (
        f"Service Profile driver {VPN_DRIVER} could not be found.")
    assert "bad" not in names(member)


def test_flags_the_flavors_provider_does_not_support_are_refused(admin: Client) -> None:
    single, dvr = l3_flavor(admin), l3_flavor(admin, driver=DVR_DRIVER)
    assert error(router(admin, name="bad", flavor_id=single["id"], distributed=True), 400,
                 "InvalidInput") == ("Invalid input for operation: Provider single_node does "
                                     "not support distributed=True.")
    # Upstream answers its HA network's failure first where it has none to give.
    assert error(router(admin, name="bad", flavor_id=single["id"], ha=True), 400,
                 "InvalidInput") == ("Invalid input for operation: Provider single_node does "
                                     "not support ha=True.")
    assert error(router(admin, name="bad", flavor_id=dvr["id"], distributed=False), 400,
                 "InvalidInput") == ("Invalid input for operation: Provider dvr does not "
                                     "support distributed=False.")
    assert "bad" not in names(admin)
    ok = created(router(admin, flavor_id=single["id"], distributed=False, ha=False), "router")
    assert (ok["distributed"], ok["ha"]) == (False, False)
    assert created(router(admin, flavor_id=dvr["id"], distributed=True),
                   "router")["distributed"] is True
    # A flag left out keeps its default: the provider does not set it.
    assert created(router(admin, flavor_id=dvr["id"]), "router")["distributed"] is False


def test_neither_a_flavors_state_nor_its_service_type_is_checked(
        admin: Client, member: Client) -> None:
    for fl in (l3_flavor(admin, enabled=False), l3_flavor(admin, service_type="QOS")):
        assert created(router(member, flavor_id=fl["id"]), "router")["flavor_id"] == fl["id"]


def test_routers_sort_by_flavor(admin: Client, member: Client) -> None:
    made = [created(router(member, flavor_id=l3_flavor(admin)["id"]), "router")
            for _ in range(2)]
    listed = member.get(f"{ROUTERS}?sort_key=flavor_id&sort_dir=desc")[1]["routers"]
    ids = [r["id"] for r in listed if r["id"] in {m["id"] for m in made}]
    assert ids == [m["id"] for m in sorted(made, key=lambda m: m["flavor_id"], reverse=True)]


def test_l3_flavors_comes_with_the_flavors_plugin(admin: Client, tmp_path: Path) -> None:
    aliases = {e["alias"] for e in admin.get("/v2.0/extensions")[1]["extensions"]}
    assert {"flavors", "l3-flavors"} <= aliases
    srv = Server(tmp_path, extra="service_plugins = router\n").start()
    try:
        alone = Client(srv.url)
        aliases = {e["alias"] for e in alone.get("/v2.0/extensions")[1]["extensions"]}
        assert "l3-flavors" not in aliases
        r = created(router(alone), "router")
        assert "flavor_id" not in r
        assert error(router(alone, flavor_id=ZERO_UUID), 400, "HTTPBadRequest") == (
            "Unrecognized attribute(s) 'flavor_id'")
    finally:
        srv.stop()

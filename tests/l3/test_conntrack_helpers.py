"""Router conntrack helpers (``l3-conntrack-helper``, ``expose-l3-conntrack-helper``),
as observed on upstream Neutron 29 with its default ``allowed_conntrack_helpers``."""
from __future__ import annotations

import pytest

from tests.api import _helpers as h
from tests.l3 import _l3 as l3

ALIASES = ("l3-conntrack-helper", "expose-l3-conntrack-helper")


@pytest.fixture
def rtr(member):
    r = l3.router(member)
    return {"router": r, "url": f"/v2.0/routers/{r['id']}/conntrack_helpers"}


def body(**attrs):
    cth = {"helper": "tftp", "protocol": "udp", "port": 69}
    cth.update(attrs)
    return {"conntrack_helper": {k: v for k, v in cth.items() if v is not None}}


def create(client, rtr, **attrs):
    return h.created(client.post(rtr["url"], body(**attrs)), "conntrack_helper")


def test_extensions_are_listed(admin):
    shown = {e["alias"]: e for e in admin.get("/v2.0/extensions")[1]["extensions"]}
    for alias in ALIASES:
        assert alias in shown
    assert shown["l3-conntrack-helper"]["name"] == "L3 Conntrack helper"


def test_create_list_update_show_delete(member, rtr):
    cth = create(member, rtr)
    assert cth == {"id": cth["id"], "protocol": "udp", "port": 69, "helper": "tftp"}
    url = f"{rtr['url']}/{cth['id']}"
    assert member.get(url) == (200, {"conntrack_helper": cth})
    assert member.get(rtr["url"]) == (200, {"conntrack_helpers": [cth]})
    assert member.get(f"{rtr['url']}?fields=port") == (200, {"conntrack_helpers": [
        {"port": 69}]})
    status, updated = member.put(url, {"conntrack_helper": {"port": "6969"}})
    assert status == 200, updated
    assert updated["conntrack_helper"] == {**cth, "port": 6969}
    assert member.get(url)[1]["conntrack_helper"]["port"] == 6969
    assert member.delete(url)[0] == 204
    msg = h.error(member.get(url), 404, "ConntrackHelperNotFound")
    assert msg == f"Conntrack Helper {cth['id']} could not be found."
    h.error(member.delete(url), 404, "ConntrackHelperNotFound")


def test_router_shows_its_helpers_and_revision_moves(member, rtr):
    rid = rtr["router"]["id"]
    assert rtr["router"]["conntrack_helpers"] == []
    before = member.get(f"/v2.0/routers/{rid}")[1]["router"]["revision_number"]
    ftp = create(member, rtr, helper="ftp", protocol="tcp", port=21)
    create(member, rtr, port=60)
    shown = member.get(f"/v2.0/routers/{rid}")[1]["router"]
    assert sorted(shown["conntrack_helpers"], key=lambda c: c["port"]) == [
        {"protocol": "tcp", "port": 21, "helper": "ftp"},
        {"protocol": "udp", "port": 60, "helper": "tftp"}]
    assert shown["revision_number"] == before + 2
    listed = member.get(f"/v2.0/routers?id={rid}")[1]["routers"][0]
    assert sorted(listed["conntrack_helpers"], key=lambda c: c["port"]) == sorted(
        shown["conntrack_helpers"], key=lambda c: c["port"])
    assert member.delete(f"{rtr['url']}/{ftp['id']}")[0] == 204
    shown = member.get(f"/v2.0/routers/{rid}")[1]["router"]
    assert shown["conntrack_helpers"] == [{"protocol": "udp", "port": 60, "helper": "tftp"}]


def test_duplicate_is_refused(member, rtr):
    cth = create(member, rtr)
    rid = rtr["router"]["id"]
    expected = (f"Bad conntrack_helper request: A duplicate conntrack helper entry with same "
                f"attributes already exists, conflicting values are {{'router_id': '{rid}', "
                f"'protocol': 'udp', 'port': 69, 'helper': 'tftp'}}.")
    assert h.error(member.post(rtr["url"], body()), 400, "BadRequest") == expected
    other = create(member, rtr, port=73)
    assert h.error(member.put(f"{rtr['url']}/{other['id']}", {"conntrack_helper": {
        "port": 69}}), 400, "BadRequest") == expected
    listed = member.get(rtr["url"])[1]["conntrack_helpers"]
    assert sorted(c["id"] for c in listed) == sorted([cth["id"], other["id"]])
    # The same helper on another router is fine.
    assert create(member, {"url": f"/v2.0/routers/{l3.router(member)['id']}/conntrack_helpers"})


def test_helper_and_protocol_must_be_allowed(member, rtr):
    msg = h.error(member.post(rtr["url"], body(helper="foo")), 400, "ConntrackHelperNotAllowed")
    assert msg == "Conntrack Helper foo is not allowed."
    msg = h.error(member.post(rtr["url"], body(protocol="tcp")), 400,
                  "InvalidProtocolForHelper")
    assert msg == "Conntrack Helper tftp does not support: tcp. Supported protocols are: udp"
    cth = create(member, rtr)
    url = f"{rtr['url']}/{cth['id']}"
    msg = h.error(member.put(url, {"conntrack_helper": {"helper": "ftp"}}), 400,
                  "InvalidProtocolForHelper")
    assert msg == "Conntrack Helper ftp does not support: udp. Supported protocols are: tcp"
    h.error(member.put(url, {"conntrack_helper": {"helper": "bar"}}), 400,
            "ConntrackHelperNotAllowed")
    # Both helpers of h323 are allowed, each with its own protocol.
    create(member, rtr, helper="h323", protocol="udp", port=1719)
    create(member, rtr, helper="h323", protocol="tcp", port=1720)
    assert len(member.get(rtr["url"])[1]["conntrack_helpers"]) == 3
    assert member.get(url)[1]["conntrack_helper"] == cth


@pytest.mark.parametrize("attrs, kind, message", [
    ({"protocol": "UDP"}, "HTTPBadRequest", "Invalid input for protocol. Reason: UDP is not in "
                                            "valid_values."),
    ({"protocol": "17"}, "HTTPBadRequest", "Invalid input for protocol. Reason: 17 is not in "
                                           "valid_values."),
    ({"protocol": 17}, "InvalidInput", "Invalid input for operation: Input value 17 must be "
                                       "string type."),
    ({"protocol": "xyz"}, "InvalidInput", "Invalid input for operation: IP protocol 'xyz' is "
                                          "not supported. Only protocol names and their integer "
                                          "representation (0 to 255) are supported."),
    ({"port": 0}, "HTTPBadRequest", "Invalid input for port. Reason: '0' is too small - must "
                                    "be at least '1'."),
    ({"port": "abc"}, "InvalidInput", "Invalid input for operation: 'abc' is not an integer."),
    ({"port": None}, "HTTPBadRequest", "Failed to parse request. Required attribute 'port' "
                                       "not specified"),
    ({"helper": None}, "HTTPBadRequest", "Failed to parse request. Required attribute 'helper' "
                                         "not specified"),
    ({"router_id": h.ZERO_UUID}, "HTTPBadRequest", "Unrecognized attribute(s) 'router_id'"),
])
def test_bad_input(member, rtr, attrs, kind, message):
    assert h.error(member.post(rtr["url"], body(**attrs)), 400, kind) == message
    assert member.get(rtr["url"])[1]["conntrack_helpers"] == []


def test_read_only_id(member, rtr):
    cth = create(member, rtr)
    msg = h.error(member.put(f"{rtr['url']}/{cth['id']}", {"conntrack_helper": {
        "id": h.ZERO_UUID}}), 400, "HTTPBadRequest")
    assert msg == "Cannot update read-only attribute id"


def test_other_project_reader_and_admin(admin, member, other, rtr):
    cth = create(member, rtr)
    url = f"{rtr['url']}/{cth['id']}"
    # As upstream: another project lists nothing and sees the web layer's 404
    # (the router is not looked up for it); its create is refused by policy.
    assert other.get(rtr["url"]) == (200, {"conntrack_helpers": []})
    for result in (other.get(url), other.put(url, {"conntrack_helper": {"port": 80}}),
                   other.delete(url)):
        assert h.error(result, 404, "HTTPNotFound") == "The resource could not be found."
    msg = h.error(other.post(rtr["url"], body(port=21, helper="ftp", protocol="tcp")), 403,
                  "PolicyNotAuthorized")
    assert msg == "rule:create_router_conntrack_helper is disallowed by policy"
    msg = h.error(member.post(rtr["url"], {"conntrack_helper": {
        **body(port=70)["conntrack_helper"], "project_id": "another"}}), 400, "HTTPBadRequest")
    assert msg == ("Specifying 'project_id' other than the authenticated project in request "
                   "is not allowed for the current user.")
    reader = l3.reader_of(member)
    assert reader.get(url) == (200, {"conntrack_helper": cth})
    for result, rule in ((reader.post(rtr["url"], body(port=70)), "create"),
                         (reader.put(url, {"conntrack_helper": {"port": 80}}), "update"),
                         (reader.delete(url), "delete")):
        msg = h.error(result, 403, "PolicyNotAuthorized")
        assert msg == f"rule:{rule}_router_conntrack_helper is disallowed by policy"
    assert admin.get(url) == (200, {"conntrack_helper": cth})
    made = create(admin, rtr, helper="ftp", protocol="tcp", port=21)
    status, updated = admin.put(f"{rtr['url']}/{made['id']}", {"conntrack_helper": {
        "port": 2121}})
    assert status == 200 and updated["conntrack_helper"]["port"] == 2121
    assert len(member.get(rtr["url"])[1]["conntrack_helpers"]) == 2
    assert admin.delete(f"{rtr['url']}/{made['id']}")[0] == 204


def test_unknown_router(admin, member, rtr):
    missing = f"/v2.0/routers/{h.ZERO_UUID}/conntrack_helpers"
    assert member.get(missing) == (200, {"conntrack_helpers": []})
    msg = h.error(admin.post(missing, body()), 404, "RouterNotFound")
    assert msg == f"Router {h.ZERO_UUID} could not be found"
    cth = create(member, rtr)
    # A helper under another router than its own is not found.
    other_router = l3.router(member)
    h.error(member.get(f"/v2.0/routers/{other_router['id']}/conntrack_helpers/{cth['id']}"),
            404, "ConntrackHelperNotFound")


def test_router_delete_takes_its_helpers(member, rtr):
    create(member, rtr)
    assert member.delete(f"/v2.0/routers/{rtr['router']['id']}")[0] == 204
    assert member.get(rtr["url"]) == (200, {"conntrack_helpers": []})


def test_router_id_is_no_attribute_of_a_body(member, rtr):
    cth = create(member, rtr)
    msg = h.error(member.put(f"{rtr['url']}/{cth['id']}", {"conntrack_helper": {
        "router_id": h.ZERO_UUID}}), 400, "HTTPBadRequest")
    assert msg == "Unrecognized attribute(s) 'router_id'"

"""Ports' ``numa_affinity_policy`` (``port-numa-affinity-policy`` and
``-socket``) and ``device_profile`` (``port-device-profile``), as upstream."""
from __future__ import annotations

import pytest

from tests.api import _helpers as h


def _aliases(client):
    return {e["alias"] for e in client.get("/v2.0/extensions")[1]["extensions"]}


def test_numa_and_device_profile_aliases_are_listed(member):
    assert {"port-numa-affinity-policy", "port-numa-affinity-policy-socket",
            "port-device-profile"} <= _aliases(member)


def test_a_port_without_them_shows_both_as_null(member):
    net = h.network(member)
    port = h.port(member, net["id"])
    assert (port["numa_affinity_policy"], port["device_profile"]) == (None, None)
    shown = member.get(f"/v2.0/ports/{port['id']}")[1]["port"]
    assert (shown["numa_affinity_policy"], shown["device_profile"]) == (None, None)


@pytest.mark.parametrize("policy", ["required", "preferred", "legacy", "socket"])
def test_numa_affinity_policy_is_kept_on_create_show_and_list(member, policy):
    net = h.network(member)
    port = h.port(member, net["id"], numa_affinity_policy=policy)
    assert port["numa_affinity_policy"] == policy
    assert member.get(f"/v2.0/ports/{port['id']}")[1]["port"]["numa_affinity_policy"] == policy
    listed = member.get(f"/v2.0/ports?network_id={net['id']}")[1]["ports"]
    assert [p["numa_affinity_policy"] for p in listed] == [policy]


@pytest.mark.parametrize("bad, reason", [("bogus", "bogus"), (3, "3"), (True, "True")])
def test_unknown_numa_affinity_policy_is_refused(member, bad, reason):
    net = h.network(member)
    msg = h.error(member.post("/v2.0/ports", {"port": {
        "network_id": net["id"], "numa_affinity_policy": bad}}), 400, "HTTPBadRequest")
    assert msg == f"Invalid input for numa_affinity_policy. Reason: {reason} is not in valid_values."
    assert member.get(f"/v2.0/ports?network_id={net['id']}")[1]["ports"] == []


def test_numa_affinity_policy_is_updated_and_cleared_with_null(member):
    net = h.network(member)
    port = h.port(member, net["id"])
    url = f"/v2.0/ports/{port['id']}"
    status, body = member.put(url, {"port": {"numa_affinity_policy": "required"}})
    assert status == 200 and body["port"]["numa_affinity_policy"] == "required"
    assert body["port"]["revision_number"] > port["revision_number"]
    status, body = member.put(url, {"port": {"numa_affinity_policy": "socket"}})
    assert status == 200 and body["port"]["numa_affinity_policy"] == "socket"
    assert member.get(url)[1]["port"]["numa_affinity_policy"] == "socket"
    status, body = member.put(url, {"port": {"numa_affinity_policy": None}})
    assert status == 200 and body["port"]["numa_affinity_policy"] is None
    assert member.get(url)[1]["port"]["numa_affinity_policy"] is None
    h.error(member.put(url, {"port": {"numa_affinity_policy": "nope"}}), 400)
    assert member.get(url)[1]["port"]["numa_affinity_policy"] is None


def test_other_project_neither_sees_nor_updates_the_policy(member, other, admin):
    net = h.network(member)
    port = h.port(member, net["id"], numa_affinity_policy="preferred")
    url = f"/v2.0/ports/{port['id']}"
    h.error(other.get(url), 404, "PortNotFound")
    h.error(other.put(url, {"port": {"numa_affinity_policy": "legacy"}}), 404, "PortNotFound")
    status, body = admin.put(url, {"port": {"numa_affinity_policy": "legacy"}})
    assert status == 200 and body["port"]["numa_affinity_policy"] == "legacy"


def test_device_profile_is_set_at_create_and_read_only_after(member, admin):
    net = h.network(member)
    port = h.port(member, net["id"], device_profile="accel-profile-1")
    assert port["device_profile"] == "accel-profile-1"
    url = f"/v2.0/ports/{port['id']}"
    assert member.get(url)[1]["port"]["device_profile"] == "accel-profile-1"
    for client in (member, admin):
        msg = h.error(client.put(url, {"port": {"device_profile": "other"}}), 400)
        assert msg == "Cannot update read-only attribute device_profile"
    assert member.get(url)[1]["port"]["device_profile"] == "accel-profile-1"


@pytest.mark.parametrize("bad, reason", [
    (3, "'3' is not a valid string"),
    ("x" * 256, f"'{'x' * 256}' exceeds maximum length of 255"),
])
def test_bad_device_profile_is_refused(member, bad, reason):
    net = h.network(member)
    msg = h.error(member.post("/v2.0/ports", {"port": {
        "network_id": net["id"], "device_profile": bad}}), 400, "HTTPBadRequest")
    assert msg == f"Invalid input for device_profile. Reason: {reason}."


def test_deleting_a_port_with_both_leaves_nothing_behind(member):
    net = h.network(member)
    port = h.port(member, net["id"], numa_affinity_policy="legacy", device_profile="dp")
    assert member.delete(f"/v2.0/ports/{port['id']}")[0] == 204
    assert member.delete(f"/v2.0/networks/{net['id']}")[0] == 204

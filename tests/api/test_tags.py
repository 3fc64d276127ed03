"""The tag API on every taggable resource, as upstream Neutron 29 serves it.

Mirrors neutron-tempest-plugin's ``admin/test_tag.py`` (``TagTestJSON``
and its subclasses per resource: networks, subnets, ports, subnet pools,
routers, floating IPs, security groups, QoS policies, trunks) and adds
what upstream answers beyond it, each observed on a live upstream server:
``POST .../tags`` (``tag-creation``), the body's validation, the limit.
"""
from __future__ import annotations

from typing import Any, Callable

import pytest

from tests.api import _helpers as h
from tests.conftest import Client, Server
from tests.l3 import _l3 as l3


def _subnetpool(client: Client, admin: Client) -> str:
    return h.created(client.post("/v2.0/subnetpools", {"subnetpool": {
        "name": h.unique("pool"), "prefixes": ["10.0.0.0/8"], "default_prefixlen": 24}}),
        "subnetpool")["id"]


def _floatingip(client: Client, admin: Client) -> str:
    net, _ = l3.external_network(admin)
    return l3.floatingip(client, net["id"])["id"]


def _qos_policy(client: Client, admin: Client) -> str:
    # As the plugin's test: an admin's shared policy, tagged by the admin.
    return h.created(admin.post("/v2.0/qos/policies", {"policy": {
        "name": h.unique("qos"), "shared": True}}), "policy")["id"]


def _trunk(client: Client, admin: Client) -> str:
    parent = h.port(client, h.network(client)["id"])
    return h.created(client.post("/v2.0/trunks", {"trunk": {"port_id": parent["id"]}}),
                     "trunk")["id"]


# The URL the plugin's client uses for each (``/v2.0/<resource>/{id}/tags``).
TAGGABLE: dict[str, Callable[[Client, Client], str]] = {
    "networks": lambda c, a: h.network(c)["id"],
    "subnets": lambda c, a: h.subnet(c, h.network(c)["id"])["id"],
    "ports": lambda c, a: h.port(c, h.network(c)["id"])["id"],
    "subnetpools": _subnetpool,
    "routers": lambda c, a: l3.router(c)["id"],
    "floatingips": _floatingip,
    "security-groups": lambda c, a: h.created(c.post("/v2.0/security-groups", {
        "security_group": {"name": h.unique("sg")}}), "security_group")["id"],
    "policies": _qos_policy,
    "trunks": _trunk,
}


def _tags(client: Client, base: str) -> list[str]:
    status, body = client.get(base)
    assert status == 200, body
    return sorted(body["tags"])


@pytest.mark.parametrize("resource", sorted(TAGGABLE))
def test_tag_operations_on_every_taggable_resource(resource: str, member: Client,
                                                   admin: Client) -> None:
    """``TagTestJSON._test_tag_operations``, resource by resource."""
    client = admin if resource == "policies" else member
    base = f"/v2.0/{resource}/{TAGGABLE[resource](member, admin)}/tags"
    assert client.put(base, {"tags": ["red", "blue"]}) == (200, {"tags": ["blue", "red"]})
    assert client.put(f"{base}/green")[0] == 201
    assert client.put(f"{base}/red")[0] == 201
    assert client.put(f"{base}/black.or.white")[0] == 201
    assert _tags(client, base) == ["black.or.white", "blue", "green", "red"]
    status, body = client.put(base, {"tags": ["red", "yellow", "purple"]})
    assert status == 200 and sorted(body["tags"]) == ["purple", "red", "yellow"]
    assert client.get(f"{base}/red")[0] == 204
    h.error(client.get(f"{base}/green"), 404, "TagNotFound")
    assert client.delete(f"{base}/red")[0] == 204
    assert _tags(client, base) == ["purple", "yellow"]
    h.error(client.delete(f"{base}/green"), 404, "TagNotFound")
    assert client.delete(base)[0] == 204
    assert _tags(client, base) == []


def test_qos_policy_tags_live_at_the_bare_collection(admin: Client) -> None:
    """Upstream's tag extension names QoS policies ``policies``, without the
    service's prefix; the prefixed path answers too."""
    pid = _qos_policy(admin, admin)
    assert admin.put(f"/v2.0/policies/{pid}/tags/red")[0] == 201
    assert admin.get(f"/v2.0/qos/policies/{pid}/tags")[1] == {"tags": ["red"]}
    assert admin.get(f"/v2.0/qos/policies/{pid}")[1]["policy"]["tags"] == ["red"]
    h.error(admin.get(f"/v2.0/policies/{pid}"), 404, "HTTPNotFound")


def test_post_adds_the_tags_and_answers_the_body_as_sent(member: Client, other: Client,
                                                         server: Server, admin: Client,
                                                         project_id: str) -> None:
    """``tag-creation``: POST adds to what is there (upstream's
    ``create_tags``), under ``create_<resource>:tags``."""
    base = f"/v2.0/networks/{h.network(member)['id']}/tags"
    assert member.put(base, {"tags": ["a", "b"]})[0] == 200
    assert member.post(base, {"tags": ["c", "a"]}) == (200, {"tags": ["c", "a"]})
    assert _tags(member, base) == ["a", "b", "c"]
    message = h.error(other.post(base, {"tags": ["x"]}), 403, "PolicyNotAuthorized")
    assert message == "rule:create_network:tags is disallowed by policy"
    reader = Client(server.url, project_id, "reader")
    h.error(reader.post(base, {"tags": ["x"]}), 403, "PolicyNotAuthorized")
    assert admin.post(base, {"tags": ["e"]}) == (200, {"tags": ["e"]})
    assert _tags(member, base) == ["a", "b", "c", "e"]
    h.error(member.post(f"/v2.0/networks/{h.ZERO_UUID}/tags", {"tags": ["x"]}), 404,
            "NetworkNotFound")


def test_post_on_one_tag_answers_as_its_show(member: Client) -> None:
    """Upstream's router sends it to the show: 204 when there, else 404."""
    base = f"/v2.0/networks/{h.network(member)['id']}/tags"
    member.put(f"{base}/a")
    assert member.post(f"{base}/a", None)[0] == 204
    assert h.error(member.post(f"{base}/x", None), 404, "TagNotFound") == \
        "Tag x could not be found."


@pytest.mark.parametrize("method", ["PUT", "POST"])
@pytest.mark.parametrize(("body", "message"), [
    ({"foo": 1}, "Invalid input for operation: Invalid tags body."),
    ([1], "Invalid input for operation: Invalid tags body."),
    ({"tags": "x"}, "Invalid input for operation: 'x' is not a list."),
    ({"tags": [1]}, "Invalid input for operation: '1' is not a valid string."),
    ({"tags": ["a", "b", "a", "b"]}, "Invalid input for operation: Duplicate items in the "
                                     "list: 'a, b'."),
    ({"tags": ["a" * 256]}, f"Invalid input for operation: '{'a' * 256}' exceeds maximum "
                            f"length of 255."),
])
def test_a_tags_body_is_checked_as_upstream(member: Client, method: str, body: Any,
                                            message: str) -> None:
    base = f"/v2.0/networks/{h.network(member)['id']}/tags"
    assert h.error(member.req(method, base, body), 400, "InvalidInput") == message
    assert _tags(member, base) == []


def test_an_empty_tag_is_a_tag(member: Client) -> None:
    base = f"/v2.0/networks/{h.network(member)['id']}/tags"
    assert member.put(base, {"tags": [""]}) == (200, {"tags": [""]})
    assert member.post(base, {"tags": ["", "b"]}) == (200, {"tags": ["", "b"]})
    assert _tags(member, base) == ["", "b"]


def test_at_most_fifty_tags_per_request(member: Client) -> None:
    base = f"/v2.0/networks/{h.network(member)['id']}/tags"
    many = [f"t{i}" for i in range(51)]
    for method in ("PUT", "POST"):
        message = h.error(member.req(method, base, {"tags": many}), 400, "BadRequest")
        assert message == ("Bad networks request: The number of tags exceed the "
                           "per-resource limit of 50.")
    assert member.put(base, {"tags": many[:50]})[0] == 200
    h.error(member.put(f"{base}/t50"), 400, "BadRequest")
    assert member.put(f"{base}/t0")[0] == 201
    message = h.error(member.put(f"{base}/{'a' * 256}"), 400, "InvalidInput")
    assert message.endswith("exceeds maximum length of 255.")

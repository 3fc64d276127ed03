"""``network_ha``: a network created with ``ha`` true is its project's HA
network; a project has one at most, as upstream."""
from __future__ import annotations

from tests.api import _helpers as h


def _aliases(client):
    return {e["alias"] for e in client.get("/v2.0/extensions")[1]["extensions"]}


def test_network_ha_is_listed_with_the_router_plugin(member):
    assert {"l3-ha", "network_ha"} <= _aliases(member)


def test_ha_is_accepted_on_create_and_never_shown(member):
    net = h.network(member, ha=True)
    assert "ha" not in net
    assert "ha" not in member.get(f"/v2.0/networks/{net['id']}")[1]["network"]
    assert member.get(f"/v2.0/networks/{net['id']}?fields=ha")[1]["network"] == {}


def test_a_second_ha_network_of_a_project_is_refused_whole(member, other):
    first = h.network(member, ha=True, name="ha-one")
    msg = h.error(member.post("/v2.0/networks", {"network": {"name": "ha-two", "ha": True}}),
                  409, "DuplicatedHANetwork")
    project = first["project_id"]
    assert msg == f"Project {project} already has a HA network."
    names = {n["name"] for n in member.get("/v2.0/networks")[1]["networks"]}
    assert "ha-one" in names and "ha-two" not in names
    # Plain networks and another project's HA network are unaffected.
    h.network(member, ha=False)
    h.network(other, ha=True)


def test_deleting_the_ha_network_lets_the_project_make_another(member):
    net = h.network(member, ha=True)
    assert member.delete(f"/v2.0/networks/{net['id']}")[0] == 204
    h.network(member, ha=True)


def test_ha_is_create_only_and_boolean(member):
    net = h.network(member)
    msg = h.error(member.put(f"/v2.0/networks/{net['id']}", {"network": {"ha": False}}), 400)
    assert msg == "Cannot update read-only attribute ha"
    msg = h.error(member.post("/v2.0/networks", {"network": {"ha": "notbool"}}),
                  400, "InvalidInput")
    assert msg == "Invalid input for operation: 'notbool' cannot be converted to boolean."

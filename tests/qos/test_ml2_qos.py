"""The ``qos`` ML2 extension driver: ``qos_policy_id`` on networks and ports.

On the session server (openvswitch, which enforces every rule type).
"""
from __future__ import annotations

import uuid

from tests.conftest import Client, Server
from tests.qos._qos import error, manager, policy, rule


def _net(client: Client, **attrs: object) -> dict:
    status, body = client.post("/v2.0/networks", {"network": {"name": "q", **attrs}})
    assert status == 201, body
    return body["network"]


def _port(client: Client, net: dict, **attrs: object) -> dict:
    status, body = client.post("/v2.0/ports", {"port": {"network_id": net["id"], **attrs}})
    assert status == 201, body
    return body["port"]


def test_networks_and_ports_carry_their_policy(server: Server) -> None:
    owner = manager(server.url)
    pid = policy(owner)["id"]
    rule(owner, pid, "bandwidth_limit", max_kbps=100)
    net = _net(owner, qos_policy_id=pid)
    assert net["qos_policy_id"] == pid
    plain = _port(owner, net)
    assert (plain["qos_policy_id"], plain["qos_network_policy_id"]) == (None, pid)
    other = policy(owner)["id"]
    own = _port(owner, net, qos_policy_id=other)
    assert (own["qos_policy_id"], own["qos_network_policy_id"]) == (other, pid)
    # qos_network_policy_id follows the network; it is read-only.
    owner.put(f"/v2.0/networks/{net['id']}", {"network": {"qos_policy_id": other}})
    shown = owner.get(f"/v2.0/ports/{plain['id']}")[1]["port"]
    assert shown["qos_network_policy_id"] == other
    error(owner.put(f"/v2.0/ports/{plain['id']}", {"port": {"qos_network_policy_id": pid}}),
          400, "HTTPBadRequest")
    status, body = owner.put(f"/v2.0/ports/{own['id']}", {"port": {"qos_policy_id": None}})
    assert status == 200 and body["port"]["qos_policy_id"] is None
    listed = owner.get(f"/v2.0/ports?network_id={net['id']}&fields=id&fields=qos_policy_id"
                       "&fields=qos_network_policy_id")[1]["ports"]
    assert sorted(p["qos_network_policy_id"] for p in listed) == [other, other]
    # Deleting the network releases the policies.
    for port in (plain, own):
        owner.delete(f"/v2.0/ports/{port['id']}")
    assert owner.delete(f"/v2.0/networks/{net['id']}")[0] == 204
    assert owner.delete(f"/v2.0/qos/policies/{pid}")[0] == 204


def test_policies_the_caller_cannot_use_do_not_exist(server: Server, admin: Client) -> None:
    foreign = policy(manager(server.url))["id"]
    project = uuid.uuid4().hex
    member = Client(server.url, project, "member")
    message = error(member.post("/v2.0/networks", {"network": {"name": "x",
                                                               "qos_policy_id": foreign}}),
                    404, "QosPolicyNotFound")
    assert message == f"QoS policy {foreign} could not be found."
    # Nothing half-created (other tests' shared networks are visible too).
    assert member.get(f"/v2.0/networks?project_id={project}")[1]["networks"] == []
    net = _net(member)
    error(member.put(f"/v2.0/networks/{net['id']}", {"network": {"qos_policy_id": foreign}}),
          404, "QosPolicyNotFound")
    error(member.post("/v2.0/ports", {"port": {"network_id": net["id"],
                                               "qos_policy_id": foreign}}),
          404, "QosPolicyNotFound")
    error(member.post("/v2.0/networks", {"network": {"qos_policy_id": "nope"}}), 400,
          "HTTPBadRequest")
    # A policy shared with the project is usable.
    shared = policy(manager(server.url), shared=True)["id"]
    assert _port(member, net, qos_policy_id=shared)["qos_policy_id"] == shared
    # An admin may attach any policy, but then the member may not replace it.
    admin.put(f"/v2.0/networks/{net['id']}", {"network": {"qos_policy_id": foreign}})
    message = error(member.put(f"/v2.0/networks/{net['id']}",
                               {"network": {"qos_policy_id": None}}), 403,
                    "PolicyRemoveAuthorizationError")
    assert message == (f"Failed to remove provided policy {foreign} because you are not "
                       "authorized.")
    admin.put(f"/v2.0/networks/{net['id']}", {"network": {"qos_policy_id": None}})


def test_new_networks_get_the_projects_default_policy(server: Server, admin: Client) -> None:
    project = uuid.uuid4().hex
    owner = manager(server.url, project)
    default = policy(owner, is_default=True)["id"]
    chosen = policy(owner)["id"]
    assert _net(owner)["qos_policy_id"] == default
    assert _net(owner, qos_policy_id=chosen)["qos_policy_id"] == chosen
    # An admin creating a network for the project gives it the project's default.
    assert _net(admin, project_id=project)["qos_policy_id"] == default
    assert _net(manager(server.url))["qos_policy_id"] is None


def test_network_ports_show_but_do_not_inherit_the_network_policy(server: Server,
                                                                  admin: Client) -> None:
    pid = policy(admin)["id"]
    net = _net(admin, qos_policy_id=pid)
    dhcp = _port(admin, net, device_owner="network:dhcp")
    # Upstream shows the network's policy on every port ...
    assert dhcp["qos_network_policy_id"] == pid and dhcp["qos_policy_id"] is None
    # ... but never applies it to the network's own ports: a rule no backend
    # could apply to them is no reason to refuse (see test_rule_types).
    rule(admin, pid, "dscp_marking", dscp_mark=8)

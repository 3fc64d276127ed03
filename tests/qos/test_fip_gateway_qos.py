"""``qos-fip`` and ``qos-gateway-ip``: QoS policies of floating IPs and router
gateways over the API, as observed on upstream Neutron 29.

On the session server (router and qos service plugins).
"""
from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.api import _helpers as h
from tests.conftest import Client, Server
from tests.l3 import _l3 as l3
from tests.qos._qos import error, manager, policy


@pytest.fixture
def project(server: Server) -> dict[str, Any]:
    """A project whose member owns a port behind a router with a gateway, and
    a QoS policy owned by the project (a manager made it)."""
    pid = uuid.uuid4().hex
    return {"member": Client(server.url, pid, "member"),
            "policy": policy(manager(server.url, pid))["id"]}


@pytest.fixture
def ext(admin: Client) -> dict[str, Any]:
    return l3.external_network(admin)[0]


def test_both_extensions_are_listed_with_the_qos_plugin(member: Client) -> None:
    aliases = {e["alias"] for e in member.get("/v2.0/extensions")[1]["extensions"]}
    assert {"qos-fip", "qos-gateway-ip"} <= aliases
    # upstream's router plugin does not bring the network policy of floating IPs
    assert "qos-fip-network-policy" not in aliases


def test_floating_ip_policy_is_created_updated_and_cleared_by_its_owner(
        project: dict[str, Any], ext: dict[str, Any]) -> None:
    member, pid = project["member"], project["policy"]
    fip = l3.floatingip(member, ext["id"], qos_policy_id=pid)
    assert fip["qos_policy_id"] == pid
    plain = l3.floatingip(member, ext["id"])
    assert plain["qos_policy_id"] is None
    # the binding revised the floating IP made with it, as upstream shows
    assert (fip["revision_number"], plain["revision_number"]) == (1, 0)
    shown = member.get(f"/v2.0/floatingips/{fip['id']}")[1]["floatingip"]
    assert shown["qos_policy_id"] == pid
    listed = member.get(f"/v2.0/floatingips?id={fip['id']}&id={plain['id']}")[1]["floatingips"]
    assert {f["id"]: f["qos_policy_id"] for f in listed} == {fip["id"]: pid, plain["id"]: None}
    status, body = member.put(f"/v2.0/floatingips/{plain['id']}",
                              {"floatingip": {"qos_policy_id": pid}})
    assert status == 200 and body["floatingip"]["qos_policy_id"] == pid, body
    assert body["floatingip"]["revision_number"] > plain["revision_number"]
    status, body = member.put(f"/v2.0/floatingips/{fip['id']}",
                              {"floatingip": {"qos_policy_id": None}})
    assert status == 200 and body["floatingip"]["qos_policy_id"] is None, body
    # not a filter, as upstream
    error(member.get(f"/v2.0/floatingips?qos_policy_id={pid}"), 400, "HTTPBadRequest")
    error(member.post("/v2.0/floatingips", {"floatingip": {
        "floating_network_id": ext["id"], "qos_policy_id": "bad"}}), 400, "HTTPBadRequest")


def test_floating_ip_policy_survives_association_changes(admin: Client,
                                                         project: dict[str, Any]) -> None:
    member, pid = project["member"], project["policy"]
    net, _ = l3.external_network(admin)
    router = l3.router(member, external_gateway_info={"network_id": net["id"]})
    sub = l3.private_subnet(member)
    l3.add_interface(member, router["id"], subnet_id=sub["id"])
    port = h.port(member, sub["network_id"])
    fip = l3.floatingip(member, net["id"], qos_policy_id=pid, port_id=port["id"])
    assert (fip["qos_policy_id"], fip["router_id"]) == (pid, router["id"])
    status, body = member.put(f"/v2.0/floatingips/{fip['id']}", {"floatingip": {"port_id": None}})
    assert status == 200 and body["floatingip"]["qos_policy_id"] == pid, body
    status, body = member.put(f"/v2.0/floatingips/{fip['id']}",
                              {"floatingip": {"port_id": port["id"]}})
    assert status == 200 and body["floatingip"]["qos_policy_id"] == pid, body
    # an empty update disassociates and keeps the policy too
    status, body = member.put(f"/v2.0/floatingips/{fip['id']}", {"floatingip": {}})
    assert status == 200 and body["floatingip"]["port_id"] is None
    assert body["floatingip"]["qos_policy_id"] == pid


def test_another_projects_policy_does_not_exist_unless_shared(
        server: Server, admin: Client, project: dict[str, Any], ext: dict[str, Any]) -> None:
    member = project["member"]
    foreign = policy(manager(server.url))["id"]
    mine = member.session.headers["X-Project-Id"]
    message = error(member.post("/v2.0/floatingips", {"floatingip": {
        "floating_network_id": ext["id"], "qos_policy_id": foreign}}), 404, "QosPolicyNotFound")
    assert message == f"QoS policy {foreign} could not be found."
    # nothing half-created: no floating IP, no address taken
    assert member.get(f"/v2.0/floatingips?project_id={mine}")[1]["floatingips"] == []
    assert admin.get(f"/v2.0/ports?network_id={ext['id']}&device_owner=network:floatingip"
                     )[1]["ports"] == []
    fip = l3.floatingip(member, ext["id"])
    error(member.put(f"/v2.0/floatingips/{fip['id']}", {"floatingip": {"qos_policy_id": foreign}}),
          404, "QosPolicyNotFound")
    assert member.get(f"/v2.0/floatingips/{fip['id']}")[1]["floatingip"]["qos_policy_id"] is None
    error(member.post("/v2.0/floatingips", {"floatingip": {
        "floating_network_id": ext["id"], "qos_policy_id": str(uuid.uuid4())}}),
        404, "QosPolicyNotFound")
    # shared with everyone: usable
    shared = policy(manager(server.url), shared=True)["id"]
    status, body = member.put(f"/v2.0/floatingips/{fip['id']}",
                              {"floatingip": {"qos_policy_id": shared}})
    assert status == 200 and body["floatingip"]["qos_policy_id"] == shared, body
    # an admin may name any policy, on a floating IP of another project too
    status, body = admin.put(f"/v2.0/floatingips/{fip['id']}",
                             {"floatingip": {"qos_policy_id": foreign}})
    assert status == 200 and body["floatingip"]["qos_policy_id"] == foreign, body
    made = l3.floatingip(admin, ext["id"], qos_policy_id=foreign, project_id=mine)
    assert made["qos_policy_id"] == foreign
    # another project's member does not see the floating IP at all
    other = Client(server.url, uuid.uuid4().hex, "member")
    error(other.put(f"/v2.0/floatingips/{fip['id']}", {"floatingip": {"qos_policy_id": None}}),
          404, "FloatingIPNotFound")
    for f in (fip, made):
        assert admin.delete(f"/v2.0/floatingips/{f['id']}")[0] == 204
    assert admin.delete(f"/v2.0/qos/policies/{foreign}")[0] == 204


def test_a_policy_in_use_by_a_floating_ip_or_gateway_cannot_be_deleted(
        admin: Client, project: dict[str, Any], ext: dict[str, Any]) -> None:
    member, pid = project["member"], project["policy"]
    fip = l3.floatingip(member, ext["id"], qos_policy_id=pid)
    message = error(admin.delete(f"/v2.0/qos/policies/{pid}"), 409, "QosPolicyInUse")
    assert message == f"QoS Policy {pid} is used by fip {fip['id']}."
    assert member.delete(f"/v2.0/floatingips/{fip['id']}")[0] == 204
    router = l3.router(member, external_gateway_info={"network_id": ext["id"],
                                                      "qos_policy_id": pid})
    message = error(admin.delete(f"/v2.0/qos/policies/{pid}"), 409, "QosPolicyInUse")
    assert message == f"QoS Policy {pid} is used by router {router['id']}."
    assert member.delete(f"/v2.0/routers/{router['id']}")[0] == 204
    assert admin.delete(f"/v2.0/qos/policies/{pid}")[0] == 204


def test_router_gateway_policy_follows_the_gateway_info(
        server: Server, admin: Client, project: dict[str, Any], ext: dict[str, Any]) -> None:
    member, pid = project["member"], project["policy"]
    router = l3.router(member, external_gateway_info={"network_id": ext["id"],
                                                      "qos_policy_id": pid})
    assert router["external_gateway_info"]["qos_policy_id"] == pid
    assert "qos_policy_id" not in router
    assert router["revision_number"] == 3  # upstream's: one more than without the policy
    shown = member.get(f"/v2.0/routers/{router['id']}")[1]["router"]
    assert shown["external_gateway_info"]["qos_policy_id"] == pid
    path = f"/v2.0/routers/{router['id']}"
    # a gateway update that does not name the policy keeps it
    status, body = member.put(path, {"router": {"external_gateway_info": {
        "network_id": ext["id"]}}})
    assert status == 200 and body["router"]["external_gateway_info"]["qos_policy_id"] == pid
    # null clears it: then the key is not shown at all, as upstream
    status, body = member.put(path, {"router": {"external_gateway_info": {
        "network_id": ext["id"], "qos_policy_id": None}}})
    assert status == 200 and "qos_policy_id" not in body["router"]["external_gateway_info"]
    plain = l3.router(member, external_gateway_info={"network_id": ext["id"]})
    assert "qos_policy_id" not in plain["external_gateway_info"]
    assert plain["revision_number"] == 2
    status, body = member.put(path, {"router": {"external_gateway_info": {
        "network_id": ext["id"], "qos_policy_id": pid}}})
    assert status == 200 and body["router"]["external_gateway_info"]["qos_policy_id"] == pid
    # clearing the gateway clears its policy: the policy can be deleted then
    status, body = member.put(path, {"router": {"external_gateway_info": {}}})
    assert status == 200 and body["router"]["external_gateway_info"] is None
    status, body = member.put(path, {"router": {"external_gateway_info": {
        "network_id": ext["id"]}}})
    assert status == 200 and "qos_policy_id" not in body["router"]["external_gateway_info"]
    # another project's policy does not exist; nothing changes
    foreign = policy(manager(server.url))["id"]
    message = error(member.put(path, {"router": {"external_gateway_info": {
        "network_id": ext["id"], "qos_policy_id": foreign}}}), 404, "QosPolicyNotFound")
    assert message == f"QoS policy {foreign} could not be found."
    projects = member.session.headers["X-Project-Id"]
    before = member.get(f"/v2.0/routers?project_id={projects}")[1]["routers"]
    error(member.post("/v2.0/routers", {"router": {"name": "q", "external_gateway_info": {
        "network_id": ext["id"], "qos_policy_id": foreign}}}), 404, "QosPolicyNotFound")
    assert member.get(f"/v2.0/routers?project_id={projects}")[1]["routers"] == before
    error(member.put(path, {"router": {"external_gateway_info": {
        "network_id": ext["id"], "qos_policy_id": "bad"}}}), 400, "HTTPBadRequest")
    # an admin may name it; another project's member cannot touch the router
    status, body = admin.put(path, {"router": {"external_gateway_info": {
        "network_id": ext["id"], "qos_policy_id": foreign}}})
    assert status == 200 and body["router"]["external_gateway_info"]["qos_policy_id"] == foreign
    other = Client(server.url, uuid.uuid4().hex, "member")
    error(other.put(path, {"router": {"external_gateway_info": {
        "network_id": ext["id"], "qos_policy_id": None}}}), 404, "RouterNotFound")
    for r in (router, plain):
        assert admin.delete(f"/v2.0/routers/{r['id']}")[0] == 204
    assert admin.delete(f"/v2.0/qos/policies/{pid}")[0] == 204
    assert admin.delete(f"/v2.0/qos/policies/{foreign}")[0] == 204


def test_a_shared_policy_a_floating_ip_or_gateway_uses_cannot_be_unshared(
        server: Server, admin: Client, ext: dict[str, Any]) -> None:
    owner = manager(server.url)
    pid = policy(owner, shared=True)["id"]
    user = Client(server.url, uuid.uuid4().hex, "member")
    fip = l3.floatingip(user, ext["id"], qos_policy_id=pid)
    error(owner.put(f"/v2.0/qos/policies/{pid}", {"policy": {"shared": False}}), 409,
          "RbacPolicyInUse")
    assert user.delete(f"/v2.0/floatingips/{fip['id']}")[0] == 204
    router = l3.router(user, external_gateway_info={"network_id": ext["id"],
                                                    "qos_policy_id": pid})
    error(owner.put(f"/v2.0/qos/policies/{pid}", {"policy": {"shared": False}}), 409,
          "RbacPolicyInUse")
    assert user.delete(f"/v2.0/routers/{router['id']}")[0] == 204
    status, body = owner.put(f"/v2.0/qos/policies/{pid}", {"policy": {"shared": False}})
    assert status == 200 and body["policy"]["shared"] is False, body

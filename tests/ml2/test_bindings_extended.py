"""``binding-extended``: a compute port bound on a second host (inactive),
that binding activated (the port moves), the former one deleted, as the
compute service does for a live migration; with upstream's policy (read:
admin or service; write: service) and refusals."""
from __future__ import annotations

import uuid
from typing import Any, Iterator

import pytest

from neutrino.plugins.ml2.agents_db import AGENT_TYPE_OVS
from tests.conftest import Client, Server
from tests.ml2.binding_helpers import host, network, port, report_agent, start_server

OVS = {"bridge_mappings": {"physnet1": "br-eth1"}, "tunnel_types": ["vxlan"]}


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = start_server(tmp_path_factory.mktemp("bindings"), "openvswitch")
    yield server
    server.stop()


@pytest.fixture
def admin(srv: Server) -> Client:
    return Client(srv.url, uuid.uuid4().hex, "admin")


@pytest.fixture
def nova(srv: Server) -> Client:
    """The compute service's user: the ``service`` role."""
    return Client(srv.url, uuid.uuid4().hex, "service,admin")


def live_host(srv: Server) -> str:
    name = host()
    report_agent(srv, AGENT_TYPE_OVS, name, OVS)
    return name


def compute_port(admin: Client, srv: Server) -> tuple[dict[str, Any], str]:
    source = live_host(srv)
    p = port(admin, network(admin), device_owner="compute:nova", device_id=str(uuid.uuid4()),
             **{"binding:host_id": source})
    assert p["binding:vif_type"] == "ovs"
    return p, source


def bindings(client: Client, port_id: str) -> dict[str, dict[str, Any]]:
    status, body = client.get(f"/v2.0/ports/{port_id}/bindings")
    assert status == 200, body
    return {b["host"]: b for b in body["bindings"]}


def test_the_extension_is_listed(admin: Client) -> None:
    status, body = admin.get("/v2.0/extensions/binding-extended")
    assert status == 200 and body["extension"]["name"] == "Port Bindings Extended"


def test_a_port_lists_its_active_binding(srv: Server, admin: Client) -> None:
    p, source = compute_port(admin, srv)
    found = bindings(admin, p["id"])
    assert list(found) == [source]
    assert found[source]["status"] == "ACTIVE" and found[source]["vif_type"] == "ovs"
    assert found[source]["vnic_type"] == "normal" and found[source]["profile"] == {}
    assert found[source]["vif_details"]["bound_drivers"] == {"0": "openvswitch"}


def test_a_binding_on_a_second_host_is_inactive_and_leaves_the_port_where_it_is(
        srv: Server, admin: Client, nova: Client) -> None:
    p, source = compute_port(admin, srv)
    dest = live_host(srv)
    status, body = nova.post(f"/v2.0/ports/{p['id']}/bindings",
                             {"binding": {"host": dest, "profile": {"migrating": True}}})
    assert status == 201, body
    made = body["binding"]
    assert made["host"] == dest and made["status"] == "INACTIVE"
    assert made["vif_type"] == "ovs" and made["profile"] == {"migrating": True}
    found = bindings(nova, p["id"])
    assert {h: b["status"] for h, b in found.items()} == {source: "ACTIVE", dest: "INACTIVE"}
    shown = admin.get(f"/v2.0/ports/{p['id']}")[1]["port"]
    assert shown["binding:host_id"] == source and shown["binding:vif_type"] == "ovs"
    status, one = admin.get(f"/v2.0/ports/{p['id']}/bindings/{dest}")
    assert status == 200 and one["binding"] == made
    status, listed = admin.get(f"/v2.0/ports/{p['id']}/bindings?status=INACTIVE&fields=host")
    assert status == 200 and listed["bindings"] == [{"host": dest}]


def test_activation_moves_the_port_and_keeps_the_former_binding_inactive(
        srv: Server, admin: Client, nova: Client) -> None:
    p, source = compute_port(admin, srv)
    dest = live_host(srv)
    assert nova.post(f"/v2.0/ports/{p['id']}/bindings", {"binding": {"host": dest}})[0] == 201
    status, body = nova.put(f"/v2.0/ports/{p['id']}/bindings/{dest}/activate")
    assert status == 200, body
    assert body["binding"]["host"] == dest and body["binding"]["status"] == "ACTIVE"
    shown = admin.get(f"/v2.0/ports/{p['id']}")[1]["port"]
    assert shown["binding:host_id"] == dest and shown["binding:vif_type"] == "ovs"
    assert shown["status"] == "DOWN"  # until the destination's agent wires it
    assert shown["revision_number"] > p["revision_number"]
    found = bindings(nova, p["id"])
    assert found[dest]["status"] == "ACTIVE"
    assert found[source]["status"] == "INACTIVE" and found[source]["vif_type"] == "unbound"
    # again: already active; the former host's binding can be deleted
    status, body = nova.put(f"/v2.0/ports/{p['id']}/bindings/{dest}/activate")
    assert status == 409 and body["NeutronError"]["type"] == "PortBindingAlreadyActive"
    assert nova.delete(f"/v2.0/ports/{p['id']}/bindings/{source}")[0] == 204
    assert list(bindings(nova, p["id"])) == [dest]


def test_activating_a_host_without_a_binding_is_not_found(
        srv: Server, admin: Client, nova: Client) -> None:
    p, _ = compute_port(admin, srv)
    status, body = nova.put(f"/v2.0/ports/{p['id']}/bindings/nowhere/activate")
    assert status == 404 and body["NeutronError"]["type"] == "PortBindingNotFound"
    status, body = nova.delete(f"/v2.0/ports/{p['id']}/bindings/nowhere")
    assert status == 404 and body["NeutronError"]["type"] == "PortBindingNotFound"


def test_a_second_binding_on_the_same_host_conflicts(
        srv: Server, admin: Client, nova: Client) -> None:
    p, source = compute_port(admin, srv)
    status, body = nova.post(f"/v2.0/ports/{p['id']}/bindings", {"binding": {"host": source}})
    assert status == 409 and body["NeutronError"]["type"] == "PortBindingAlreadyExists"


def test_a_host_no_driver_can_bind_leaves_nothing_behind(
        srv: Server, admin: Client, nova: Client) -> None:
    p, source = compute_port(admin, srv)
    status, body = nova.post(f"/v2.0/ports/{p['id']}/bindings",
                             {"binding": {"host": "no-agent-here"}})
    assert status == 409 and body["NeutronError"]["type"] == "PortBindingError"
    assert list(bindings(nova, p["id"])) == [source]


def test_only_compute_ports_have_several_bindings(srv: Server, admin: Client,
                                                  nova: Client) -> None:
    p = port(admin, network(admin))
    status, body = nova.get(f"/v2.0/ports/{p['id']}/bindings")
    assert status == 400 and "Operation only valid on compute" in body["NeutronError"]["message"]
    status, body = nova.get(f"/v2.0/ports/{uuid.uuid4()}/bindings")
    assert status == 404 and body["NeutronError"]["type"] == "PortNotFound"


def test_bad_bodies_are_refused(srv: Server, admin: Client, nova: Client) -> None:
    p, _ = compute_port(admin, srv)
    path = f"/v2.0/ports/{p['id']}/bindings"
    for body in ({"binding": {}}, {"binding": {"host": "h", "vnic_type": "bogus"}},
                 {"binding": {"host": "h", "vif_type": "ovs"}}, {"nothing": 1}):
        status, answer = nova.post(path, body)
        assert status == 400, (body, answer)
        assert "NeutronError" in answer


def test_policy_reading_is_admin_or_service_writing_is_service(
        srv: Server, admin: Client) -> None:
    p, source = compute_port(admin, srv)
    member = Client(srv.url, p["project_id"], "member,reader")
    only_admin = Client(srv.url, uuid.uuid4().hex, "admin")
    path = f"/v2.0/ports/{p['id']}/bindings"
    assert member.get(path)[0] == 403
    assert only_admin.get(path)[0] == 200
    dest = live_host(srv)
    assert only_admin.post(path, {"binding": {"host": dest}})[0] == 403
    assert member.post(path, {"binding": {"host": dest}})[0] == 403
    assert only_admin.put(f"{path}/{source}/activate")[0] == 403
    assert only_admin.delete(f"{path}/{source}")[0] == 403
    assert list(bindings(admin, p["id"])) == [source]


def test_a_port_moved_by_a_plain_update_drops_an_inactive_binding_for_that_host(
        srv: Server, admin: Client, nova: Client) -> None:
    p, _ = compute_port(admin, srv)
    dest = live_host(srv)
    assert nova.post(f"/v2.0/ports/{p['id']}/bindings", {"binding": {"host": dest}})[0] == 201
    status, body = admin.put(f"/v2.0/ports/{p['id']}", {"port": {"binding:host_id": dest}})
    assert status == 200, body
    found = bindings(admin, p["id"])
    assert list(found) == [dest] and found[dest]["status"] == "ACTIVE"


def test_deleting_the_port_deletes_its_bindings(srv: Server, admin: Client,
                                                nova: Client) -> None:
    p, _ = compute_port(admin, srv)
    dest = live_host(srv)
    assert nova.post(f"/v2.0/ports/{p['id']}/bindings", {"binding": {"host": dest}})[0] == 201
    assert admin.delete(f"/v2.0/ports/{p['id']}")[0] == 204
    assert nova.get(f"/v2.0/ports/{p['id']}/bindings")[0] == 404

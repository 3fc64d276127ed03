"""``local_ip``: /v2.0/local_ips and their port associations as upstream's API
and default policy answer them (the owner's, hidden from other projects,
an admin's over all)."""
from __future__ import annotations

from typing import Any

from tests.conftest import Client

LIPS = "/v2.0/local_ips"


def _project(client: Client) -> str:
    return str(client.session.headers["X-Project-Id"])


def _error(body: Any) -> tuple[str, str]:
    return body["NeutronError"]["type"], body["NeutronError"]["message"]


def _network(client: Client, cidr: str = "10.70.0.0/24") -> str:
    status, net = client.post("/v2.0/networks", {"network": {"name": "n"}})
    assert status == 201, net
    status, sub = client.post("/v2.0/subnets", {"subnet": {
        "network_id": net["network"]["id"], "cidr": cidr, "ip_version": 4}})
    assert status == 201, sub
    return str(net["network"]["id"])


def _port(client: Client, network_id: str, **attrs: Any) -> dict[str, Any]:
    status, body = client.post("/v2.0/ports", {"port": {"network_id": network_id, **attrs}})
    assert status == 201, body
    return dict(body["port"])


def _lip(client: Client, **attrs: Any) -> dict[str, Any]:
    status, body = client.post(LIPS, {"local_ip": attrs})
    assert status == 201, body
    return dict(body["local_ip"])


def _assocs(lip_id: str) -> str:
    return f"{LIPS}/{lip_id}/port_associations"


def test_a_local_ip_on_a_network_gets_a_port_of_its_own_gone_with_it(owner: Client) -> None:
    net = _network(owner)
    lip = _lip(owner, network_id=net, name="l1", description="d")
    assert {k: lip[k] for k in ("name", "description", "network_id", "ip_mode",
                                "revision_number", "project_id", "tenant_id")} == {
        "name": "l1", "description": "d", "network_id": net, "ip_mode": "translate",
        "revision_number": 0, "project_id": _project(owner), "tenant_id": _project(owner)}
    assert "tags" not in lip and lip["created_at"] and lip["updated_at"]
    status, port = owner.get(f"/v2.0/ports/{lip['local_port_id']}")
    assert status == 200, port
    port = port["port"]
    assert (port["device_owner"], port["device_id"], port["project_id"],
            port["port_security_enabled"], port["status"]) == (
        "network:local_ip", lip["id"], _project(owner), False, "N/A")
    assert port["fixed_ips"][0]["ip_address"] == lip["local_ip_address"]
    assert owner.get(f"{LIPS}/{lip['id']}")[1]["local_ip"] == lip
    assert [x["id"] for x in owner.get(LIPS)[1]["local_ips"]] == [lip["id"]]
    status, body = owner.put(f"{LIPS}/{lip['id']}", {"local_ip": {"name": "l2"}})
    assert status == 200 and (body["local_ip"]["name"], body["local_ip"]["revision_number"]) \
        == ("l2", 1), body
    status, body = owner.put(f"{LIPS}/{lip['id']}", {"local_ip": {"ip_mode": "passthrough"}})
    assert status == 400 and _error(body) == (
        "HTTPBadRequest", "Cannot update read-only attribute ip_mode")
    assert owner.delete(f"{LIPS}/{lip['id']}")[0] == 204
    assert owner.get(f"/v2.0/ports/{lip['local_port_id']}")[0] == 404
    status, body = owner.get(f"{LIPS}/{lip['id']}")
    assert status == 404 and _error(body) == (
        "LocalIPNotFound", f"Local IP {lip['id']} could not be found.")


def test_a_local_ip_takes_a_given_address_mode_or_port(owner: Client) -> None:
    net = _network(owner)
    lip = _lip(owner, network_id=net, local_ip_address="10.70.0.200", ip_mode="passthrough")
    assert (lip["local_ip_address"], lip["ip_mode"]) == ("10.70.0.200", "passthrough")
    port = _port(owner, net, fixed_ips=[{"ip_address": "10.70.0.50"},
                                        {"ip_address": "10.70.0.51"}])
    lip2 = _lip(owner, local_port_id=port["id"], local_ip_address="10.70.0.51")
    assert (lip2["local_port_id"], lip2["network_id"], lip2["local_ip_address"]) == (
        port["id"], net, "10.70.0.51")
    # the given port stays when its local IP goes
    assert owner.delete(f"{LIPS}/{lip2['id']}")[0] == 204
    assert owner.get(f"/v2.0/ports/{port['id']}")[0] == 200


def test_a_local_ip_without_port_or_usable_address_is_refused(owner: Client) -> None:
    net = _network(owner)
    status, body = owner.post(LIPS, {"local_ip": {}})
    assert status == 400 and _error(body) == (
        "LocalIPPortOrNetworkRequired",
        "Either Port ID or Network ID must be specified for Local IP create.")
    two = _port(owner, net, fixed_ips=[{"ip_address": "10.70.0.50"},
                                       {"ip_address": "10.70.0.51"}])
    status, body = owner.post(LIPS, {"local_ip": {"local_port_id": two["id"]}})
    assert status == 400 and _error(body) == (
        "LocalIPNoRequestedIP", f"Specified Port {two['id']} has several IPs, should specify "
        "exact IP address to use for Local IP.")
    status, body = owner.post(LIPS, {"local_ip": {"local_port_id": two["id"],
                                                  "local_ip_address": "10.70.0.52"}})
    assert status == 400 and _error(body) == (
        "LocalIPRequestedIPNotFound",
        f"Specified Port {two['id']} does not have requested IP address: 10.70.0.52.")
    none = _port(owner, net, fixed_ips=[])
    status, body = owner.post(LIPS, {"local_ip": {"local_port_id": none["id"]}})
    assert status == 400 and _error(body) == (
        "LocalIPNoIP", f"Specified Port {none['id']} has no fixed IPs configured.")
    status, body = owner.post(LIPS, {"local_ip": {"local_port_id": net}})
    assert status == 400 and _error(body) == (
        "BadRequest", f"Bad local_ip request: Port {net} not found.")
    status, body = owner.post(LIPS, {"local_ip": {"network_id": net,
                                                  "local_ip_address": "10.99.0.5"}})
    assert status == 400 and _error(body)[0] == "InvalidIpForNetwork", body
    status, body = owner.post(LIPS, {"local_ip": {"network_id": net, "ip_mode": "x"}})
    assert status == 400 and _error(body) == (
        "HTTPBadRequest", "Invalid input for ip_mode. Reason: x is not in valid_values.")
    status, v6 = owner.post("/v2.0/networks", {"network": {"name": "v6"}})
    owner.post("/v2.0/subnets", {"subnet": {"network_id": v6["network"]["id"],
                                            "cidr": "fd00:70::/64", "ip_version": 6}})
    status, body = owner.post(LIPS, {"local_ip": {"network_id": v6["network"]["id"]}})
    assert status == 400 and _error(body) == (
        "BadRequest", f"Bad local_ip request: Network {v6['network']['id']} does not "
        "contain any IPv4 subnet.")
    # nothing half-made: no local IP, no stray port
    assert owner.get(LIPS)[1]["local_ips"] == []
    assert [p for p in owner.get("/v2.0/ports")[1]["ports"]
            if p["device_owner"] == "network:local_ip"] == []


def test_a_port_association_is_made_listed_shown_and_deleted(owner: Client) -> None:
    net = _network(owner)
    lip = _lip(owner, network_id=net)
    port = _port(owner, net)
    fixed = port["fixed_ips"][0]["ip_address"]
    status, body = owner.post(_assocs(lip["id"]), {"port_association": {
        "fixed_port_id": port["id"]}})
    assert status == 201, body
    expected = {"local_ip_id": lip["id"], "fixed_port_id": port["id"], "fixed_ip": fixed,
                "local_ip_address": lip["local_ip_address"], "host": ""}
    assert body["port_association"] == expected
    assert owner.get(_assocs(lip["id"]))[1]["port_associations"] == [expected]
    assert owner.get(f"{_assocs(lip['id'])}/{port['id']}")[1]["port_association"] == expected
    status, body = owner.post(_assocs(lip["id"]), {"port_association": {
        "fixed_port_id": port["id"]}})
    assert status == 409 and _error(body)[0] == "LocalIPAssociationExists", body
    # a port associated with two local IPs: each association under its own
    lip2 = _lip(owner, network_id=net)
    assert owner.post(_assocs(lip2["id"]), {"port_association": {
        "fixed_port_id": port["id"]}})[0] == 201
    status, body = owner.delete(f"{LIPS}/{lip['id']}")
    assert status == 409 and _error(body) == (
        "LocalIPInUse", f"Local IP {lip['id']} is still associated with one or more ports.")
    assert owner.delete(f"{_assocs(lip['id'])}/{port['id']}")[0] == 204
    status, body = owner.get(f"{_assocs(lip['id'])}/{port['id']}")
    assert status == 404 and _error(body) == (
        "LocalIPAssociationNotFound", f"Local IP {lip['id']} association with port "
        f"{port['id']} could not be found.")
    assert owner.get(f"{_assocs(lip2['id'])}/{port['id']}")[0] == 200
    assert owner.delete(f"{LIPS}/{lip['id']}")[0] == 204
    # associations go with their port
    assert owner.delete(f"/v2.0/ports/{port['id']}")[0] == 204
    assert owner.get(_assocs(lip2["id"]))[1]["port_associations"] == []


def test_a_port_association_refuses_a_port_without_one_usable_ip(owner: Client) -> None:
    net = _network(owner)
    lip = _lip(owner, network_id=net)
    none = _port(owner, net, fixed_ips=[])
    status, body = owner.post(_assocs(lip["id"]), {"port_association": {
        "fixed_port_id": none["id"]}})
    assert status == 400 and _error(body) == (
        "LocalIPNoIP", f"Specified Port {none['id']} has no fixed IPs configured.")
    two = _port(owner, net, fixed_ips=[{"ip_address": "10.70.0.50"},
                                       {"ip_address": "10.70.0.51"}])
    status, body = owner.post(_assocs(lip["id"]), {"port_association": {
        "fixed_port_id": two["id"]}})
    assert status == 400 and _error(body)[0] == "LocalIPNoRequestedIP"
    status, body = owner.post(_assocs(lip["id"]), {"port_association": {
        "fixed_port_id": two["id"], "fixed_ip": "10.70.0.52"}})
    assert status == 400 and _error(body)[0] == "LocalIPRequestedIPNotFound"
    status, body = owner.post(_assocs(lip["id"]), {"port_association": {
        "fixed_port_id": two["id"], "fixed_ip": "10.70.0.51"}})
    assert status == 201 and body["port_association"]["fixed_ip"] == "10.70.0.51"
    status, body = owner.delete(f"{_assocs(lip['id'])}/{none['id']}")
    assert status == 404 and _error(body)[0] == "LocalIPAssociationNotFound"


def test_the_port_of_a_local_ip_cannot_be_deleted_through_the_ports_api(
        owner: Client) -> None:
    net = _network(owner)
    lip = _lip(owner, network_id=net)
    status, body = owner.delete(f"/v2.0/ports/{lip['local_port_id']}")
    assert status == 409 and _error(body) == (
        "ServicePortInUse", f"Port {lip['local_port_id']} cannot be deleted directly via "
        "the port API: still referenced by Local IPs.")


def test_another_project_neither_sees_nor_changes_a_local_ip(owner: Client,
                                                              other: Client) -> None:
    net = _network(owner)
    lip = _lip(owner, network_id=net)
    port = _port(owner, net)
    assert owner.post(_assocs(lip["id"]), {"port_association": {
        "fixed_port_id": port["id"]}})[0] == 201
    assert other.get(LIPS)[1]["local_ips"] == []
    for status, body in (other.get(f"{LIPS}/{lip['id']}"),
                         other.put(f"{LIPS}/{lip['id']}", {"local_ip": {"name": "x"}}),
                         other.delete(f"{LIPS}/{lip['id']}")):
        assert status == 404 and _error(body)[0] == "LocalIPNotFound", body
    assert other.get(f"{_assocs(lip['id'])}/{port['id']}")[0] == 404
    # listing another's (or a missing) local IP's associations: none, as upstream
    assert other.get(_assocs(lip["id"])) == (200, {"port_associations": []})
    assert owner.get(_assocs("00000000-0000-0000-0000-000000000000")) == (
        200, {"port_associations": []})
    status, body = owner.post(_assocs("00000000-0000-0000-0000-000000000000"), {
        "port_association": {"fixed_port_id": port["id"]}})
    assert status == 404 and _error(body)[0] == "LocalIPNotFound", body
    status, body = other.post(_assocs(lip["id"]), {"port_association": {
        "fixed_port_id": port["id"]}})
    assert status == 403 and _error(body)[0] == "PolicyNotAuthorized", body
    assert other.delete(f"{_assocs(lip['id'])}/{port['id']}")[0] == 404
    # nor make one on its network, nor on its port
    status, body = other.post(LIPS, {"local_ip": {"network_id": net}})
    assert status == 404 and _error(body) == (
        "NetworkNotFound", f"Network {net} could not be found."), body
    status, body = other.post(LIPS, {"local_ip": {"local_port_id": port["id"]}})
    assert status == 400 and _error(body) == (
        "BadRequest", f"Bad local_ip request: Port {port['id']} not found.")
    # another project's port cannot be associated with one's own local IP
    mine = _lip(other, network_id=_network(other))
    status, body = other.post(_assocs(mine["id"]), {"port_association": {
        "fixed_port_id": port["id"]}})
    assert status == 400 and _error(body) == (
        "BadRequest", f"Bad local_ip_port_association request: Port {port['id']} not found.")


def test_an_admin_sees_and_handles_every_projects_local_ips(owner: Client,
                                                            admin: Client) -> None:
    net = _network(owner)
    lip = _lip(owner, network_id=net)
    port = _port(owner, net)
    assert lip["id"] in [x["id"] for x in admin.get(LIPS)[1]["local_ips"]]
    assert admin.get(f"{LIPS}/{lip['id']}")[0] == 200
    status, body = admin.post(_assocs(lip["id"]), {"port_association": {
        "fixed_port_id": port["id"]}})
    assert status == 201, body
    assert admin.delete(f"{_assocs(lip['id'])}/{port['id']}")[0] == 204
    assert admin.delete(f"{LIPS}/{lip['id']}")[0] == 204
    # an admin makes one for another project
    made = _lip(admin, network_id=net, project_id=_project(owner))
    assert made["project_id"] == _project(owner)
    assert owner.get(f"{LIPS}/{made['id']}")[0] == 200


def test_port_associations_are_filtered_sorted_and_paged(owner: Client) -> None:
    net = _network(owner)
    lip = _lip(owner, network_id=net)
    ports = sorted((_port(owner, net) for _ in range(3)), key=lambda p: p["id"])
    for port in ports:
        assert owner.post(_assocs(lip["id"]), {"port_association": {
            "fixed_port_id": port["id"]}})[0] == 201
    ids = [p["id"] for p in ports]
    listed = owner.get(f"{_assocs(lip['id'])}?sort_key=fixed_port_id&sort_dir=desc")[1]
    assert [a["fixed_port_id"] for a in listed["port_associations"]] == ids[::-1]
    page = owner.get(f"{_assocs(lip['id'])}?sort_key=fixed_port_id&sort_dir=asc&limit=2")[1]
    assert [a["fixed_port_id"] for a in page["port_associations"]] == ids[:2]
    rest = owner.get(f"{_assocs(lip['id'])}?sort_key=fixed_port_id&sort_dir=asc&limit=2"
                     f"&marker={ids[1]}")[1]
    assert [a["fixed_port_id"] for a in rest["port_associations"]] == ids[2:]
    fixed = ports[0]["fixed_ips"][0]["ip_address"]
    assert [a["fixed_port_id"] for a in owner.get(
        f"{_assocs(lip['id'])}?fixed_ip={fixed}")[1]["port_associations"]] == ids[:1]
    assert len(owner.get(f"{_assocs(lip['id'])}?host=")[1]["port_associations"]) == 3
    shown = owner.get(f"{_assocs(lip['id'])}?fields=fixed_port_id")[1]["port_associations"]
    assert shown == [{"fixed_port_id": i} for i in ids]
    assert [x["id"] for x in owner.get(f"{LIPS}?local_ip_address="
                                       f"{lip['local_ip_address']}")[1]["local_ips"]] == [
        lip["id"]]


def test_a_reader_of_the_project_sees_local_ips_but_changes_none(owner: Client) -> None:
    net = _network(owner)
    lip = _lip(owner, network_id=net)
    port = _port(owner, net)
    assert owner.post(_assocs(lip["id"]), {"port_association": {
        "fixed_port_id": port["id"]}})[0] == 201
    reader = Client(owner.url, project=_project(owner), roles="reader")
    assert reader.get(f"{LIPS}/{lip['id']}")[0] == 200
    assert len(reader.get(_assocs(lip["id"]))[1]["port_associations"]) == 1
    for status, body in (reader.post(LIPS, {"local_ip": {"network_id": net}}),
                         reader.put(f"{LIPS}/{lip['id']}", {"local_ip": {"name": "x"}}),
                         reader.delete(f"{LIPS}/{lip['id']}"),
                         reader.delete(f"{_assocs(lip['id'])}/{port['id']}")):
        assert status == 403 and _error(body)[0] == "PolicyNotAuthorized", body

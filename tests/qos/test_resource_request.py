"""``port-resource-request`` (request groups format): what a port asks of
Placement, from the minimum bandwidth and packet rate rules of its policy.

On the session server (openvswitch, which supports both minimum rules).
"""
from __future__ import annotations

import uuid

from tests.conftest import Client, Server
from tests.qos._qos import manager, policy, rule


def _provider_net(admin: Client, project: str) -> dict:
    """A flat network on a physical network of its own (one per flat network)."""
    physnet = f"phys-{uuid.uuid4().hex[:8]}"
    status, body = admin.post("/v2.0/networks", {"network": {
        "name": "rr", "project_id": project, "provider:network_type": "flat",
        "provider:physical_network": physnet}})
    assert status == 201, body
    return body["network"]


def _project(client: Client) -> str:
    return str(client.session.headers["X-Project-Id"])


def _port(client: Client, net: dict, **attrs: object) -> dict:
    status, body = client.post("/v2.0/ports", {"port": {"network_id": net["id"], **attrs}})
    assert status == 201, body
    return body["port"]


def _minimum_policy(owner: Client, kpps: int | None = None) -> tuple[str, dict[str, str]]:
    pid = policy(owner, shared=True)["id"]
    ids = {"egress": rule(owner, pid, "minimum_bandwidth", min_kbps=1000,
                          direction="egress")["id"],
           "ingress": rule(owner, pid, "minimum_bandwidth", min_kbps=2000,
                           direction="ingress")["id"]}
    if kpps:
        ids["pps"] = rule(owner, pid, "minimum_packet_rate", min_kpps=kpps,
                          direction="any")["id"]
    return pid, ids


def _physnet_trait(net: dict) -> str:
    return "CUSTOM_PHYSNET_" + net["provider:physical_network"].upper().replace("-", "_")


def _group_id(port_id: str, rule_ids: list[str]) -> str:
    return str(uuid.uuid5(uuid.UUID(port_id), ":".join(sorted(rule_ids))))


def test_extensions_are_listed(server: Server, admin: Client) -> None:
    aliases = {e["alias"] for e in admin.get("/v2.0/extensions")[1]["extensions"]}
    assert {"port-resource-request", "port-resource-request-groups",
            "qos-bw-minimum-ingress", "qos-pps-minimum", "qos-pps-minimum-rule-alias"} <= aliases


def test_minimum_rules_become_request_groups_shown_to_admins_only(
        server: Server, admin: Client) -> None:
    owner = manager(server.url)
    net = _provider_net(admin, _project(owner))
    pid, ids = _minimum_policy(owner, kpps=500)
    port = _port(owner, net, qos_policy_id=pid)
    assert "resource_request" not in port  # the owner does not see it
    shown = admin.get(f"/v2.0/ports/{port['id']}")[1]["port"]
    bw_group = _group_id(port["id"], [ids["egress"], ids["ingress"]])
    pps_group = _group_id(port["id"], [ids["pps"]])
    assert shown["resource_request"] == {
        "request_groups": [
            {"id": bw_group,
             "required": [_physnet_trait(net), "CUSTOM_VNIC_TYPE_NORMAL"],
             "resources": {"NET_BW_EGR_KILOBIT_PER_SEC": 1000,
                           "NET_BW_IGR_KILOBIT_PER_SEC": 2000}},
            {"id": pps_group, "required": ["CUSTOM_VNIC_TYPE_NORMAL"],
             "resources": {"NET_PACKET_RATE_KILOPACKET_PER_SEC": 500}}],
        "same_subtree": [bw_group, pps_group]}
    # Listed, the same; other projects never see the port, the owner not the attribute.
    listed = admin.get(f"/v2.0/ports?id={port['id']}")[1]["ports"]
    assert listed[0]["resource_request"] == shown["resource_request"]
    assert "resource_request" not in owner.get(f"/v2.0/ports/{port['id']}")[1]["port"]
    other = Client(server.url, uuid.uuid4().hex, "member")
    assert other.get(f"/v2.0/ports/{port['id']}")[0] == 404
    # Without the policy, nothing is requested.
    assert owner.put(f"/v2.0/ports/{port['id']}", {"port": {"qos_policy_id": None}})[0] == 200
    assert admin.get(f"/v2.0/ports/{port['id']}")[1]["port"]["resource_request"] is None


def test_the_vnic_type_names_the_trait(server: Server, admin: Client) -> None:
    owner = manager(server.url)
    net = _provider_net(admin, _project(owner))
    pid, _ = _minimum_policy(owner)
    port = _port(admin, net, qos_policy_id=pid, **{"binding:vnic_type": "direct"})
    groups = port["resource_request"]["request_groups"]
    assert [g["required"] for g in groups] == [
        [_physnet_trait(net), "CUSTOM_VNIC_TYPE_DIRECT"]]


def test_a_port_without_minimum_rules_requests_nothing(server: Server, admin: Client) -> None:
    owner = manager(server.url)
    net = _provider_net(admin, _project(owner))
    pid = policy(owner, shared=True)["id"]
    rule(owner, pid, "bandwidth_limit", max_kbps=1000, max_burst_kbps=800)
    with_limit = _port(owner, net, qos_policy_id=pid)
    without = _port(owner, net)
    for port in (with_limit, without):
        shown = admin.get(f"/v2.0/ports/{port['id']}")[1]["port"]
        assert "resource_request" in shown and shown["resource_request"] is None


def test_a_port_inherits_its_networks_minimum_rules(server: Server, admin: Client) -> None:
    owner = manager(server.url)
    net = _provider_net(admin, _project(owner))
    pid, ids = _minimum_policy(owner)
    assert admin.put(f"/v2.0/networks/{net['id']}",
                     {"network": {"qos_policy_id": pid}})[0] == 200
    port = _port(owner, net)
    groups = admin.get(f"/v2.0/ports/{port['id']}")[1]["port"]["resource_request"]
    assert groups["request_groups"][0]["id"] == _group_id(
        port["id"], [ids["egress"], ids["ingress"]])
    assert groups["request_groups"][0]["resources"] == {
        "NET_BW_EGR_KILOBIT_PER_SEC": 1000, "NET_BW_IGR_KILOBIT_PER_SEC": 2000}


def test_a_network_without_physical_network_asks_for_a_tunnel_provider(
        server: Server, admin: Client) -> None:
    owner = manager(server.url)
    status, body = owner.post("/v2.0/networks", {"network": {"name": "rr-tenant"}})
    assert status == 201, body
    pid, _ = _minimum_policy(owner)
    port = _port(admin, body["network"], qos_policy_id=pid)
    assert port["resource_request"]["request_groups"][0]["required"] == [
        "CUSTOM_NETWORK_TUNNEL_PROVIDER", "CUSTOM_VNIC_TYPE_NORMAL"]

"""What the API refuses, or lets through, about instances' Placement
allocations without reaching Placement (the session server has none; the
changes themselves are tested against a real one in
``tests/placement/test_qos_allocation.py``).

Upstream's answers: a minimum rule of a policy an instance's port uses
cannot be created, changed or deleted (501); a port's policy change that
would turn a direction-less minimum packet rate into a directed one, or
the reverse, is not supported (501); a port without an allocation in its
profile changes policy freely (only the data plane enforces it).
"""
from __future__ import annotations

import uuid
from typing import Any

from tests.conftest import Client, Server
from tests.qos._qos import RULES, error, manager, policy, rule

REFUSED = "Cannot update QoS policies/rules backed by resources tracked in Placement"


def _service(server: Server) -> Client:
    """The compute service: it alone may write ``binding:profile``."""
    return Client(server.url, uuid.uuid4().hex, "admin,service")


def _network(client: Client, **attrs: Any) -> str:
    status, body = client.post("/v2.0/networks", {"network": {"name": "alloc", **attrs}})
    assert status == 201, body
    return str(body["network"]["id"])


def _port(client: Client, net: str, owner: str = "compute:nova", **attrs: Any) -> dict[str, Any]:
    status, body = client.post("/v2.0/ports", {"port": {
        "network_id": net, "device_owner": owner, "device_id": str(uuid.uuid4()), **attrs}})
    assert status == 201, body
    return dict(body["port"])


def _group(port_id: str, rule_ids: list[str]) -> str:
    return str(uuid.uuid5(uuid.UUID(port_id), ":".join(sorted(rule_ids))))


def _refused(result: tuple[int, Any]) -> None:
    assert error(result, 501, "NotImplementedError") == REFUSED


def test_minimum_rules_of_a_policy_an_instances_port_uses_cannot_change(
        server: Server, admin: Client) -> None:
    owner = manager(server.url)
    pid = policy(owner, shared=True)["id"]
    bw = rule(owner, pid, "minimum_bandwidth", min_kbps=1000, direction="egress")
    net = _network(owner)
    _port(owner, net, qos_policy_id=pid)

    for client in (owner, admin):
        _refused(client.post(RULES.format(pid, "minimum_bandwidth"), {
            "minimum_bandwidth_rule": {"min_kbps": 10, "direction": "ingress"}}))
        _refused(client.post(RULES.format(pid, "minimum_packet_rate"), {
            "minimum_packet_rate_rule": {"min_kpps": 10, "direction": "any"}}))
        _refused(client.put(f"{RULES.format(pid, 'minimum_bandwidth')}/{bw['id']}", {
            "minimum_bandwidth_rule": {"min_kbps": 2000}}))
        _refused(client.put(f"/v2.0/qos/alias_minimum_bandwidth_rules/{bw['id']}", {
            "alias_minimum_bandwidth_rule": {"min_kbps": 2000}}))
        _refused(client.delete(f"{RULES.format(pid, 'minimum_bandwidth')}/{bw['id']}"))
    # nothing changed; other rule types stay free
    shown = owner.get(f"{RULES.format(pid, 'minimum_bandwidth')}")[1]["minimum_bandwidth_rules"]
    assert [(r["id"], r["min_kbps"]) for r in shown] == [(bw["id"], 1000)]
    rule(owner, pid, "bandwidth_limit", max_kbps=5000)
    # another project does not even see the policy's rules
    other = manager(server.url)
    error(other.delete(f"{RULES.format(pid, 'minimum_bandwidth')}/{bw['id']}"), 404,
          "QosRuleNotFound")


def test_a_networks_policy_counts_for_its_instances_ports_without_their_own(
        server: Server) -> None:
    owner = manager(server.url)
    pid = policy(owner)["id"]
    bw = rule(owner, pid, "minimum_bandwidth", min_kbps=1000, direction="egress")
    net = _network(owner, qos_policy_id=pid)
    path = f"{RULES.format(pid, 'minimum_bandwidth')}/{bw['id']}"
    # ports of the network itself do not count, nor ports with a policy of their own
    _port(owner, net, owner="network:dhcp")
    _port(owner, net, qos_policy_id=policy(owner)["id"])
    status, body = owner.put(path, {"minimum_bandwidth_rule": {"min_kbps": 1500}})
    assert status == 200, body

    _port(owner, net)
    _refused(owner.put(path, {"minimum_bandwidth_rule": {"min_kbps": 2000}}))


def test_ports_not_of_instances_leave_minimum_rules_free(server: Server) -> None:
    owner = manager(server.url)
    pid = policy(owner)["id"]
    bw = rule(owner, pid, "minimum_bandwidth", min_kbps=1000, direction="egress")
    _port(owner, _network(owner), owner="", qos_policy_id=pid)
    path = f"{RULES.format(pid, 'minimum_bandwidth')}/{bw['id']}"
    status, body = owner.put(path, {"minimum_bandwidth_rule": {"min_kbps": 2000}})
    assert status == 200, body
    assert owner.delete(path)[0] == 204


def test_an_instances_port_without_an_allocation_changes_policy_freely(
        server: Server) -> None:
    owner = manager(server.url)
    old = policy(owner)["id"]
    rule(owner, old, "minimum_bandwidth", min_kbps=1000, direction="egress")
    new = policy(owner)["id"]
    rule(owner, new, "minimum_bandwidth", min_kbps=5000, direction="egress")
    port = _port(owner, _network(owner), qos_policy_id=old)
    status, body = owner.put(f"/v2.0/ports/{port['id']}", {"port": {"qos_policy_id": new}})
    assert status == 200, body
    assert body["port"]["qos_policy_id"] == new


def test_direction_less_packet_rate_cannot_become_directed(server: Server) -> None:
    owner, service = manager(server.url), _service(server)
    old = policy(owner, shared=True)["id"]
    pps = rule(owner, old, "minimum_packet_rate", min_kpps=100, direction="any")
    new = policy(owner, shared=True)["id"]
    rule(owner, new, "minimum_packet_rate", min_kpps=100, direction="egress")
    port = _port(service, _network(service), qos_policy_id=old)
    allocation = {_group(port["id"], [pps["id"]]): str(uuid.uuid4())}
    status, body = service.put(f"/v2.0/ports/{port['id']}", {"port": {
        "binding:profile": {"allocation": allocation}}})
    assert status == 200, body

    error(service.put(f"/v2.0/ports/{port['id']}", {"port": {"qos_policy_id": new}}), 501,
          "NotImplementedError")
    shown = service.get(f"/v2.0/ports/{port['id']}")[1]["port"]
    assert shown["qos_policy_id"] == old
    assert shown["binding:profile"] == {"allocation": allocation}


def test_an_allocation_change_without_placement_is_unavailable_and_changes_nothing(
        server: Server) -> None:
    owner, service = manager(server.url), _service(server)
    old = policy(owner, shared=True)["id"]
    bw = rule(owner, old, "minimum_bandwidth", min_kbps=1000, direction="egress")
    new = policy(owner, shared=True)["id"]
    rule(owner, new, "minimum_bandwidth", min_kbps=2000, direction="egress")
    port = _port(service, _network(service), qos_policy_id=old)
    allocation = {_group(port["id"], [bw["id"]]): str(uuid.uuid4())}
    assert service.put(f"/v2.0/ports/{port['id']}", {"port": {
        "binding:profile": {"allocation": allocation}}})[0] == 200

    error(service.put(f"/v2.0/ports/{port['id']}", {"port": {"qos_policy_id": new}}), 503,
          "ServiceUnavailable")
    shown = service.get(f"/v2.0/ports/{port['id']}")[1]["port"]
    assert (shown["qos_policy_id"], shown["binding:profile"]) == (old, {"allocation": allocation})

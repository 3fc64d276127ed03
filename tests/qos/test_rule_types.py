"""Rule types follow the loaded mechanism drivers, and so does attaching.

``/v2.0/qos/rule-types`` lists the types every QoS-capable driver supports
(``all_supported``: any of them; ``all_rules``: every type there is); the
details name each driver with its parameter ranges. A policy is refused
where no loaded driver could enforce its rules: on a network when no
driver supports a rule, on a port when none that serves the port's vnic
type (or, once bound, its vif type) does.
"""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import Client, Server
from tests.qos._qos import error, manager, policy, rule

ALL = ["bandwidth_limit", "dscp_marking", "minimum_bandwidth", "minimum_packet_rate",
       "packet_rate_limit"]


def _server(tmp_path_factory: pytest.TempPathFactory, drivers: str) -> Server:
    return Server(tmp_path_factory.mktemp("qos-types"), extra=(
        "service_plugins = qos\n[ml2]\nextension_drivers = qos\n"
        f"mechanism_drivers = {drivers}\n")).start()


@pytest.fixture(scope="module")
def ovs_sriov(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = _server(tmp_path_factory, "openvswitch,sriovnicswitch")
    yield srv
    srv.stop()


def _types(client: Client, query: str = "") -> list[str]:
    status, body = client.get(f"/v2.0/qos/rule-types{query}")
    assert status == 200, body
    return [t["type"] for t in body["rule_types"]]


def test_listed_types_are_those_every_driver_supports(ovs_sriov: Server) -> None:
    admin = Client(ovs_sriov.url)
    assert _types(admin) == ["bandwidth_limit", "minimum_bandwidth"]
    # no loaded driver enforces packet rate limits (the OVS agent does not)
    assert _types(admin, "?all_supported=true") == [t for t in ALL if t != "packet_rate_limit"]
    assert _types(admin, "?all_rules=true") == ALL
    assert _types(admin, "?all_supported=false") == ["bandwidth_limit", "minimum_bandwidth"]
    error(admin.get("/v2.0/qos/rule-types?all_rules=foo"), 400, "InvalidInput")
    # Readers list them too.
    assert _types(Client(ovs_sriov.url, "c" * 32, "reader")) == ["bandwidth_limit",
                                                                 "minimum_bandwidth"]


def test_details_name_each_driver_and_its_parameters(ovs_sriov: Server) -> None:
    admin = Client(ovs_sriov.url)
    status, body = admin.get("/v2.0/qos/rule-types/bandwidth_limit")
    assert status == 200, body
    full = {"start": 0, "end": 2 ** 31 - 1}
    assert body == {"rule_type": {"type": "bandwidth_limit", "drivers": [
        {"name": "openvswitch", "supported_parameters": [
            {"parameter_name": "max_kbps", "parameter_values": full, "parameter_type": "range"},
            {"parameter_name": "max_burst_kbps", "parameter_values": full,
             "parameter_type": "range"},
            {"parameter_name": "direction", "parameter_values": ["ingress", "egress"],
             "parameter_type": "choices"}]},
        {"name": "sriovnicswitch", "supported_parameters": [
            {"parameter_name": "max_kbps", "parameter_values": full, "parameter_type": "range"},
            {"parameter_name": "max_burst_kbps", "parameter_values": full,
             "parameter_type": "range"},
            {"parameter_name": "direction", "parameter_values": ["egress"],
             "parameter_type": "choices"}]}]}}
    status, body = admin.get("/v2.0/qos/rule-types/dscp_marking")
    assert [d["name"] for d in body["rule_type"]["drivers"]] == ["openvswitch"]
    # Details are for admins only, as upstream.
    error(Client(ovs_sriov.url, "c" * 32, "reader").get("/v2.0/qos/rule-types/dscp_marking"),
          403, "NotAuthorized")
    assert admin.get("/v2.0/qos/rule-types/teleport")[0] == 404


def test_a_port_takes_only_rules_a_driver_serving_it_can_apply(ovs_sriov: Server) -> None:
    admin = Client(ovs_sriov.url)
    owner = manager(ovs_sriov.url)
    net = admin.post("/v2.0/networks", {"network": {"name": "n"}})[1]["network"]
    egress = policy(owner, shared=True)["id"]
    rule(owner, egress, "bandwidth_limit", max_kbps=100)
    ingress = policy(owner, shared=True)["id"]
    rule(owner, ingress, "bandwidth_limit", max_kbps=100, direction="ingress")
    # macvtap ports are served by sriovnicswitch only: egress limits only.
    status, body = admin.post("/v2.0/ports", {"port": {
        "network_id": net["id"], "binding:vnic_type": "macvtap", "qos_policy_id": egress}})
    assert status == 201, body
    port = body["port"]["id"]
    message = error(admin.put(f"/v2.0/ports/{port}", {"port": {"qos_policy_id": ingress}}),
                    409, "QosRuleNotSupported")
    assert message == f"Rule bandwidth_limit is not supported by port {port}"
    assert admin.get(f"/v2.0/ports/{port}")[1]["port"]["qos_policy_id"] == egress
    error(admin.post("/v2.0/ports", {"port": {"network_id": net["id"],
                                              "binding:vnic_type": "macvtap",
                                              "qos_policy_id": ingress}}),
          409, "QosRuleNotSupported")
    # An ordinary port (vnic normal: openvswitch) takes either.
    status, body = admin.post("/v2.0/ports", {"port": {"network_id": net["id"],
                                                       "qos_policy_id": ingress}})
    assert status == 201, body
    # A rule added to a policy in use must suit every port using it.
    message = error(owner.post(f"/v2.0/qos/policies/{egress}/dscp_marking_rules",
                               {"dscp_marking_rule": {"dscp_mark": 8}}), 409,
                    "QosRuleNotSupported")
    assert message == f"Rule dscp_marking is not supported by port {port}"
    assert [r["type"] for r in owner.get(f"/v2.0/qos/policies/{egress}")[1]["policy"]
            ["rules"]] == ["bandwidth_limit"]
    # Ports without a policy of their own inherit their network's: it must suit them too.
    bare = admin.post("/v2.0/ports", {"port": {"network_id": net["id"],
                                               "binding:vnic_type": "macvtap"}})[1]["port"]
    message = error(admin.put(f"/v2.0/networks/{net['id']}",
                              {"network": {"qos_policy_id": ingress}}),
                    409, "QosRuleNotSupported")
    assert message == f"Rule bandwidth_limit is not supported by port {bare['id']}"
    assert admin.get(f"/v2.0/networks/{net['id']}")[1]["network"]["qos_policy_id"] is None
    status, body = admin.put(f"/v2.0/networks/{net['id']}", {"network": {"qos_policy_id": egress}})
    assert status == 200, body


def test_without_a_qos_driver_nothing_can_be_enforced(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    srv = _server(tmp_path_factory, "logger")
    try:
        admin = Client(srv.url)
        assert _types(admin) == []
        assert _types(admin, "?all_rules=true") == ALL
        pid = policy(admin)["id"]
        net = admin.post("/v2.0/networks", {"network": {"name": "n", "qos_policy_id": pid}})
        assert net[0] == 201, net  # an empty policy asks nothing
        rule(admin, policy(admin, name="r")["id"], "dscp_marking", dscp_mark=8)
        ruled = admin.get("/v2.0/qos/policies?name=r")[1]["policies"][0]["id"]
        net_id = net[1]["network"]["id"]
        message = error(admin.put(f"/v2.0/networks/{net_id}",
                                  {"network": {"qos_policy_id": ruled}}), 409,
                        "QosRuleNotSupportedByNetwork")
        assert message == f"Rule dscp_marking is not supported by network {net_id}"
    finally:
        srv.stop()


def test_linuxbridge_limits_bandwidth_and_marks_dscp(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    srv = _server(tmp_path_factory, "linuxbridge")
    try:
        assert _types(Client(srv.url)) == ["bandwidth_limit", "dscp_marking"]
    finally:
        srv.stop()

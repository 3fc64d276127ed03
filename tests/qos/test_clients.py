"""QoS end to end with openstacksdk and the ``openstack`` CLI (session server:
qos plugin, ``qos`` extension driver, openvswitch)."""
from __future__ import annotations

from typing import Any

import pytest

from tests.clients.conftest import CLI, Cleanup, cleanup, cli, conn, name  # noqa: F401

pytestmark = pytest.mark.clients


def test_cli_policy_rules_and_attachments(cli: CLI, conn: Any, name: str,
                                          cleanup: Cleanup) -> None:
    created = cli.json("network", "qos", "policy", "create", name, "--description", "first")
    policies = [created["id"]]
    try:
        assert created["name"] == name and created["description"] == "first"
        cli.run("network", "qos", "policy", "set", name, "--name", f"{name}-b",
                "--description", "second", "--share")
        renamed = f"{name}-b"
        bw = cli.json("network", "qos", "rule", "create", "--type", "bandwidth-limit",
                      "--max-kbps", "1000", "--max-burst-kbits", "100", "--ingress", renamed)
        assert (bw["max_kbps"], bw["max_burst_kbps"], bw["direction"]) == (1000, 100, "ingress")
        dscp = cli.json("network", "qos", "rule", "create", "--type", "dscp-marking",
                        "--dscp-mark", "26", renamed)
        cli.run("network", "qos", "rule", "set",
                "--max-kbps", "2000", "--ingress", renamed, bw["id"])
        shown = cli.json("network", "qos", "policy", "show", renamed)
        assert shown["description"] == "second" and shown["shared"] is True
        assert sorted((r["type"], r.get("max_kbps")) for r in shown["rules"]) == [
            ("bandwidth_limit", 2000), ("dscp_marking", None)]
        rules = cli.json("network", "qos", "rule", "list", renamed)
        assert sorted(r["ID"] for r in rules) == sorted([bw["id"], dscp["id"]])
        types = cli.value("network", "qos", "rule", "type", "list", "-c", "Type")
        # what the OVS agent enforces (no packet rate limits)
        assert types == ["bandwidth_limit", "dscp_marking", "minimum_bandwidth",
                         "minimum_packet_rate"]

        net = cli.json("network", "create", name, "--qos-policy", renamed)
        cleanup.add("network", net["id"])
        assert net["qos_policy_id"] == created["id"]
        port = cli.json("port", "create", name, "--network", name)
        cleanup.add("port", port["id"])
        cli.run("port", "set", name, "--qos-policy", renamed)
        assert cli.json("port", "show", name)["qos_policy_id"] == created["id"]
        # In use: the CLI reports the refusal and the policy stays.
        refused = cli.run("network", "qos", "policy", "delete", renamed, check=False)
        assert refused.returncode != 0
        assert cli.json("network", "qos", "policy", "show", renamed)["id"] == created["id"]
        cli.run("port", "unset", name, "--qos-policy")
        cli.run("network", "set", name, "--no-qos-policy")
        cli.run("network", "qos", "rule", "delete", renamed, dscp["id"])
        cli.run("network", "qos", "policy", "delete", renamed)
        policies.clear()
        assert renamed not in cli.value("network", "qos", "policy", "list", "-c", "Name")
    finally:
        cleanup.run()
        for pid in policies:
            conn.network.delete_qos_policy(pid, ignore_missing=True)


def test_sdk_policy_default_rules_and_rule_types(conn: Any, name: str,
                                                 cleanup: Cleanup) -> None:
    net = conn.network
    policy = net.create_qos_policy(name=name, is_default=True, project_id="f" * 32)
    try:
        assert policy.is_default is True
        rule = net.create_qos_minimum_bandwidth_rule(policy, min_kbps=500, direction="egress")
        assert net.get_qos_minimum_bandwidth_rule(rule, policy).min_kbps == 500
        net.update_qos_minimum_bandwidth_rule(rule, policy, min_kbps=600)
        assert [r.min_kbps for r in net.qos_minimum_bandwidth_rules(policy)] == [600]
        limit = net.create_qos_bandwidth_limit_rule(policy, max_kbps=1000)
        assert limit.direction == "egress"
        fetched = net.get_qos_policy(policy)
        assert {r["type"] for r in fetched.rules} == {"minimum_bandwidth", "bandwidth_limit"}
        assert "bandwidth_limit" in [t.type for t in net.qos_rule_types()]
        details = net.get_qos_rule_type("minimum_bandwidth")
        assert [d["name"] for d in details.drivers] == ["openvswitch"]
        # The project's new networks get its default policy.
        network = net.create_network(name=name, project_id="f" * 32)
        cleanup.add("network", network.id)
        assert network.qos_policy_id == policy.id
        net.delete_network(network)
        net.delete_qos_bandwidth_limit_rule(limit, policy)
        net.delete_qos_minimum_bandwidth_rule(rule, policy)
        assert net.get_qos_policy(policy).rules == []
    finally:
        cleanup.run()
        net.delete_qos_policy(policy, ignore_missing=True)

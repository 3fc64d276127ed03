"""Security groups through openstacksdk and the ``openstack`` CLI."""
from __future__ import annotations

import uuid
from typing import Any

import pytest
from openstack import exceptions

from tests.clients.conftest import CLI
from tests.clients.module_fixtures import cli, conn  # noqa: F401 - the fixtures

pytestmark = pytest.mark.clients


@pytest.fixture
def name() -> str:
    return f"sgcl-{uuid.uuid4().hex[:8]}"


def test_sdk_security_group_and_rule_lifecycle(conn: Any, name: str) -> None:
    net = conn.network
    sg = net.create_security_group(name=name, description="web", stateful=True)
    try:
        assert (sg.name, sg.description, sg.stateful) == (name, "web", True)
        assert len(sg.security_group_rules) == 2
        rule = net.create_security_group_rule(security_group_id=sg.id, direction="ingress",
                                              protocol="tcp", port_range_min=443,
                                              port_range_max=443,
                                              remote_ip_prefix="192.0.2.0/24")
        assert (rule.protocol, rule.port_range_min, rule.remote_ip_prefix) == \
            ("tcp", 443, "192.0.2.0/24")
        with pytest.raises(exceptions.ConflictException):
            net.create_security_group_rule(security_group_id=sg.id, direction="ingress",
                                           protocol="6", port_range_min=443,
                                           port_range_max=443, remote_ip_prefix="192.0.2.0/24")
        with pytest.raises(exceptions.BadRequestException):
            net.create_security_group_rule(security_group_id=sg.id, direction="ingress",
                                           protocol="tcp", port_range_min=10, port_range_max=1)
        rules = [r.id for r in net.security_group_rules(security_group_id=sg.id)]
        assert rule.id in rules and len(rules) == 3
        updated = net.update_security_group(sg, name=f"{name}-b")
        assert updated.name == f"{name}-b"
        assert net.find_security_group(f"{name}-b").id == sg.id
        net.delete_security_group_rule(rule, ignore_missing=False)
        assert net.find_security_group_rule(rule.id) is None
    finally:
        net.delete_security_group(sg, ignore_missing=True)
    assert net.find_security_group(sg.id) is None


def test_sdk_port_with_security_groups(conn: Any, name: str) -> None:
    net = conn.network
    network = net.create_network(name=name)
    try:
        net.create_subnet(network_id=network.id, ip_version=4, cidr="10.77.0.0/24")
        sg = net.create_security_group(name=name)
        port = net.create_port(network_id=network.id, security_group_ids=[sg.id])
        assert port.security_group_ids == [sg.id]
        found = list(net.ports(security_group_ids=[sg.id]))
        assert [p.id for p in found] == [port.id]
        with pytest.raises(exceptions.ConflictException):
            net.delete_security_group(sg, ignore_missing=False)
        net.delete_port(port)
        net.delete_security_group(sg)
    finally:
        for p in net.ports(network_id=network.id):
            net.delete_port(p)
        net.delete_network(network, ignore_missing=True)


def test_sdk_address_group_actions(conn: Any, name: str) -> None:
    net = conn.network
    ag = net.create_address_group(name=name, addresses=["10.0.0.1/24"])
    try:
        assert ag.addresses == ["10.0.0.0/24"]
        ag = net.add_addresses_to_address_group(ag, ["192.0.2.0/24"])
        assert sorted(ag.addresses) == ["10.0.0.0/24", "192.0.2.0/24"]
        ag = net.remove_addresses_from_address_group(ag, ["10.0.0.0/24"])
        assert ag.addresses == ["192.0.2.0/24"]
    finally:
        net.delete_address_group(ag)


def test_cli_security_group_rule_and_port_commands(cli: CLI, conn: Any, name: str) -> None:
    created = cli.json("security", "group", "create", name, "--description", "cli")
    sg_id = created["id"]
    try:
        assert created["name"] == name and created["description"] == "cli"
        rule = cli.json("security", "group", "rule", "create", name, "--ingress",
                        "--protocol", "tcp", "--dst-port", "22:23",
                        "--remote-ip", "198.51.100.0/24")
        assert (rule["port_range_min"], rule["port_range_max"]) == (22, 23)
        assert rule["remote_ip_prefix"] == "198.51.100.0/24"
        icmp = cli.json("security", "group", "rule", "create", name, "--ingress",
                        "--protocol", "icmp", "--icmp-type", "8", "--icmp-code", "0")
        assert (icmp["protocol"], icmp["port_range_min"], icmp["port_range_max"]) == \
            ("icmp", 8, 0)
        listed = cli.json("security", "group", "rule", "list", name)
        assert {r["ID"] for r in listed} >= {rule["id"], icmp["id"]}
        assert name in cli.value("security", "group", "list", "-c", "Name")
        cli.run("security", "group", "set", name, "--description", "changed")
        assert cli.json("security", "group", "show", name)["description"] == "changed"

        cli.run("network", "create", name)
        cli.run("subnet", "create", name, "--network", name, "--subnet-range", "10.78.0.0/24")
        port = cli.json("port", "create", name, "--network", name, "--security-group", name)
        assert port["security_group_ids"] == [sg_id]
        failed = cli.run("security", "group", "delete", name, check=False)
        assert failed.returncode != 0
        cli.run("port", "delete", name)
        cli.run("security", "group", "rule", "delete", rule["id"])
        cli.run("security", "group", "delete", name)
        assert sg_id not in cli.value("security", "group", "list", "-c", "ID")
    finally:
        conn.network.delete_security_group(sg_id, ignore_missing=True)
        network = conn.network.find_network(name)
        if network is not None:
            for p in conn.network.ports(network_id=network.id):
                conn.network.delete_port(p)
            conn.network.delete_network(network)

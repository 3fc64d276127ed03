"""Address scopes, metering and IP availability through openstacksdk and the ``openstack`` CLI."""
from __future__ import annotations

import pytest

from tests.clients.conftest import cli, conn, name  # noqa: F401 - shared client fixtures

pytestmark = pytest.mark.clients


def test_address_scope_and_a_pool_in_it_with_the_cli(cli, conn, name):  # noqa: F811
    scope = cli.json("address", "scope", "create", "--ip-version", "4", name)
    try:
        assert (scope["name"], scope["ip_version"], scope["shared"]) == (name, 4, False)
        pool = cli.json("subnet", "pool", "create", f"{name}-pool", "--pool-prefix",
                        "10.120.0.0/16", "--address-scope", name)
        try:
            assert pool["address_scope_id"] == scope["id"]
            clash = cli.run("subnet", "pool", "create", f"{name}-clash", "--pool-prefix",
                            "10.120.1.0/24", "--address-scope", name, check=False)
            assert clash.returncode != 0
            assert "must have unique prefixes" in clash.stderr
            cli.run("address", "scope", "set", name, "--name", f"{name}-b")
            shown = cli.json("address", "scope", "show", f"{name}-b")
            assert shown["id"] == scope["id"]
            listed = cli.json("address", "scope", "list", "--ip-version", "4")
            assert scope["id"] in [s["ID"] for s in listed]
            in_use = cli.run("address", "scope", "delete", f"{name}-b", check=False)
            assert in_use.returncode != 0
        finally:
            conn.network.delete_subnet_pool(pool["id"], ignore_missing=True)
        cli.run("address", "scope", "delete", f"{name}-b")
    finally:
        conn.network.delete_address_scope(scope["id"], ignore_missing=True)
    assert conn.network.find_address_scope(scope["id"]) is None


def test_address_scopes_with_the_sdk(conn, name):  # noqa: F811
    scope = conn.network.create_address_scope(name=name, ip_version=6, shared=True)
    try:
        assert scope.is_shared is True and scope.ip_version == 6
        pool = conn.network.create_subnet_pool(name=name, prefixes=["2001:db8:120::/48"],
                                               address_scope_id=scope.id)
        try:
            net = conn.network.create_network(name=name)
            try:
                conn.network.create_subnet(network_id=net.id, ip_version=6,
                                           subnet_pool_id=pool.id)
                assert conn.network.get_network(net.id).ipv6_address_scope_id == scope.id
            finally:
                conn.network.delete_network(net.id)
        finally:
            conn.network.delete_subnet_pool(pool.id)
        assert scope.id in [s.id for s in conn.network.address_scopes(ip_version=6)]
    finally:
        conn.network.delete_address_scope(scope.id)


def test_meter_and_meter_rules_with_the_cli(cli, conn, name):  # noqa: F811
    meter = cli.json("network", "meter", "create", name, "--description", "counted")
    try:
        assert (meter["name"], meter["description"], meter["shared"]) == (name, "counted", False)
        rule = cli.json("network", "meter", "rule", "create", "--ingress",
                        "--remote-ip-prefix", "10.121.0.0/24", name)
        assert (rule["direction"], rule["remote_ip_prefix"]) == ("ingress", "10.121.0.0/24")
        assert rule["metering_label_id"] == meter["id"]
        overlap = cli.run("network", "meter", "rule", "create", "--ingress",
                          "--remote-ip-prefix", "10.121.0.128/25", name, check=False)
        assert overlap.returncode != 0 and "overlaps another" in overlap.stderr
        rules = cli.json("network", "meter", "rule", "list")
        assert rule["id"] in [r["ID"] for r in rules]
        assert cli.json("network", "meter", "rule", "show", rule["id"])["id"] == rule["id"]
        assert cli.json("network", "meter", "show", name)["id"] == meter["id"]
        cli.run("network", "meter", "rule", "delete", rule["id"])
    finally:
        cli.run("network", "meter", "delete", meter["id"], check=False)
    assert meter["id"] not in [m.id for m in conn.network.metering_labels()]


def test_metering_with_the_sdk(conn, name):  # noqa: F811
    label = conn.network.create_metering_label(name=name)
    try:
        rule = conn.network.create_metering_label_rule(
            metering_label_id=label.id, direction="egress", source_ip_prefix="10.122.0.0/24")
        assert rule.source_ip_prefix == "10.122.0.0/24"
        assert rule.id in [r.id for r in conn.network.metering_label_rules(
            metering_label_id=label.id)]
    finally:
        conn.network.delete_metering_label(label.id)
    assert conn.network.find_metering_label_rule(rule.id) is None


def test_ip_availability_with_the_cli_and_the_sdk(cli, conn, name):  # noqa: F811
    net = conn.network.create_network(name=name)
    try:
        conn.network.create_subnet(network_id=net.id, ip_version=4, cidr="10.123.0.0/24")
        port = conn.network.create_port(network_id=net.id)
        shown = cli.json("ip", "availability", "show", name)
        assert (shown["network_id"], shown["total_ips"], shown["used_ips"]) == (net.id, 253, 1)
        listed = cli.json("ip", "availability", "list")
        mine = [row for row in listed if row["Network ID"] == net.id]
        assert mine and (mine[0]["Total IPs"], mine[0]["Used IPs"]) == (253, 1)
        sdk = conn.network.get_network_ip_availability(net.id)
        assert sdk.total_ips == 253 and sdk.used_ips == 1
        assert net.id in [a.network_id for a in conn.network.network_ip_availabilities()]
        conn.network.delete_port(port.id)
    finally:
        for leftover in conn.network.ports(network_id=net.id):
            conn.network.delete_port(leftover.id)
        conn.network.delete_network(net.id)

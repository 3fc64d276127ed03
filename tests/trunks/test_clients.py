"""``openstack network trunk ...`` and openstacksdk's trunks against neutrino."""
from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.clients.conftest import CLI
from tests.clients.module_fixtures import cli, conn  # noqa: F401 - the fixtures

pytestmark = pytest.mark.clients


def test_cli_trunk_lifecycle_with_subports(cli: CLI, conn: Any) -> None:
    name = f"tr-{uuid.uuid4().hex[:6]}"
    net = conn.network.create_network(name=name)
    parent, sub1, sub2 = (conn.network.create_port(network_id=net.id, name=f"{name}-{i}")
                          for i in range(3))
    created = cli.json("network", "trunk", "create", name, "--parent-port", parent.name,
                       "--subport", f"port={sub1.name},segmentation-type=vlan,"
                                    f"segmentation-id=100",
                       "--description", "first")
    assert created["port_id"] == parent.id
    assert created["status"] == "DOWN"
    assert created["sub_ports"] == [{"port_id": sub1.id, "segmentation_type": "vlan",
                                     "segmentation_id": 100}]
    cli.run("network", "trunk", "set", name, "--subport",
            f"port={sub2.id},segmentation-type=vlan,segmentation-id=200")
    subports = cli.json("network", "subport", "list", "--trunk", name)
    assert {(s["Port"], s["Segmentation ID"]) for s in subports} == {(sub1.id, 100),
                                                                      (sub2.id, 200)}
    cli.run("network", "trunk", "unset", name, "--subport", sub1.name)
    shown = cli.json("network", "trunk", "show", name)
    assert shown["sub_ports"] == [{"port_id": sub2.id, "segmentation_type": "vlan",
                                   "segmentation_id": 200}]
    cli.run("network", "trunk", "set", name, "--disable", "--name", f"{name}-b")
    assert cli.json("network", "trunk", "show", f"{name}-b")["is_admin_state_up"] is False
    refused = cli.run("network", "trunk", "delete", f"{name}-b", check=False)
    assert refused.returncode != 0
    cli.run("network", "trunk", "set", f"{name}-b", "--enable")
    assert f"{name}-b" in cli.value("network", "trunk", "list", "-c", "Name")
    cli.run("network", "trunk", "delete", f"{name}-b")
    for p in (parent, sub1, sub2):
        conn.network.delete_port(p)
    conn.network.delete_network(net)


def test_sdk_trunk_and_trunk_details(conn: Any) -> None:
    net = conn.network.create_network(name=f"sdk-{uuid.uuid4().hex[:6]}")
    parent, sub = (conn.network.create_port(network_id=net.id) for _ in range(2))
    trunk = conn.network.create_trunk(port_id=parent.id, name="sdk-trunk")
    conn.network.add_trunk_subports(trunk, [{"port_id": sub.id, "segmentation_type": "vlan",
                                             "segmentation_id": 42}])
    assert conn.network.get_trunk_subports(trunk)["sub_ports"] == [
        {"port_id": sub.id, "segmentation_type": "vlan", "segmentation_id": 42}]
    details = conn.network.get_port(parent.id).trunk_details
    assert details == {"trunk_id": trunk.id, "sub_ports": [
        {"port_id": sub.id, "segmentation_type": "vlan", "segmentation_id": 42,
         "mac_address": sub.mac_address}]}
    conn.network.delete_trunk_subports(trunk, [{"port_id": sub.id}])
    conn.network.delete_trunk(trunk)
    for p in (parent, sub):
        conn.network.delete_port(p)
    conn.network.delete_network(net)

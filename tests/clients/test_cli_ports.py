"""The ``openstack port ...`` commands against neutrino."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.clients


@pytest.fixture
def net_and_subnet(conn, name, cleanup):
    net = conn.network.create_network(name=name)
    cleanup.add("network", net.id)
    sub = conn.network.create_subnet(name=name, network_id=net.id, ip_version=4,
                                     cidr="10.1.0.0/24")
    cleanup.add("subnet", sub.id)
    return net, sub


def test_port_lifecycle_with_fixed_ips_and_allowed_address_pairs(cli, conn, name, cleanup,
                                                                 net_and_subnet):
    net, sub = net_and_subnet
    created = cli.json("port", "create", name, "--network", name,
                       "--fixed-ip", f"subnet={name},ip-address=10.1.0.20",
                       "--allowed-address", "ip-address=10.1.0.200",
                       "--device-owner", "compute:nova", "--device", "vm-1",
                       "--description", "first", "--tag", "red")
    cleanup.add("port", created["id"])
    mac = created["mac_address"]
    assert created["name"] == name
    assert created["network_id"] == net.id
    assert created["fixed_ips"] == [{"subnet_id": sub.id, "ip_address": "10.1.0.20"}]
    # a pair given without a MAC gets the port's MAC, as upstream does
    assert created["allowed_address_pairs"] == [{"ip_address": "10.1.0.200", "mac_address": mac}]
    assert created["device_owner"] == "compute:nova"
    assert created["device_id"] == "vm-1"
    assert created["admin_state_up"] is True
    assert created["status"] == "DOWN"
    assert created["tags"] == ["red"]
    assert mac.startswith("fa:16:3e:")

    renamed = f"{name}-b"
    cli.run("port", "set", name, "--name", renamed, "--description", "second",
            "--fixed-ip", f"subnet={sub.id},ip-address=10.1.0.21",
            "--allowed-address", "ip-address=10.9.9.0/24,mac-address=fa:16:3e:00:00:01",
            "--disable", "--tag", "green")
    cli.run("port", "unset", renamed,
            "--fixed-ip", f"subnet={name},ip-address=10.1.0.20",
            "--allowed-address", f"ip-address=10.1.0.200,mac-address={mac}",
            "--tag", "red")

    shown = cli.json("port", "show", renamed)
    assert shown["id"] == created["id"]
    assert shown["name"] == renamed
    assert shown["description"] == "second"
    assert shown["admin_state_up"] is False
    assert shown["fixed_ips"] == [{"subnet_id": sub.id, "ip_address": "10.1.0.21"}]
    assert shown["allowed_address_pairs"] == [{"ip_address": "10.9.9.0/24",
                                               "mac_address": "fa:16:3e:00:00:01"}]
    assert shown["tags"] == ["green"]
    assert shown["mac_address"] == mac

    by_ip = cli.json("port", "list", "--network", net.id, "--fixed-ip", "ip-address=10.1.0.21")
    assert [(r["ID"], r["Name"], r["MAC Address"]) for r in by_ip] == [(created["id"], renamed, mac)]
    assert cli.value("port", "list", "--fixed-ip", "ip-address=10.1.0.20", "--network", net.id,
                     "-c", "ID") == []

    cli.run("port", "delete", renamed)
    assert conn.network.find_port(created["id"]) is None


def test_port_list_filters_by_subnet_device_owner_mac_and_ip_substring(cli, conn, name,
                                                                       net_and_subnet, cleanup):
    net, sub = net_and_subnet
    p1 = conn.network.create_port(network_id=net.id, name=f"{name}-1",
                                  device_owner="compute:nova",
                                  mac_address="fa:16:3e:11:22:33",
                                  fixed_ips=[{"subnet_id": sub.id, "ip_address": "10.1.0.77"}])
    cleanup.add("port", p1.id)
    p2 = conn.network.create_port(network_id=net.id, name=f"{name}-2",
                                  fixed_ips=[{"subnet_id": sub.id, "ip_address": "10.1.0.78"}])
    cleanup.add("port", p2.id)

    by_subnet = cli.value("port", "list", "--fixed-ip", f"subnet={sub.id}", "-c", "ID")
    assert sorted(by_subnet) == sorted([p1.id, p2.id])

    by_owner_mac = cli.value("port", "list", "--device-owner", "compute:nova",
                             "--mac-address", "fa:16:3e:11:22:33", "--network", net.id,
                             "-c", "ID", "-c", "Name")
    assert by_owner_mac == [f"{p1.id} {p1.name}"]

    by_substring = cli.value("port", "list", "--network", net.id,
                             "--fixed-ip", "ip-substring=0.78", "-c", "ID")
    assert by_substring == [p2.id]

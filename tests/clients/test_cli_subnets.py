"""The ``openstack subnet ...`` commands against neutrino."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.clients


def test_subnet_lifecycle_with_pools_dns_and_host_routes(cli, conn, name, cleanup):
    net = conn.network.create_network(name=name)
    cleanup.add("network", net.id)

    created = cli.json(
        "subnet", "create", name, "--network", name, "--subnet-range", "10.1.0.0/24",
        "--allocation-pool", "start=10.1.0.10,end=10.1.0.50",
        "--dns-nameserver", "8.8.8.8",
        "--host-route", "destination=10.2.0.0/24,gateway=10.1.0.1",
        "--description", "first", "--tag", "red")
    cleanup.add("subnet", created["id"])
    assert created["name"] == name
    assert created["network_id"] == net.id
    assert created["cidr"] == "10.1.0.0/24"
    assert created["ip_version"] == 4
    assert created["gateway_ip"] == "10.1.0.1"
    assert created["enable_dhcp"] is True
    assert created["allocation_pools"] == [{"start": "10.1.0.10", "end": "10.1.0.50"}]
    assert created["dns_nameservers"] == ["8.8.8.8"]
    assert created["host_routes"] == [{"destination": "10.2.0.0/24", "nexthop": "10.1.0.1"}]
    assert created["description"] == "first"
    assert created["tags"] == ["red"]
    assert created["subnetpool_id"] is None

    renamed = f"{name}-b"
    cli.run("subnet", "set", name, "--name", renamed, "--no-dhcp",
            "--dns-nameserver", "1.1.1.1",
            "--allocation-pool", "start=10.1.0.100,end=10.1.0.110",
            "--host-route", "destination=10.3.0.0/24,gateway=10.1.0.2",
            "--gateway", "10.1.0.254", "--tag", "green")
    cli.run("subnet", "unset", renamed, "--dns-nameserver", "8.8.8.8",
            "--allocation-pool", "start=10.1.0.10,end=10.1.0.50",
            "--host-route", "destination=10.2.0.0/24,gateway=10.1.0.1",
            "--tag", "red")

    shown = cli.json("subnet", "show", renamed)
    assert shown["id"] == created["id"]
    assert shown["name"] == renamed
    assert shown["enable_dhcp"] is False
    assert shown["gateway_ip"] == "10.1.0.254"
    assert shown["dns_nameservers"] == ["1.1.1.1"]
    assert shown["allocation_pools"] == [{"start": "10.1.0.100", "end": "10.1.0.110"}]
    assert shown["host_routes"] == [{"destination": "10.3.0.0/24", "nexthop": "10.1.0.2"}]
    assert shown["tags"] == ["green"]
    assert shown["revision_number"] > created["revision_number"]

    listed = cli.json("subnet", "list", "--network", net.id, "--ip-version", "4")
    assert listed == [{"ID": created["id"], "Name": renamed, "Network": net.id,
                       "Subnet": "10.1.0.0/24"}]
    # the network now lists the subnet
    assert conn.network.get_network(net.id).subnet_ids == [created["id"]]

    cli.run("subnet", "delete", renamed)
    assert conn.network.find_subnet(created["id"]) is None
    assert conn.network.get_network(net.id).subnet_ids == []


def test_subnet_create_ipv6_slaac_and_without_gateway(cli, conn, name, cleanup):
    net = conn.network.create_network(name=name)
    cleanup.add("network", net.id)

    v6 = cli.json("subnet", "create", f"{name}-6", "--network", net.id, "--ip-version", "6",
                  "--ipv6-ra-mode", "slaac", "--ipv6-address-mode", "slaac",
                  "--subnet-range", "fd00:1::/64",
                  "-c", "id", "-c", "cidr", "-c", "gateway_ip", "-c", "allocation_pools",
                  "-c", "ipv6_ra_mode", "-c", "ipv6_address_mode", "-c", "ip_version")
    cleanup.add("subnet", v6["id"])
    # upstream's default IPv6 gateway is the subnet-router anycast address
    assert v6 == {"id": v6["id"], "cidr": "fd00:1::/64", "gateway_ip": "fd00:1::",
                  "allocation_pools": [{"start": "fd00:1::1",
                                        "end": "fd00:1::ffff:ffff:ffff:ffff"}],
                  "ipv6_ra_mode": "slaac", "ipv6_address_mode": "slaac", "ip_version": 6}

    nogw = cli.json("subnet", "create", f"{name}-4", "--network", net.id,
                    "--subnet-range", "10.7.0.0/24", "--gateway", "none",
                    "-c", "id", "-c", "gateway_ip", "-c", "allocation_pools")
    cleanup.add("subnet", nogw["id"])
    assert nogw["gateway_ip"] is None
    assert nogw["allocation_pools"] == [{"start": "10.7.0.1", "end": "10.7.0.254"}]

"""The ``openstack subnet pool ...`` commands against neutrino."""
from __future__ import annotations

import ipaddress

import pytest

pytestmark = pytest.mark.clients


def test_subnet_pool_lifecycle_and_subnet_allocation_from_it(cli, conn, name, cleanup):
    pool = cli.json("subnet", "pool", "create", name, "--pool-prefix", "10.100.0.0/16",
                    "--default-prefix-length", "26", "--min-prefix-length", "24",
                    "--max-prefix-length", "28", "--description", "first", "--tag", "red")
    cleanup.add("subnetpool", pool["id"])
    assert pool["name"] == name
    assert pool["prefixes"] == ["10.100.0.0/16"]
    assert pool["default_prefixlen"] == 26
    assert pool["min_prefixlen"] == 24
    assert pool["max_prefixlen"] == 28
    assert pool["ip_version"] == 4
    assert pool["is_default"] is False
    assert pool["shared"] is False
    assert pool["description"] == "first"
    assert pool["tags"] == ["red"]

    renamed = f"{name}-b"
    cli.run("subnet", "pool", "set", name, "--name", renamed, "--pool-prefix", "10.101.0.0/16",
            "--default-prefix-length", "27", "--description", "second", "--tag", "green")
    cli.run("subnet", "pool", "unset", renamed, "--tag", "red")

    shown = cli.json("subnet", "pool", "show", renamed)
    assert shown["id"] == pool["id"]
    assert shown["name"] == renamed
    # adjacent prefixes are merged, as upstream does
    assert shown["prefixes"] == ["10.100.0.0/15"]
    assert shown["default_prefixlen"] == 27
    assert shown["description"] == "second"
    assert shown["tags"] == ["green"]

    net = conn.network.create_network(name=name)
    cleanup.add("network", net.id)
    sized = cli.json("subnet", "create", f"{name}-28", "--network", net.id,
                     "--subnet-pool", renamed, "--prefix-length", "28",
                     "-c", "id", "-c", "cidr", "-c", "subnetpool_id", "-c", "gateway_ip",
                     "-c", "allocation_pools")
    cleanup.add("subnet", sized["id"])
    cidr = ipaddress.ip_network(sized["cidr"])
    assert cidr.prefixlen == 28
    assert cidr.subnet_of(ipaddress.ip_network("10.100.0.0/15"))
    assert sized["subnetpool_id"] == pool["id"]
    assert sized["gateway_ip"] == str(cidr[1])
    assert sized["allocation_pools"] == [{"start": str(cidr[2]), "end": str(cidr[-2])}]

    listed = cli.json("subnet", "pool", "list", "--long", "--name", renamed)
    assert len(listed) == 1
    assert listed[0]["ID"] == pool["id"]
    assert listed[0]["Prefixes"] == ["10.100.0.0/15"]
    assert listed[0]["Default Prefix Length"] == 27
    assert listed[0]["Tags"] == ["green"]

    # a pool with a subnet allocated from it cannot go
    busy = cli.run("subnet", "pool", "delete", renamed, check=False)
    assert busy.returncode == 1
    conn.network.delete_subnet(sized["id"])
    cli.run("subnet", "pool", "delete", renamed)
    assert conn.network.find_subnet_pool(pool["id"]) is None


def test_subnet_create_from_pool_uses_default_prefix_length(cli, conn, name, cleanup):
    pool = conn.network.create_subnet_pool(name=name, prefixes=["10.120.0.0/16"],
                                           default_prefixlen=27)
    cleanup.add("subnetpool", pool.id)
    net = conn.network.create_network(name=name)
    cleanup.add("network", net.id)
    sub = cli.json("subnet", "create", name, "--network", net.id, "--subnet-pool", pool.id,
                   "-c", "id", "-c", "cidr")
    cleanup.add("subnet", sub["id"])
    cidr = ipaddress.ip_network(sub["cidr"])
    assert cidr.prefixlen == 27
    assert cidr.subnet_of(ipaddress.ip_network("10.120.0.0/16"))

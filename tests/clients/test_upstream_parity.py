"""Client-visible places where neutrino answers differently from upstream Neutron.

Each expectation here is what upstream Neutron (2024.x, "29") returns for the
same request: each was a strict xfail until the server was fixed.
"""
from __future__ import annotations

import ipaddress

import pytest
from openstack import exceptions

pytestmark = pytest.mark.clients


def test_subnet_from_pool_is_carved_from_the_smallest_block_that_fits(cli, conn, name, cleanup):
    pool = conn.network.create_subnet_pool(name=name, prefixes=["10.0.0.0/8", "172.16.0.0/12"])
    cleanup.add("subnetpool", pool.id)
    net = conn.network.create_network(name=name)
    cleanup.add("network", net.id)
    sub = cli.json("subnet", "create", name, "--network", net.id, "--subnet-pool", pool.id,
                   "--prefix-length", "24", "-c", "id", "-c", "cidr")
    cleanup.add("subnet", sub["id"])
    assert sub["cidr"] == "172.16.0.0/24"
    # and the whole /8 is then still free for a default-sized (/8) subnet
    whole = conn.network.create_subnet(network_id=net.id, ip_version=4, subnet_pool_id=pool.id)
    cleanup.add("subnet", whole.id)
    assert whole.cidr == "10.0.0.0/8"


def test_exceeding_a_subnet_pool_quota_is_a_conflict(conn, name, cleanup):
    pool = conn.network.create_subnet_pool(name=name, prefixes=["10.130.0.0/16"],
                                           default_prefixlen=28, default_quota=1)
    cleanup.add("subnetpool", pool.id)
    net = conn.network.create_network(name=name)
    cleanup.add("network", net.id)
    with pytest.raises(exceptions.HttpException) as exc:
        sub = conn.network.create_subnet(network_id=net.id, ip_version=4,
                                         subnet_pool_id=pool.id, prefix_length=30)
        cleanup.add("subnet", sub.id)
    assert exc.value.status_code == 409
    assert "Per-project subnet pool prefix quota exceeded" in str(exc.value)


def test_network_without_subnets_accepts_a_small_mtu(cli, conn, name, cleanup):
    proc = cli.run("network", "create", name, "--mtu", "10", "-f", "json", check=False)
    found = conn.network.find_network(name)
    if found is not None:
        cleanup.add("network", found.id)
    assert proc.returncode == 0, proc.stderr
    assert found.mtu == 10


def test_bad_dns_nameserver_error_reads_as_upstream(cli, conn, name, cleanup):
    net = conn.network.create_network(name=name)
    cleanup.add("network", net.id)
    proc = cli.run("subnet", "create", name, "--network", net.id,
                   "--subnet-range", "10.140.0.0/24", "--dns-nameserver", "foo", check=False)
    assert proc.returncode == 1
    assert ("Invalid input for dns_nameservers. Reason: 'foo' is not a valid nameserver."
            in proc.stderr)


def test_replacing_tags_with_duplicates_is_rejected(conn, name, cleanup):
    net = conn.network.create_network(name=name)
    cleanup.add("network", net.id)
    with pytest.raises(exceptions.BadRequestException):
        conn.network.set_tags(net, ["a", "a"])
    assert conn.network.get_network(net.id).tags == []


def test_ipv6_subnet_from_ipv4_pool_error_names_the_pool_mismatch(conn, name, cleanup):
    pool = conn.network.create_subnet_pool(name=name, prefixes=["10.150.0.0/16"])
    cleanup.add("subnetpool", pool.id)
    net = conn.network.create_network(name=name)
    cleanup.add("network", net.id)
    with pytest.raises(exceptions.BadRequestException) as exc:
        sub = conn.network.create_subnet(network_id=net.id, ip_version=6,
                                         subnet_pool_id=pool.id)
        cleanup.add("subnet", sub.id)
    assert "Cannot allocate IPv6 subnet from IPv4 subnet pool" in str(exc.value)


def test_pool_subnet_sizes_follow_the_request(conn, name, cleanup):
    """Allocation from a pool works and respects the requested size."""
    pool = conn.network.create_subnet_pool(name=name, prefixes=["10.160.0.0/16"])
    cleanup.add("subnetpool", pool.id)
    net = conn.network.create_network(name=name)
    cleanup.add("network", net.id)
    sub = conn.network.create_subnet(network_id=net.id, ip_version=4, subnet_pool_id=pool.id,
                                     prefix_length=25)
    cleanup.add("subnet", sub.id)
    assert ipaddress.ip_network(sub.cidr).prefixlen == 25

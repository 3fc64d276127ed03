"""openstacksdk's network proxy against neutrino."""
from __future__ import annotations

import ipaddress

import pytest
from openstack import exceptions

pytestmark = pytest.mark.clients


def test_sdk_network_lifecycle_with_tags_and_revision_precondition(conn, name, cleanup):
    net = conn.network.create_network(name=name, description="first", mtu=1400)
    cleanup.add("network", net.id)
    assert (net.name, net.description, net.mtu, net.is_admin_state_up) == (name, "first", 1400, True)
    assert net.status == "ACTIVE"
    assert net.subnet_ids == []

    assert conn.network.find_network(name).id == net.id
    first_revision = net.revision_number  # update_network refreshes ``net`` in place
    updated = conn.network.update_network(net, name=f"{name}-b", is_admin_state_up=False)
    assert updated.name == f"{name}-b"
    assert updated.is_admin_state_up is False
    assert updated.revision_number > first_revision

    conn.network.set_tags(net, [f"{name}-x", f"{name}-y"])
    conn.network.add_tag(net, f"{name}-z")
    conn.network.remove_tag(net, f"{name}-x")
    assert sorted(conn.network.get_network(net.id).tags) == [f"{name}-y", f"{name}-z"]
    assert [n.id for n in conn.network.networks(tags=f"{name}-y,{name}-z")] == [net.id]
    assert [n.id for n in conn.network.networks(any_tags=f"{name}-x,{name}-y")] == [net.id]
    assert list(conn.network.networks(tags=f"{name}-x")) == []

    current = conn.network.get_network(net.id)
    with pytest.raises(exceptions.PreconditionFailedException):
        conn.network.update_network(net, name="never", if_revision=current.revision_number + 7)
    assert conn.network.get_network(net.id).name == f"{name}-b"
    ok = conn.network.update_network(net, description="second", if_revision=current.revision_number)
    assert ok.description == "second"

    conn.network.delete_network(net)
    with pytest.raises(exceptions.NotFoundException):
        conn.network.get_network(net.id)


def test_sdk_follows_pagination_links_and_sorts(conn, name, cleanup):
    tag = f"{name}-page"
    ids = []
    for i in range(5):
        n = conn.network.create_network(name=f"{name}-{i}")
        cleanup.add("network", n.id)
        conn.network.set_tags(n, [tag])
        ids.append(n.id)

    names = [n.name for n in conn.network.networks(tags=tag, limit=2, sort_key="name",
                                                   sort_dir="desc")]
    assert names == [f"{name}-{i}" for i in (4, 3, 2, 1, 0)]

    page = conn.network.get(f"/networks?tags={tag}&limit=2&sort_key=name&sort_dir=asc").json()
    assert [n["name"] for n in page["networks"]] == [f"{name}-0", f"{name}-1"]
    links = {link["rel"]: link["href"] for link in page["networks_links"]}
    assert "next" in links
    rest = conn.network.get(links["next"].split("/v2.0", 1)[1]).json()
    assert [n["name"] for n in rest["networks"]] == [f"{name}-2", f"{name}-3"]


def test_sdk_ports_allocate_fixed_ips_and_report_conflicts(conn, name, cleanup):
    net = conn.network.create_network(name=name)
    cleanup.add("network", net.id)
    sub = conn.network.create_subnet(network_id=net.id, ip_version=4, cidr="10.5.0.0/24",
                                     allocation_pools=[{"start": "10.5.0.10", "end": "10.5.0.20"}])
    cleanup.add("subnet", sub.id)

    auto = conn.network.create_port(network_id=net.id, name=f"{name}-auto")
    cleanup.add("port", auto.id)
    assert len(auto.fixed_ips) == 1
    assert auto.fixed_ips[0]["subnet_id"] == sub.id
    assert ipaddress.ip_address("10.5.0.10") <= ipaddress.ip_address(auto.fixed_ips[0]["ip_address"]) \
        <= ipaddress.ip_address("10.5.0.20")

    fixed = conn.network.create_port(network_id=net.id,
                                     fixed_ips=[{"subnet_id": sub.id, "ip_address": "10.5.0.99"}])
    cleanup.add("port", fixed.id)
    assert fixed.fixed_ips == [{"subnet_id": sub.id, "ip_address": "10.5.0.99"}]

    with pytest.raises(exceptions.ConflictException):
        conn.network.create_port(network_id=net.id,
                                 fixed_ips=[{"subnet_id": sub.id, "ip_address": "10.5.0.99"}])
    with pytest.raises(exceptions.BadRequestException):
        conn.network.create_port(network_id=net.id,
                                 fixed_ips=[{"subnet_id": sub.id, "ip_address": "10.6.0.1"}])
    with pytest.raises(exceptions.ConflictException):
        conn.network.delete_subnet(sub)
    with pytest.raises(exceptions.ConflictException):
        conn.network.delete_network(net)

    found = list(conn.network.ports(network_id=net.id, fixed_ips=["ip_address=10.5.0.99"]))
    assert [p.id for p in found] == [fixed.id]

    moved = conn.network.update_port(fixed, fixed_ips=[{"subnet_id": sub.id,
                                                        "ip_address": "10.5.0.98"}],
                                     allowed_address_pairs=[{"ip_address": "10.5.1.0/24"}])
    assert moved.fixed_ips == [{"subnet_id": sub.id, "ip_address": "10.5.0.98"}]
    assert moved.allowed_address_pairs == [{"ip_address": "10.5.1.0/24",
                                            "mac_address": fixed.mac_address}]
    # the old address is free again
    again = conn.network.create_port(network_id=net.id,
                                     fixed_ips=[{"subnet_id": sub.id, "ip_address": "10.5.0.99"}])
    cleanup.add("port", again.id)
    assert again.fixed_ips[0]["ip_address"] == "10.5.0.99"


def test_sdk_subnet_pool_allocates_subnets_and_guards_its_prefixes(conn, name, cleanup):
    pool = conn.network.create_subnet_pool(name=name, prefixes=["10.50.0.0/16"],
                                           default_prefixlen=24, max_prefixlen=28)
    cleanup.add("subnetpool", pool.id)
    assert pool.prefixes == ["10.50.0.0/16"]
    assert (pool.default_prefix_length, pool.minimum_prefix_length,
            pool.maximum_prefix_length) == (24, 8, 28)

    net = conn.network.create_network(name=name)
    cleanup.add("network", net.id)
    s1 = conn.network.create_subnet(network_id=net.id, ip_version=4, subnet_pool_id=pool.id)
    cleanup.add("subnet", s1.id)
    s2 = conn.network.create_subnet(network_id=net.id, ip_version=4, subnet_pool_id=pool.id,
                                    prefix_length=26)
    cleanup.add("subnet", s2.id)
    c1, c2 = ipaddress.ip_network(s1.cidr), ipaddress.ip_network(s2.cidr)
    assert (c1.prefixlen, c2.prefixlen) == (24, 26)
    assert c1.subnet_of(ipaddress.ip_network("10.50.0.0/16"))
    assert c2.subnet_of(ipaddress.ip_network("10.50.0.0/16"))
    assert not c1.overlaps(c2)
    assert s1.subnet_pool_id == pool.id

    with pytest.raises(exceptions.BadRequestException):
        conn.network.create_subnet(network_id=net.id, ip_version=4, subnet_pool_id=pool.id,
                                   prefix_length=30)

    grown = conn.network.update_subnet_pool(pool, prefixes=["10.50.0.0/16", "10.60.0.0/16"])
    assert grown.prefixes == ["10.50.0.0/16", "10.60.0.0/16"]
    with pytest.raises(exceptions.BadRequestException):
        conn.network.update_subnet_pool(pool, prefixes=["10.60.0.0/16"])

    with pytest.raises(exceptions.BadRequestException):
        conn.network.delete_subnet_pool(pool)
    conn.network.delete_subnet(s1)
    conn.network.delete_subnet(s2)
    conn.network.delete_subnet_pool(pool)
    assert conn.network.find_subnet_pool(pool.id) is None

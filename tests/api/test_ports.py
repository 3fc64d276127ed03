"""Ports over real HTTP: MACs, fixed IPs, automatic allocation, options."""
from __future__ import annotations

import netaddr
import pytest

from tests.api import _helpers as h


def ips(port):
    return [f["ip_address"] for f in port["fixed_ips"]]


def post(client, net_id, **attrs):
    return client.post("/v2.0/ports", {"port": {"network_id": net_id, **attrs}})


@pytest.fixture
def net4(member):
    """A network with one IPv4 subnet whose pool is 10.0.0.10-10.0.0.20."""
    net = h.network(member)
    sub = h.subnet(member, net["id"], "10.0.0.0/24",
                   allocation_pools=[{"start": "10.0.0.10", "end": "10.0.0.20"}])
    return net, sub


def test_port_create_defaults(member, net4, project_id):
    net, sub = net4
    p = h.port(member, net["id"], name="p1")
    assert (p["status"], p["admin_state_up"], p["device_id"], p["device_owner"]) == \
        ("DOWN", True, "", "")
    assert p["project_id"] == project_id and p["name"] == "p1"
    assert p["allowed_address_pairs"] == [] and p["extra_dhcp_opts"] == []
    assert [f["subnet_id"] for f in p["fixed_ips"]] == [sub["id"]]
    assert netaddr.IPAddress(ips(p)[0]) in netaddr.IPRange("10.0.0.10", "10.0.0.20")
    assert p["revision_number"] == 1


def test_port_mac_comes_from_base_mac(member, net4):
    p = h.port(member, net4[0]["id"])
    assert p["mac_address"].startswith("fa:16:3e:")


def test_port_show_update_delete_status_codes(member, net4):
    p = h.port(member, net4[0]["id"])
    url = f"/v2.0/ports/{p['id']}"
    assert member.get(url)[0] == 200
    status, body = member.put(url, {"port": {"device_id": "vm1", "device_owner": "compute:nova",
                                             "admin_state_up": False, "name": "n"}})
    assert status == 200
    got = body["port"]
    assert (got["device_id"], got["device_owner"], got["admin_state_up"], got["name"]) == \
        ("vm1", "compute:nova", False, "n")
    assert member.put(url, {"port": {"device_owner": ""}})[0] == 200
    assert member.delete(url) == (204, None)
    msg = h.error(member.get(url), 404, "PortNotFound")
    assert msg == f"Port {p['id']} could not be found."


def test_member_cannot_delete_a_compute_port_as_upstream(member, net4):
    p = h.port(member, net4[0]["id"])
    member.put(f"/v2.0/ports/{p['id']}", {"port": {"device_owner": "compute:nova"}})
    msg = h.error(member.delete(f"/v2.0/ports/{p['id']}"), 403, "PolicyNotAuthorized")
    assert msg == "rule:delete_port is disallowed by policy"


def test_port_status_is_read_only(member, net4):
    p = h.port(member, net4[0]["id"])
    h.error(member.put(f"/v2.0/ports/{p['id']}", {"port": {"status": "ACTIVE"}}), 400)
    assert member.get(f"/v2.0/ports/{p['id']}")[1]["port"]["status"] == "DOWN"


def test_fixed_ip_by_subnet_id(member, net4):
    net, sub = net4
    p = h.port(member, net["id"], fixed_ips=[{"subnet_id": sub["id"]}])
    assert p["fixed_ips"][0]["subnet_id"] == sub["id"]


def test_fixed_ip_by_address_outside_pool_but_inside_cidr(member, net4):
    net, sub = net4
    p = h.port(member, net["id"], fixed_ips=[{"ip_address": "10.0.0.200"}])
    assert p["fixed_ips"] == [{"subnet_id": sub["id"], "ip_address": "10.0.0.200"}]


def test_fixed_ip_by_subnet_and_address(member, net4):
    net, sub = net4
    p = h.port(member, net["id"], fixed_ips=[{"subnet_id": sub["id"], "ip_address": "10.0.0.201"}])
    assert p["fixed_ips"] == [{"subnet_id": sub["id"], "ip_address": "10.0.0.201"}]


def test_two_fixed_ips_from_one_subnet(member, net4):
    net, sub = net4
    p = h.port(member, net["id"], fixed_ips=[{"subnet_id": sub["id"]}, {"subnet_id": sub["id"]}])
    assert len(set(ips(p))) == 2


def test_empty_fixed_ips_gives_no_address(member, net4):
    assert h.port(member, net4[0]["id"], fixed_ips=[])["fixed_ips"] == []


def test_taken_address_is_409_ip_address_already_allocated(member, net4):
    net, sub = net4
    h.port(member, net["id"], fixed_ips=[{"ip_address": "10.0.0.15"}])
    msg = h.error(post(member, net["id"], fixed_ips=[{"ip_address": "10.0.0.15"}]), 409,
                  "IpAddressAlreadyAllocated")
    assert msg == f"IP address 10.0.0.15 already allocated in subnet {sub['id']}"


def test_address_outside_every_subnet_is_400_invalid_ip_for_network(member, net4):
    msg = h.error(post(member, net4[0]["id"], fixed_ips=[{"ip_address": "10.9.9.9"}]), 400,
                  "InvalidIpForNetwork")
    assert msg == ("IP address 10.9.9.9 is not a valid IP for any of the subnets on the "
                   "specified network.")


def test_network_address_is_400_invalid_ip_for_subnet(member, net4):
    net, sub = net4
    h.error(post(member, net["id"], fixed_ips=[{"subnet_id": sub["id"], "ip_address": "10.0.0.0"}]),
            400, "InvalidIpForSubnet")


def test_unknown_subnet_in_fixed_ips_is_404_subnet_not_found(member, net4):
    h.error(post(member, net4[0]["id"], fixed_ips=[{"subnet_id": h.ZERO_UUID}]), 404,
            "SubnetNotFound")


def test_subnet_of_another_network_in_fixed_ips_is_400(member, net4):
    other = h.network(member)
    sub = h.subnet(member, other["id"], "10.77.0.0/24")
    h.error(post(member, net4[0]["id"], fixed_ips=[{"subnet_id": sub["id"]}]), 400,
            "InvalidInput")


def test_port_on_unknown_network_is_404(member):
    h.error(post(member, h.ZERO_UUID), 404, "NetworkNotFound")


def test_port_on_full_subnet_is_409_ip_address_generation_failure(member):
    net = h.network(member)
    h.subnet(member, net["id"], "10.0.0.0/29")  # 10.0.0.2 - 10.0.0.6
    for _ in range(5):
        h.port(member, net["id"])
    msg = h.error(post(member, net["id"]), 409, "IpAddressGenerationFailure")
    assert msg == f"No more IP addresses available on network {net['id']}."


def test_port_on_network_without_subnets_has_no_addresses(member):
    net = h.network(member)
    assert h.port(member, net["id"])["fixed_ips"] == []


def test_explicit_duplicate_mac_is_409_mac_address_in_use(member, net4):
    net = net4[0]
    p = h.port(member, net["id"])
    msg = h.error(post(member, net["id"], mac_address=p["mac_address"]), 409, "MacAddressInUse")
    assert msg == (f"Unable to complete operation for network {net['id']}. The mac address "
                   f"{p['mac_address']} is in use.")


def test_same_mac_on_another_network_is_allowed(member, net4):
    p = h.port(member, net4[0]["id"])
    other = h.network(member)
    assert h.port(member, other["id"], mac_address=p["mac_address"])["mac_address"] == \
        p["mac_address"]


def test_updating_mac_to_one_in_use_is_409(member, admin, net4):
    a, b = h.port(member, net4[0]["id"]), h.port(member, net4[0]["id"])
    h.error(admin.put(f"/v2.0/ports/{b['id']}", {"port": {"mac_address": a["mac_address"]}}),
            409, "MacAddressInUse")


@pytest.mark.parametrize("mac", ["00:00:00:00:00:00", "fa:16:3e:00:00", "zz:16:3e:00:00:01"])
def test_invalid_mac_is_400(member, net4, mac):
    h.error(post(member, net4[0]["id"], mac_address=mac), 400)


def test_multicast_mac_is_accepted_as_upstream(member, net4):
    assert h.port(member, net4[0]["id"], mac_address="01:00:00:00:00:00")["mac_address"] == \
        "01:00:00:00:00:00"


def test_update_fixed_ips_replaces_address(member, net4):
    net, sub = net4
    p = h.port(member, net["id"])
    status, body = member.put(f"/v2.0/ports/{p['id']}",
                              {"port": {"fixed_ips": [{"ip_address": "10.0.0.150"}]}})
    assert status == 200 and ips(body["port"]) == ["10.0.0.150"]
    # the old address is free again
    h.port(member, net["id"], fixed_ips=[{"ip_address": ips(p)[0]}])


@pytest.mark.parametrize("cidr", ["10.0.0.0/24", "2001:db8:9::/64"])
def test_asking_again_for_a_subnet_adds_a_second_address_there(member, cidr):
    """Upstream's test_add_ips_to_port / test_add_ipv6_ips_to_port: the
    port's fixed_ips with one more entry naming only the subnet keeps the
    address it had and allocates another on the same subnet."""
    net = h.network(member)
    sub = h.subnet(member, net["id"], cidr)
    p = h.port(member, net["id"])
    asked = p["fixed_ips"] + [{"subnet_id": sub["id"]}]
    status, body = member.put(f"/v2.0/ports/{p['id']}", {"port": {"fixed_ips": asked}})
    assert status == 200, body
    got = body["port"]["fixed_ips"]
    assert [f["subnet_id"] for f in got] == [sub["id"], sub["id"]]
    assert ips(p)[0] in ips(body["port"]) and len(set(ips(body["port"]))) == 2


def test_subnet_only_requests_reuse_each_held_address_once(member, net4):
    """Two entries by subnet alone on a port holding one address there: the
    held address is kept once and one new address is added."""
    net, sub = net4
    p = h.port(member, net["id"])
    asked = [{"subnet_id": sub["id"]}, {"subnet_id": sub["id"]}]
    status, body = member.put(f"/v2.0/ports/{p['id']}", {"port": {"fixed_ips": asked}})
    assert status == 200, body
    assert ips(p)[0] in ips(body["port"]) and len(set(ips(body["port"]))) == 2


# -- automatic allocation with several subnets -----------------------------------

@pytest.fixture
def dual(member):
    net = h.network(member)
    subs = {
        "v4a": h.subnet(member, net["id"], "10.0.0.0/24"),
        "v4b": h.subnet(member, net["id"], "10.1.0.0/24"),
        "slaac": h.subnet(member, net["id"], "2001:db8:1::/64", ipv6_ra_mode="slaac",
                          ipv6_address_mode="slaac"),
        "stateless": h.subnet(member, net["id"], "2001:db8:3::/64",
                              ipv6_address_mode="dhcpv6-stateless"),
        "stateful_a": h.subnet(member, net["id"], "2001:db8:4::/64",
                               ipv6_ra_mode="dhcpv6-stateful"),
        "stateful_b": h.subnet(member, net["id"], "2001:db8:2::/64"),
    }
    return net, subs


def test_auto_allocation_one_ipv4_one_stateful_ipv6_and_every_slaac(member, dual):
    net, subs = dual
    p = h.port(member, net["id"], mac_address="fa:16:3e:00:00:01")
    by_subnet = {f["subnet_id"]: f["ip_address"] for f in p["fixed_ips"]}
    assert len(p["fixed_ips"]) == 4
    assert len({subs["v4a"]["id"], subs["v4b"]["id"]} & set(by_subnet)) == 1
    assert len({subs["stateful_a"]["id"], subs["stateful_b"]["id"]} & set(by_subnet)) == 1
    assert by_subnet[subs["slaac"]["id"]] == "2001:db8:1:0:f816:3eff:fe00:1"
    assert by_subnet[subs["stateless"]["id"]] == "2001:db8:3:0:f816:3eff:fe00:1"


def test_router_interface_port_gets_no_slaac_address(admin, dual):
    net, subs = dual
    p = h.port(admin, net["id"], device_owner="network:router_interface")
    assert subs["slaac"]["id"] not in [f["subnet_id"] for f in p["fixed_ips"]]
    assert len(p["fixed_ips"]) == 2


def test_slaac_by_subnet_id_gives_eui64_address_plus_other_auto_subnets(member, dual):
    """Upstream adds every auto-address subnet even when fixed_ips names one."""
    net, subs = dual
    p = h.port(member, net["id"], mac_address="fa:16:3e:00:00:09",
               fixed_ips=[{"subnet_id": subs["slaac"]["id"]}])
    assert ips(p) == ["2001:db8:1:0:f816:3eff:fe00:9", "2001:db8:3:0:f816:3eff:fe00:9"]


def test_removing_ipv4_fixed_ips_keeps_slaac_addresses(member, dual):
    net, subs = dual
    p = h.port(member, net["id"], fixed_ips=[{"subnet_id": subs["v4a"]["id"]}])
    status, body = member.put(f"/v2.0/ports/{p['id']}", {"port": {"fixed_ips": []}})
    assert status == 200
    assert sorted(f["subnet_id"] for f in body["port"]["fixed_ips"]) == sorted(
        [subs["slaac"]["id"], subs["stateless"]["id"]])


def test_deleting_slaac_subnet_with_ports_releases_their_addresses(member, dual):
    net, subs = dual
    p = h.port(member, net["id"], fixed_ips=[{"subnet_id": subs["v4a"]["id"]}])
    assert member.delete(f"/v2.0/subnets/{subs['slaac']['id']}")[0] == 204
    after = member.get(f"/v2.0/ports/{p['id']}")[1]["port"]
    assert subs["slaac"]["id"] not in [f["subnet_id"] for f in after["fixed_ips"]]
    h.error(member.delete(f"/v2.0/subnets/{subs['v4a']['id']}"), 409, "SubnetInUse")


def test_explicit_address_on_slaac_subnet_is_400(member, dual):
    net, subs = dual
    msg = h.error(post(member, net["id"], fixed_ips=[{"subnet_id": subs["slaac"]["id"],
                                                      "ip_address": "2001:db8:1::5"}]),
                  400, "AllocationOnAutoAddressSubnet")
    assert msg == (f"IPv6 address 2001:db8:1::5 cannot be directly assigned to a port on "
                   f"subnet {subs['slaac']['id']} as the subnet is configured for automatic "
                   f"addresses")


def test_member_cannot_change_a_port_mac(member, net4):
    p = h.port(member, net4[0]["id"])
    h.error(member.put(f"/v2.0/ports/{p['id']}", {"port": {"mac_address": "fa:16:3e:00:00:0b"}}),
            403, "PolicyNotAuthorized")


def test_mac_update_moves_slaac_address(member, admin, dual):
    net, subs = dual
    p = h.port(member, net["id"], fixed_ips=[{"subnet_id": subs["v4a"]["id"]}])
    status, body = admin.put(f"/v2.0/ports/{p['id']}",
                              {"port": {"mac_address": "fa:16:3e:00:00:0a"}})
    assert status == 200
    assert ips(body["port"])[1:] == ["2001:db8:1:0:f816:3eff:fe00:a",
                                     "2001:db8:3:0:f816:3eff:fe00:a"]


# -- allowed address pairs and extra DHCP options ---------------------------------

def test_allowed_address_pair_defaults_to_port_mac(member, net4):
    p = h.port(member, net4[0]["id"], allowed_address_pairs=[{"ip_address": "1.2.3.4"}])
    assert p["allowed_address_pairs"] == [{"ip_address": "1.2.3.4",
                                           "mac_address": p["mac_address"]}]


def test_allowed_address_pairs_update_replaces(member, net4):
    p = h.port(member, net4[0]["id"], allowed_address_pairs=[{"ip_address": "1.2.3.4"}])
    pair = {"ip_address": "10.0.0.0/24", "mac_address": "fa:16:3e:11:11:11"}
    status, body = member.put(f"/v2.0/ports/{p['id']}",
                              {"port": {"allowed_address_pairs": [pair]}})
    assert status == 200 and body["port"]["allowed_address_pairs"] == [pair]


def test_allowed_address_pair_without_ip_is_400(member, net4):
    h.error(post(member, net4[0]["id"], allowed_address_pairs=[{"mac_address": "fa:16:3e:1:1:1"}]),
            400)
    h.error(post(member, net4[0]["id"],
                 allowed_address_pairs=[{"mac_address": "fa:16:3e:11:11:11"}]),
            400, "AllowedAddressPairsMissingIP")


def test_extra_dhcp_opts_update_merges_and_null_value_deletes(member, net4):
    opts = [{"opt_name": "a", "opt_value": "1"}, {"opt_name": "b", "opt_value": "2"}]
    p = h.port(member, net4[0]["id"], extra_dhcp_opts=opts)
    assert p["extra_dhcp_opts"] == [{**o, "ip_version": 4} for o in opts]
    url = f"/v2.0/ports/{p['id']}"
    status, body = member.put(url, {"port": {"extra_dhcp_opts": [
        {"opt_name": "a", "opt_value": None}, {"opt_name": "c", "opt_value": "3"}]}})
    assert status == 200
    assert body["port"]["extra_dhcp_opts"] == [{"opt_name": "b", "opt_value": "2", "ip_version": 4},
                                               {"opt_name": "c", "opt_value": "3", "ip_version": 4}]
    status, body = member.put(url, {"port": {"extra_dhcp_opts": [
        {"opt_name": "b", "opt_value": "9"}]}})
    assert body["port"]["extra_dhcp_opts"] == [{"opt_name": "b", "opt_value": "9", "ip_version": 4},
                                               {"opt_name": "c", "opt_value": "3", "ip_version": 4}]


def test_extra_dhcp_opt_without_name_is_400_invalid_input(member, net4):
    msg = h.error(post(member, net4[0]["id"], extra_dhcp_opts=[{"opt_value": "x"}]), 400,
                  "InvalidInput")
    assert msg == "Invalid input for operation: No valid key specs matched for: {'opt_value': 'x'}."


def test_ports_filter_by_fixed_ip_and_mac(member, net4):
    net = net4[0]
    p = h.port(member, net["id"], fixed_ips=[{"ip_address": "10.0.0.150"}])
    h.port(member, net["id"])
    status, body = member.get(f"/v2.0/ports?network_id={net['id']}&fixed_ips=ip_address%3D10.0.0.150")
    assert status == 200 and [x["id"] for x in body["ports"]] == [p["id"]]
    status, body = member.get(f"/v2.0/ports?network_id={net['id']}&mac_address={p['mac_address']}")
    assert [x["id"] for x in body["ports"]] == [p["id"]]


def test_address_not_in_named_subnet_is_400_invalid_ip_for_subnet(member, net4):
    net, sub = net4
    other = h.subnet(member, net["id"], "10.1.0.0/24")
    msg = h.error(post(member, net["id"], fixed_ips=[{"subnet_id": other["id"],
                                                      "ip_address": "10.0.0.30"}]),
                  400, "InvalidIpForSubnet")
    assert msg == "IP address 10.0.0.30 is not a valid IP for the specified subnet."


def test_a_port_may_take_the_gateway_address_as_upstream(member, net4):
    net, sub = net4
    p = h.port(member, net["id"], fixed_ips=[{"ip_address": "10.0.0.1"}])
    assert p["fixed_ips"] == [{"subnet_id": sub["id"], "ip_address": "10.0.0.1"}]


def test_shrinking_pools_leaves_existing_addresses(member, net4):
    net, sub = net4
    p = h.port(member, net["id"], fixed_ips=[{"ip_address": "10.0.0.15"}])
    status, _ = member.put(f"/v2.0/subnets/{sub['id']}", {"subnet": {
        "allocation_pools": [{"start": "10.0.0.30", "end": "10.0.0.40"}]}})
    assert status == 200
    assert ips(member.get(f"/v2.0/ports/{p['id']}")[1]["port"]) == ["10.0.0.15"]
    fresh = h.port(member, net["id"])
    assert netaddr.IPAddress(ips(fresh)[0]) in netaddr.IPRange("10.0.0.30", "10.0.0.40")


def test_port_update_bumps_revision_by_one(member, net4):
    p = h.port(member, net4[0]["id"])
    body = member.put(f"/v2.0/ports/{p['id']}", {"port": {"name": "x"}})[1]["port"]
    assert body["revision_number"] == p["revision_number"] + 1


def test_stateful_ipv6_addresses_come_from_the_start_of_the_pool(member):
    """Upstream picks among the first free addresses, never deep in a /64."""
    net = h.network(member)
    h.subnet(member, net["id"], "2001:db8:9::/64", ipv6_address_mode="dhcpv6-stateful")
    for _ in range(5):
        addr = netaddr.IPAddress(ips(h.port(member, net["id"]))[0])
        assert int(addr) - int(netaddr.IPAddress("2001:db8:9::")) <= 1000


def test_automatic_address_comes_from_the_lowest_id_subnet(member):
    """Upstream orders candidate subnets by id, not by creation time."""
    import time
    net = h.network(member)
    first = h.subnet(member, net["id"], "10.0.0.0/24")
    time.sleep(1.1)  # a later created_at, so creation order and id order differ
    lowest, i = None, 1
    while lowest is None:  # misses are deleted: the subnet quota is 10
        sub = h.subnet(member, net["id"], f"10.{i}.0.0/24")
        lowest = sub if sub["id"] < first["id"] else None
        if lowest is None:
            assert member.delete(f"/v2.0/subnets/{sub['id']}")[0] == 204
        i += 1
    for _ in range(3):
        assert h.port(member, net["id"])["fixed_ips"][0]["subnet_id"] == lowest["id"]

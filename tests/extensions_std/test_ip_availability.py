"""``network-ip-availability`` (and its details) over real HTTP, as upstream 29 counts."""
from __future__ import annotations

import uuid

from tests.api import _helpers as h
from tests.conftest import Client

URL = "/v2.0/network-ip-availabilities"


def availability(client, net_id, **params):
    status, body = client.get(f"{URL}/{net_id}", params=params)
    assert status == 200, body
    return body["network_ip_availability"]


def test_counts_pools_allocations_and_details_per_subnet(admin):
    net = h.network(admin, name=h.unique("ipa"))
    v4 = h.subnet(admin, net["id"], cidr="10.55.0.0/24", name="s4")
    v6 = h.subnet(admin, net["id"], cidr="fd00:55::/64", name="s6")
    h.port(admin, net["id"])
    h.port(admin, net["id"], fixed_ips=[{"subnet_id": v4["id"]}])
    got = availability(admin, net["id"])
    assert (got["network_id"], got["network_name"]) == (net["id"], net["name"])
    assert got["project_id"] == got["tenant_id"] == net["project_id"]
    by_id = {s["subnet_id"]: s for s in got["subnet_ip_availability"]}
    s4, s6 = by_id[v4["id"]], by_id[v6["id"]]
    assert set(s4) == {"subnet_id", "subnet_name", "cidr", "ip_version", "used_ips",
                       "total_ips", "ip_availability_details"}
    assert (s4["subnet_name"], s4["cidr"], s4["ip_version"]) == ("s4", "10.55.0.0/24", 4)
    # the pool 10.55.0.2-254 (gateway excluded); two ports, one has only a v4 address
    assert (s4["total_ips"], s4["used_ips"]) == (253, 2)
    assert s4["ip_availability_details"] == {
        "total_ips_in_subnet": 254, "total_ips_in_allocation_pool": 253,
        "used_ips_in_subnet": 2, "used_ips_in_allocation_pool": 2}
    pool6 = v6["allocation_pools"][0]
    import netaddr
    pool6_size = netaddr.IPRange(pool6["start"], pool6["end"]).size
    assert s6["total_ips"] == pool6_size and s6["used_ips"] == 1
    # exact for a /64, far beyond 64-bit integers once summed
    assert s6["ip_availability_details"]["total_ips_in_subnet"] == 2 ** 64
    assert got["total_ips"] == 253 + pool6_size
    assert got["used_ips"] == 3
    assert got["ip_availability_details"]["total_ips_in_subnet"] == 254 + 2 ** 64


def test_addresses_outside_the_pools_count_only_in_the_subnet(admin):
    net = h.network(admin)
    sub = h.subnet(admin, net["id"], cidr="10.56.0.0/24",
                   allocation_pools=[{"start": "10.56.0.10", "end": "10.56.0.19"}])
    h.port(admin, net["id"], fixed_ips=[{"subnet_id": sub["id"], "ip_address": "10.56.0.200"}])
    h.port(admin, net["id"])
    entry = availability(admin, net["id"])["subnet_ip_availability"][0]
    assert (entry["total_ips"], entry["used_ips"]) == (10, 2)
    assert entry["ip_availability_details"]["used_ips_in_allocation_pool"] == 1
    assert entry["ip_availability_details"]["used_ips_in_subnet"] == 2


def test_network_without_subnets_has_zero_and_no_entries(admin):
    net = h.network(admin)
    got = availability(admin, net["id"])
    assert got["subnet_ip_availability"] == []
    assert (got["total_ips"], got["used_ips"]) == (0, 0)


def test_filters_as_upstream(admin):
    project = uuid.uuid4().hex
    net = h.network(admin, name=h.unique("ipf"), project_id=project)
    h.subnet(admin, net["id"], cidr="10.57.0.0/24", project_id=project)
    h.subnet(admin, net["id"], cidr="fd00:57::/64", project_id=project)
    other = h.network(admin, project_id=project)

    def listed(query):
        status, body = admin.get(f"{URL}?{query}")
        assert status == 200, body
        return body["network_ip_availabilities"]

    assert {i["network_id"] for i in listed(f"project_id={project}")} == {
        net["id"], other["id"]}
    assert {i["network_id"] for i in listed(f"tenant_id={project}")} == {
        net["id"], other["id"]}
    only = listed(f"network_name={net['name']}")
    assert [i["network_id"] for i in only] == [net["id"]]
    v6 = listed(f"project_id={project}&ip_version=6")
    assert [i["network_id"] for i in v6] == [net["id"]]
    assert [s["ip_version"] for s in v6[0]["subnet_ip_availability"]] == [6]
    assert "ip_version" not in v6[0]
    assert listed(f"project_id={project}&ip_version=x") == []
    assert listed(f"network_id={other['id']}")[0]["network_id"] == other["id"]
    trimmed = listed(f"network_id={net['id']}&fields=network_id&fields=total_ips")
    assert trimmed == [{"network_id": net["id"],
                        "total_ips": trimmed[0]["total_ips"]}]
    msg = h.error(admin.get(f"{URL}?subnet_id=x"), 400, "HTTPBadRequest")
    assert msg == "['subnet_id'] is invalid attribute for filtering"


def test_pages_and_sorts_by_network_id(admin):
    project = uuid.uuid4().hex
    ids = sorted(h.network(admin, project_id=project)["id"] for _ in range(3))
    status, body = admin.get(f"{URL}?project_id={project}&sort_key=network_id&sort_dir=asc"
                             f"&limit=2")
    assert status == 200
    assert [i["network_id"] for i in body["network_ip_availabilities"]] == ids[:2]
    nxt = [link for link in body["network_ip_availabilities_links"] if link["rel"] == "next"]
    assert nxt and "/v2.0/network-ip-availabilities?" in nxt[0]["href"]
    status, body = admin.get(f"{URL}?project_id={project}&sort_key=network_id&sort_dir=asc"
                             f"&limit=2&marker={ids[1]}")
    assert [i["network_id"] for i in body["network_ip_availabilities"]] == ids[2:]


def test_admin_only_members_see_nothing(admin, member, server, project_id):
    net = h.network(member)
    status, body = member.get(URL)
    assert status == 200 and body == {"network_ip_availabilities": []}
    msg = h.error(member.get(f"{URL}/{net['id']}"), 404, "HTTPNotFound")
    assert msg == "The resource could not be found."
    reader = Client(server.url, project_id, "reader")
    assert reader.get(URL)[1] == {"network_ip_availabilities": []}
    service = Client(server.url, uuid.uuid4().hex, "service")
    assert service.get(f"{URL}/{net['id']}")[0] == 200
    msg = h.error(admin.get(f"{URL}/{h.ZERO_UUID}"), 404, "NetworkNotFound")
    assert msg == f"Network {h.ZERO_UUID} could not be found."


def test_both_extensions_are_listed(admin):
    aliases = {e["alias"]: e for e in admin.get("/v2.0/extensions")[1]["extensions"]}
    assert aliases["network-ip-availability"]["name"] == "Network IP Availability"
    assert aliases["network-ip-availability-details"]["updated"] == "2025-10-31T00:00:00-00:00"

"""Extra routes (``extraroute``, ``extraroute-atomic``), as upstream Neutron 29."""
from __future__ import annotations

from tests.api import _helpers as h
from tests.l3 import _l3 as l3


def _router_on(member, cidr):
    r = l3.router(member)
    sub = l3.private_subnet(member, cidr)
    l3.add_interface(member, r["id"], subnet_id=sub["id"])
    return r, sub


def test_routes_are_set_shown_and_cleared(member):
    r, sub = _router_on(member, "10.210.0.0/24")
    routes = [{"destination": "192.168.1.0/24", "nexthop": "10.210.0.5"},
              {"destination": "192.168.2.0/24", "nexthop": "10.210.0.6"}]
    status, body = member.put(f"/v2.0/routers/{r['id']}", {"router": {"routes": routes}})
    assert status == 200, body
    assert body["router"]["routes"] == routes
    assert l3.reader_of(member).get(f"/v2.0/routers/{r['id']}")[1]["router"]["routes"] == routes
    status, body = member.put(f"/v2.0/routers/{r['id']}", {"router": {"routes": None}})
    assert status == 200 and body["router"]["routes"] == []


def test_route_refusals(member):
    r, sub = _router_on(member, "10.211.0.0/24")
    url = f"/v2.0/routers/{r['id']}"
    far = [{"destination": "192.168.1.0/24", "nexthop": "10.99.0.5"}]
    msg = h.error(member.put(url, {"router": {"routes": far}}), 400, "InvalidRoutes")
    assert msg == ("Invalid format for routes: [{'destination': '192.168.1.0/24', "
                   "'nexthop': '10.99.0.5'}], the nexthop is not connected with router")
    own = [{"destination": "192.168.1.0/24", "nexthop": "10.211.0.1"}]
    msg = h.error(member.put(url, {"router": {"routes": own}}), 400, "InvalidRoutes")
    assert msg.endswith("the nexthop is used by router")
    dup = [{"destination": "192.168.1.0/24", "nexthop": "10.211.0.5"}] * 2
    msg = h.error(member.put(url, {"router": {"routes": dup}}), 400, "HTTPBadRequest")
    assert msg.startswith("Invalid input for routes. Reason: Duplicate hostroute")
    h.error(member.put(url, {"router": {"routes": [{"destination": "192.168.1.0/24"}]}}),
            400, "HTTPBadRequest")
    msg = h.error(member.put(url, {"router": {"routes": [
        {"destination": "192.168.1.5/24", "nexthop": "10.211.0.5"}]}}), 400, "HTTPBadRequest")
    assert msg == "Invalid input for routes. Reason: '192.168.1.5/24' is not a valid CIDR."
    many = [{"destination": f"192.168.{i}.0/24", "nexthop": "10.211.0.5"} for i in range(31)]
    msg = h.error(member.put(url, {"router": {"routes": many}}), 409, "OverQuota")
    assert msg == "Quota exceeded for resources: ['router_route']."
    assert member.put(url, {"router": {"routes": many[:30]}})[0] == 200
    assert member.get(url)[1]["router"]["routes"] != []


def test_interface_holding_a_nexthop_stays(member):
    r, sub = _router_on(member, "10.212.0.0/24")
    routes = [{"destination": "192.168.1.0/24", "nexthop": "10.212.0.5"}]
    assert member.put(f"/v2.0/routers/{r['id']}", {"router": {"routes": routes}})[0] == 200
    msg = h.error(l3.remove_interface(member, r["id"], subnet_id=sub["id"]), 409,
                  "RouterInterfaceInUseByRoute")
    assert msg == (f"Router interface for subnet {sub['id']} on router {r['id']} cannot be "
                   f"deleted, as it is required by one or more routes.")
    assert member.put(f"/v2.0/routers/{r['id']}", {"router": {"routes": []}})[0] == 200
    assert l3.remove_interface(member, r["id"], subnet_id=sub["id"])[0] == 200


def test_atomic_add_and_remove(member):
    r, sub = _router_on(member, "10.213.0.0/24")
    a = {"destination": "192.168.1.0/24", "nexthop": "10.213.0.5"}
    b = {"destination": "192.168.1.0/24", "nexthop": "10.213.0.6"}
    url = f"/v2.0/routers/{r['id']}"
    status, body = member.put(f"{url}/add_extraroutes", {"router": {"routes": [a]}})
    assert status == 200, body
    assert body["router"]["routes"] == [a]
    status, body = member.put(f"{url}/add_extraroutes", {"router": {"routes": [b, a]}})
    assert sorted(map(str, body["router"]["routes"])) == sorted(map(str, [a, b]))
    # removing what is not there is fine: the end state counts
    status, body = member.put(f"{url}/remove_extraroutes", {"router": {"routes": [
        a, {"destination": "192.168.7.0/24", "nexthop": "10.213.0.6"}]}})
    assert status == 200 and body["router"]["routes"] == [b]
    msg = h.error(member.put(f"{url}/add_extraroutes", {"router": {"routes": [
        {"destination": "192.168.3.0/24", "nexthop": "10.99.0.5"}]}}), 400, "InvalidRoutes")
    assert "the nexthop is not connected with router" in msg
    h.error(member.put(f"{url}/add_extraroutes", {"routes": []}), 400, "HTTPBadRequest")
    h.error(l3.reader_of(member).put(f"{url}/add_extraroutes", {"router": {"routes": [a]}}),
            403, "PolicyNotAuthorized")
    assert member.get(url)[1]["router"]["routes"] == [b]

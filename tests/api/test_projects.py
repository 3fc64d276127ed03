"""Several projects on one server (noauth identity headers): what each sees
and may do, as upstream's default policies decide."""
from __future__ import annotations

from tests.api import _helpers as h


def test_other_projects_network_is_404_everywhere(member, other):
    net = h.network(member)
    url = f"/v2.0/networks/{net['id']}"
    for result in (other.get(url), other.put(url, {"network": {"name": "x"}}), other.delete(url)):
        h.error(result, 404, "NetworkNotFound")
    assert net["id"] not in [n["id"] for n in other.get("/v2.0/networks")[1]["networks"]]
    assert member.get(url)[1]["network"]["name"] == net["name"]


def test_other_projects_subnet_and_port_are_404(member, other):
    net = h.network(member)
    sub = h.subnet(member, net["id"])
    p = h.port(member, net["id"])
    h.error(other.get(f"/v2.0/subnets/{sub['id']}"), 404, "SubnetNotFound")
    h.error(other.get(f"/v2.0/ports/{p['id']}"), 404, "PortNotFound")


def test_port_on_other_projects_private_network_is_404(member, other):
    net = h.network(member)
    h.subnet(member, net["id"])
    h.error(other.post("/v2.0/ports", {"port": {"network_id": net["id"]}}), 404,
            "NetworkNotFound")


def test_subnet_on_other_projects_private_network_is_refused(member, other):
    """Upstream answers 403 (rule:create_subnet); the brief asked for 404."""
    net = h.network(member)
    code, body = other.post("/v2.0/subnets", {"subnet": {
        "network_id": net["id"], "ip_version": 4, "cidr": "10.0.0.0/24"}})
    assert code in (403, 404), body
    assert member.get(f"/v2.0/networks/{net['id']}")[1]["network"]["subnets"] == []


def test_subnet_on_other_projects_private_network_is_403_as_upstream(member, other):
    net = h.network(member)
    h.error(other.post("/v2.0/subnets", {"subnet": {
        "network_id": net["id"], "ip_version": 4, "cidr": "10.0.0.0/24"}}), 403,
        "PolicyNotAuthorized")


def test_member_cannot_set_shared(member):
    msg = h.error(member.post("/v2.0/networks", {"network": {"name": "s", "shared": True}}),
                  403, "PolicyNotAuthorized")
    assert "create_network:shared" in msg
    net = h.network(member)
    h.error(member.put(f"/v2.0/networks/{net['id']}", {"network": {"shared": True}}), 403,
            "PolicyNotAuthorized")
    assert member.get(f"/v2.0/networks/{net['id']}")[1]["network"]["shared"] is False


def test_member_may_ask_for_shared_false(member):
    assert h.network(member, shared=False)["shared"] is False


def test_shared_network_is_visible_and_usable_by_others(admin, member, other, project_id):
    net = h.network(admin, shared=True, project_id=project_id)
    h.subnet(member, net["id"])
    assert other.get(f"/v2.0/networks/{net['id']}")[0] == 200
    assert net["id"] in [n["id"] for n in other.get("/v2.0/networks?shared=true")[1]["networks"]]
    p = h.port(other, net["id"])
    assert len(p["fixed_ips"]) == 1
    # the network owner sees ports on its network; the port owner keeps control
    assert member.get(f"/v2.0/ports/{p['id']}")[0] == 200
    h.error(other.put(f"/v2.0/networks/{net['id']}", {"network": {"name": "x"}}), 403)
    h.error(other.delete(f"/v2.0/networks/{net['id']}"), 403)


def test_unsharing_a_network_used_by_others_is_409(admin, member, other, project_id):
    net = h.network(admin, shared=True, project_id=project_id, name="used")
    h.subnet(member, net["id"])
    h.port(other, net["id"])
    msg = h.error(admin.put(f"/v2.0/networks/{net['id']}", {"network": {"shared": False}}),
                  409, "InvalidSharedSetting")
    assert msg == ("Unable to reconfigure sharing settings for network used. Multiple "
                   "projects are using it.")


def test_subnets_of_shared_network_are_visible_to_others(admin, member, other, project_id):
    net = h.network(admin, shared=True, project_id=project_id)
    sub = h.subnet(member, net["id"])
    assert other.get(f"/v2.0/subnets/{sub['id']}")[0] == 200


def test_member_cannot_create_for_another_project(member, other):
    code, body = member.post("/v2.0/networks", {"network": {"name": "x",
                                                            "project_id": "someone-else"}})
    assert code in (400, 403), body


def test_admin_creates_for_another_project(admin, project_id, member):
    net = h.network(admin, project_id=project_id)
    assert net["project_id"] == net["tenant_id"] == project_id
    assert member.get(f"/v2.0/networks/{net['id']}")[0] == 200


def test_list_shows_only_own_and_shared(member, other):
    mine = h.network(member)
    theirs = h.network(other)
    ids = [n["id"] for n in member.get("/v2.0/networks")[1]["networks"]]
    assert mine["id"] in ids and theirs["id"] not in ids


def test_subnet_on_other_projects_shared_network_is_403_as_upstream(admin, member, other,
                                                                     project_id):
    net = h.network(admin, shared=True, project_id=project_id)
    h.error(other.post("/v2.0/subnets", {"subnet": {
        "network_id": net["id"], "ip_version": 4, "cidr": "10.1.0.0/24"}}), 403,
        "PolicyNotAuthorized")


def test_member_creating_for_another_project_is_400_as_upstream(member):
    h.error(member.post("/v2.0/networks", {"network": {"name": "x", "project_id": "else"}}),
            400, "HTTPBadRequest")

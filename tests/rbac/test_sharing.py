"""What sharing means: visibility, per-caller ``shared``, ports, and removal rules.

A network is visible to its owner and to every project an
``access_as_shared`` entry targets (or to all with ``*``); ``shared`` is
true for a caller when such an entry covers it. Removing an entry a port
depends on is refused. All as observed on upstream Neutron 29.
"""
from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.api import _helpers as h
from tests.conftest import Client, Server
from tests.rbac.test_rbac_api import ids, project_of, rbac, share


@pytest.fixture
def third(server: Server) -> Client:
    return Client(server.url, uuid.uuid4().hex, "member")


def shared_flag(client: Client, net_id: str) -> Any:
    status, body = client.get(f"/v2.0/networks/{net_id}")
    assert status == 200, body
    return body["network"]["shared"]


def in_list(client: Client, path: str, key: str, rid: str) -> bool:
    return rid in ids(client.get(path), key)


def test_sharing_with_one_project(admin, member, other, third):
    net = h.network(member)
    sub = h.subnet(member, net["id"], "10.20.0.0/24")
    share(member, net["id"], project_of(other))
    # per caller: the target sees shared=true, the owner and the admin false
    assert shared_flag(other, net["id"]) is True
    assert shared_flag(member, net["id"]) is False
    assert shared_flag(admin, net["id"]) is False
    h.error(third.get(f"/v2.0/networks/{net['id']}"), 404, "NetworkNotFound")
    # lists and the shared filter follow the same view
    assert in_list(other, "/v2.0/networks?shared=true", "networks", net["id"])
    assert not in_list(other, "/v2.0/networks?shared=false", "networks", net["id"])
    assert in_list(member, "/v2.0/networks?shared=false", "networks", net["id"])
    assert not in_list(member, "/v2.0/networks?shared=true", "networks", net["id"])
    assert not in_list(third, "/v2.0/networks", "networks", net["id"])
    # subnets of the network
    assert other.get(f"/v2.0/subnets/{sub['id']}")[0] == 200
    h.error(third.get(f"/v2.0/subnets/{sub['id']}"), 404, "SubnetNotFound")
    assert in_list(other, "/v2.0/subnets?shared=true", "subnets", sub["id"])
    assert not in_list(other, "/v2.0/subnets?shared=false", "subnets", sub["id"])
    assert in_list(member, "/v2.0/subnets?shared=false", "subnets", sub["id"])
    assert not in_list(third, "/v2.0/subnets", "subnets", sub["id"])
    assert "shared" not in other.get(f"/v2.0/subnets/{sub['id']}")[1]["subnet"]
    # the target may put ports on it, not subnets; a third project neither
    port = h.port(other, net["id"])
    assert port["fixed_ips"][0]["subnet_id"] == sub["id"]
    h.error(other.post("/v2.0/subnets", {"subnet": {"network_id": net["id"], "ip_version": 4,
                                                    "cidr": "10.21.0.0/24"}}),
            403, "PolicyNotAuthorized")
    h.error(third.post("/v2.0/ports", {"port": {"network_id": net["id"]}}), 404,
            "NetworkNotFound")
    # the owner sees the target's port on its network; the third project does not
    assert member.get(f"/v2.0/ports/{port['id']}")[0] == 200
    h.error(third.get(f"/v2.0/ports/{port['id']}"), 404, "PortNotFound")
    # the target still cannot change the network
    h.error(other.put(f"/v2.0/networks/{net['id']}", {"network": {"name": "x"}}), 403)
    h.error(other.delete(f"/v2.0/networks/{net['id']}"), 403)


def test_wildcard_shares_with_everyone(admin, member, other, third):
    net = h.network(member)
    share(admin, net["id"], "*")
    for client in (admin, member, other, third):
        assert shared_flag(client, net["id"]) is True
    h.port(third, net["id"])


def test_shared_true_is_a_wildcard_entry_owned_by_the_network_project(admin, member,
                                                                      project_id):
    net = h.network(admin, shared=True, project_id=project_id)
    assert net["shared"] is True
    status, body = member.get(f"/v2.0/rbac-policies?object_id={net['id']}")
    assert status == 200
    [entry] = body["rbac_policies"]
    assert (entry["target_tenant"], entry["project_id"], entry["action"]) == (
        "*", project_id, "access_as_shared")
    # sharing again does not add a second entry
    assert admin.put(f"/v2.0/networks/{net['id']}", {"network": {"shared": True}})[0] == 200
    assert len(admin.get(f"/v2.0/rbac-policies?object_id={net['id']}")[1]["rbac_policies"]) == 1
    # the owner may delete that entry, which unshares the network
    assert member.delete(f"/v2.0/rbac-policies/{entry['id']}")[0] == 204
    assert shared_flag(member, net["id"]) is False


def test_shared_false_removes_only_wildcard_entries(admin, member, other):
    net = h.network(admin, shared=True, project_id=project_of(member))
    specific = share(member, net["id"], project_of(other))
    status, body = admin.put(f"/v2.0/networks/{net['id']}", {"network": {"shared": False}})
    assert status == 200 and body["network"]["shared"] is False
    left = ids(admin.get(f"/v2.0/rbac-policies?object_id={net['id']}"), "rbac_policies")
    assert left == [specific["id"]]
    assert shared_flag(other, net["id"]) is True


def test_removing_an_entry_a_port_depends_on_is_409(member, other):
    net = h.network(member, name="dep")
    h.subnet(member, net["id"], "10.30.0.0/24")
    pol = share(member, net["id"], project_of(other))
    h.port(other, net["id"])
    msg = h.error(member.delete(f"/v2.0/rbac-policies/{pol['id']}"), 409, "RbacPolicyInUse")
    assert msg == (f"RBAC policy on object {net['id']} cannot be removed because other "
                   f"objects depend on it.\nDetails: Unable to reconfigure sharing settings "
                   f"for network {net['id']}. Multiple projects are using it.")
    # retargeting removes the old target's access too
    h.error(member.put(f"/v2.0/rbac-policies/{pol['id']}",
                       {"rbac_policy": {"target_tenant": uuid.uuid4().hex}}),
            409, "RbacPolicyInUse")
    assert shared_flag(other, net["id"]) is True


def test_a_wildcard_covers_a_removed_specific_entry(admin, member, other):
    net = h.network(member)
    h.subnet(member, net["id"], "10.31.0.0/24")
    pol = share(member, net["id"], project_of(other))
    h.port(other, net["id"])
    star = share(admin, net["id"], "*")
    assert member.delete(f"/v2.0/rbac-policies/{pol['id']}")[0] == 204
    # now the wildcard is what the port depends on
    h.error(admin.delete(f"/v2.0/rbac-policies/{star['id']}"), 409, "RbacPolicyInUse")
    msg = h.error(admin.put(f"/v2.0/networks/{net['id']}", {"network": {"shared": False}}),
                  409, "InvalidSharedSetting")
    assert msg == (f"Unable to reconfigure sharing settings for network {net['name']}. "
                   "Multiple projects are using it.")


def test_a_specific_entry_covers_a_removed_wildcard(admin, member, other):
    net = h.network(admin, shared=True, project_id=project_of(member))
    h.subnet(member, net["id"], "10.32.0.0/24")
    h.port(other, net["id"])
    share(member, net["id"], project_of(other))
    assert admin.put(f"/v2.0/networks/{net['id']}", {"network": {"shared": False}})[0] == 200


def test_owner_and_network_device_ports_do_not_block(admin, member, other):
    net = h.network(admin, shared=True, project_id=project_of(member))
    h.subnet(member, net["id"], "10.33.0.0/24")
    h.port(member, net["id"])
    for owner in ("network:dhcp", "network:router_interface", "network:router_gateway",
                  "network:floatingip"):
        h.port(admin, net["id"], project_id=project_of(other), device_owner=owner)
    assert admin.put(f"/v2.0/networks/{net['id']}", {"network": {"shared": False}})[0] == 200


def test_other_projects_ports_do_not_block_removing_someone_elses_entry(admin, member, other,
                                                                          third):
    net = h.network(member)
    h.subnet(member, net["id"], "10.34.0.0/24")
    share(member, net["id"], project_of(other))
    pol = share(member, net["id"], project_of(third))
    h.port(other, net["id"])
    assert member.delete(f"/v2.0/rbac-policies/{pol['id']}")[0] == 204


def test_unsharing_unused_network_and_access_goes_away(member, other):
    net = h.network(member)
    pol = share(member, net["id"], project_of(other))
    assert member.delete(f"/v2.0/rbac-policies/{pol['id']}")[0] == 204
    h.error(other.get(f"/v2.0/networks/{net['id']}"), 404, "NetworkNotFound")
    h.error(other.post("/v2.0/ports", {"port": {"network_id": net["id"]}}), 404,
            "NetworkNotFound")


def test_unknown_action_does_not_share(member, other):
    net = h.network(member)
    h.error(rbac(member, net["id"], project_of(other), "access_as_foo"), 400)
    h.error(other.get(f"/v2.0/networks/{net['id']}"), 404, "NetworkNotFound")

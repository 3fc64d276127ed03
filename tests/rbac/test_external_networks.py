"""``external-net``: ``router:external`` and ``access_as_external`` entries.

A network is external while it has ``access_as_external`` entries, and is
visible to every project they target (``*`` or one project), with
``router:external: true``; so are its subnets. Setting the attribute is
admin-only; ``true`` creates a ``*`` entry owned by the network's project,
``false`` removes every external entry. Removing the last entry through
``/v2.0/rbac-policies`` makes the network internal again. All as observed
on upstream Neutron 29.
"""
from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.api import _helpers as h
from tests.conftest import Client, Server
from tests.rbac.test_rbac_api import ids, project_of, rbac

EXT = "router:external"


@pytest.fixture
def third(server: Server) -> Client:
    return Client(server.url, uuid.uuid4().hex, "member")


def entries(admin: Client, net_id: str) -> list[tuple[str, str]]:
    status, body = admin.get(f"/v2.0/rbac-policies?object_id={net_id}")
    assert status == 200, body
    return sorted((e["action"], e["target_tenant"]) for e in body["rbac_policies"])


def test_extension_listed(admin):
    status, body = admin.get("/v2.0/extensions")
    assert status == 200
    ext = {e["alias"]: e for e in body["extensions"]}["external-net"]
    assert ext["name"] == "Neutron external network"
    assert ext["updated"] == "2013-01-14T10:00:00-00:00"


def test_external_network_seen_by_every_project(admin, member, other):
    net = h.network(admin, **{EXT: True})
    assert net[EXT] is True and net["shared"] is False
    assert entries(admin, net["id"]) == [("access_as_external", "*")]
    sub = h.subnet(admin, net["id"], "10.77.0.0/24")
    status, body = other.get(f"/v2.0/networks/{net['id']}")
    assert status == 200, body
    assert body["network"][EXT] is True and body["network"]["shared"] is False
    # its subnets too, in lists and one by one (the attribute stays hidden)
    assert sub["id"] in ids(other.get(f"/v2.0/subnets?network_id={net['id']}"), "subnets")
    status, body = other.get(f"/v2.0/subnets/{sub['id']}")
    assert status == 200, body
    # the filter, as the caller sees the attribute
    assert net["id"] in ids(other.get("/v2.0/networks?router:external=True"), "networks")
    assert net["id"] not in ids(other.get("/v2.0/networks?router:external=False"),
                                "networks")
    own = h.network(member)
    assert own[EXT] is False
    assert own["id"] in ids(member.get("/v2.0/networks?router:external=False"), "networks")
    assert own["id"] not in ids(member.get("/v2.0/networks?router:external=True"),
                                "networks")
    # not a place for other projects' ports (create_port policy)
    assert other.post("/v2.0/ports", {"port": {"network_id": net["id"]}})[0] == 403
    # setting it again adds nothing; unsetting removes visibility
    assert admin.put(f"/v2.0/networks/{net['id']}", {"network": {EXT: True}})[0] == 200
    assert entries(admin, net["id"]) == [("access_as_external", "*")]
    status, body = admin.put(f"/v2.0/networks/{net['id']}", {"network": {EXT: False}})
    assert status == 200 and body["network"][EXT] is False
    assert entries(admin, net["id"]) == []
    h.error(other.get(f"/v2.0/networks/{net['id']}"), 404, "NetworkNotFound")
    h.error(other.get(f"/v2.0/subnets/{sub['id']}"), 404, "SubnetNotFound")
    assert admin.delete(f"/v2.0/networks/{net['id']}")[0] == 204


def test_members_cannot_set_router_external(member):
    h.error(member.post("/v2.0/networks", {"network": {EXT: True}}), 403,
            "PolicyNotAuthorized")
    net = h.network(member, **{EXT: False})  # the default is no privilege
    h.error(member.put(f"/v2.0/networks/{net['id']}", {"network": {EXT: True}}), 403,
            "PolicyNotAuthorized")


def test_targeted_entry_by_the_owner(admin, member, other, third):
    net = h.network(member)
    h.error(rbac(member, net["id"], "*", "access_as_external"), 403, "PolicyNotAuthorized")
    pol = h.created(rbac(member, net["id"], project_of(other), "access_as_external"),
                    "rbac_policy")
    assert pol["action"] == "access_as_external"
    h.error(rbac(member, net["id"], project_of(other), "access_as_external"), 409)
    # external for everyone who sees it, visible only to the target
    for client in (member, other, admin):
        status, body = client.get(f"/v2.0/networks/{net['id']}")
        assert status == 200 and body["network"][EXT] is True, body
    assert net["id"] in ids(other.get("/v2.0/networks?router:external=True"), "networks")
    h.error(third.get(f"/v2.0/networks/{net['id']}"), 404, "NetworkNotFound")
    assert net["id"] not in ids(third.get("/v2.0/networks"), "networks")
    # the last entry gone: internal again, and hidden from the target
    assert member.delete(f"/v2.0/rbac-policies/{pol['id']}")[0] == 204
    assert member.get(f"/v2.0/networks/{net['id']}")[1]["network"][EXT] is False
    h.error(other.get(f"/v2.0/networks/{net['id']}"), 404, "NetworkNotFound")


def test_admin_entries_and_unset(admin, other):
    net = h.network(admin)
    h.created(rbac(admin, net["id"], project_of(other), "access_as_external"), "rbac_policy")
    h.created(rbac(admin, net["id"], "*", "access_as_external"), "rbac_policy")
    assert admin.get(f"/v2.0/networks/{net['id']}")[1]["network"][EXT] is True
    # false drops every external entry, targeted ones included
    assert admin.put(f"/v2.0/networks/{net['id']}", {"network": {EXT: False}})[0] == 200
    assert entries(admin, net["id"]) == []


def gateway(client: Client, net_id: str) -> tuple[int, Any]:
    return client.post("/v2.0/routers", {"router": {
        "name": "gw", "external_gateway_info": {"network_id": net_id}}})


def test_routers_with_gateways_keep_it_external(admin, other):
    """Upstream counts every router with its gateway on the network against
    the ``*`` entry, the owner's too; ordinary ports never depend on it."""
    net = h.network(admin, **{EXT: True})
    h.subnet(admin, net["id"], "10.78.0.0/24")
    plain = h.port(admin, net["id"], project_id=project_of(other))
    router = h.created(gateway(other, net["id"]), "router")
    pol = admin.get(f"/v2.0/rbac-policies?object_id={net['id']}")[1]["rbac_policies"][0]
    msg = h.error(admin.delete(f"/v2.0/rbac-policies/{pol['id']}"), 409, "RbacPolicyInUse")
    assert msg.endswith("There are routers attached to this network that depend on this "
                        "policy for access.")
    h.error(admin.put(f"/v2.0/networks/{net['id']}", {"network": {EXT: False}}), 409,
            "ExternalNetworkInUse")
    assert other.delete(f"/v2.0/routers/{router['id']}")[0] == 204
    own = h.created(gateway(admin, net["id"]), "router")
    h.error(admin.delete(f"/v2.0/rbac-policies/{pol['id']}"), 409, "RbacPolicyInUse")
    h.error(admin.put(f"/v2.0/networks/{net['id']}", {"network": {EXT: False}}), 409,
            "ExternalNetworkInUse")
    assert admin.delete(f"/v2.0/routers/{own['id']}")[0] == 204
    assert admin.delete(f"/v2.0/rbac-policies/{pol['id']}")[0] == 204
    assert admin.get(f"/v2.0/networks/{net['id']}")[1]["network"][EXT] is False
    assert admin.delete(f"/v2.0/ports/{plain['id']}")[0] == 204


def test_delete_policies_while_project_attached_to_net(admin, other):
    """neutron-tempest-plugin's test of the same name: a project's router
    holds the entry giving it access, ``*`` or its own."""
    net = h.network(admin)
    h.subnet(admin, net["id"], "10.78.1.0/24", enable_dhcp=False)
    wildcard = h.created(rbac(admin, net["id"], "*", "access_as_external"), "rbac_policy")
    router = h.created(gateway(other, net["id"]), "router")
    h.error(admin.delete(f"/v2.0/rbac-policies/{wildcard['id']}"), 409, "RbacPolicyInUse")
    mine = h.created(rbac(admin, net["id"], project_of(other), "access_as_external"),
                     "rbac_policy")
    assert admin.delete(f"/v2.0/rbac-policies/{wildcard['id']}")[0] == 204
    h.error(admin.delete(f"/v2.0/rbac-policies/{mine['id']}"), 409, "RbacPolicyInUse")
    wildcard = h.created(rbac(admin, net["id"], "*", "access_as_external"), "rbac_policy")
    assert admin.delete(f"/v2.0/rbac-policies/{mine['id']}")[0] == 204
    assert admin.delete(f"/v2.0/routers/{router['id']}")[0] == 204
    assert admin.delete(f"/v2.0/rbac-policies/{wildcard['id']}")[0] == 204
    # no entry left: the network is internal, and not there for the project
    assert admin.get(f"/v2.0/networks/{net['id']}")[1]["network"][EXT] is False
    h.error(gateway(other, net["id"]), 404, "NetworkNotFound")
    assert admin.delete(f"/v2.0/networks/{net['id']}")[0] == 204


def test_wildcard_entry_retargeted_to_the_project_using_it(admin, other, third):
    """``*`` may become the one project whose router uses the network; that
    project's entry may not then move to another (tempest's
    test_external_update_policy_from_wildcard_to_specific_project)."""
    net = h.network(admin, **{EXT: True})
    h.subnet(admin, net["id"], "10.78.2.0/24")
    pol = admin.get(f"/v2.0/rbac-policies?object_id={net['id']}")[1]["rbac_policies"][0]
    router = h.created(gateway(other, net["id"]), "router")
    h.error(admin.put(f"/v2.0/rbac-policies/{pol['id']}",
                      {"rbac_policy": {"target_tenant": project_of(third)}}),
            409, "RbacPolicyInUse")
    status, body = admin.put(f"/v2.0/rbac-policies/{pol['id']}",
                             {"rbac_policy": {"target_tenant": project_of(other)}})
    assert status == 200 and body["rbac_policy"]["target_tenant"] == project_of(other)
    h.error(admin.put(f"/v2.0/rbac-policies/{pol['id']}",
                      {"rbac_policy": {"target_tenant": project_of(third)}}),
            409, "RbacPolicyInUse")
    assert other.delete(f"/v2.0/routers/{router['id']}")[0] == 204
    assert admin.delete(f"/v2.0/networks/{net['id']}")[0] == 204


def test_floating_ip_needs_access_to_the_external_network(server, other):
    """tempest's test_policy_allows_project_to_allocate_floatingip: external
    for the admin's project only, the network does not exist for another."""
    admin = Client(server.url, uuid.uuid4().hex, "admin")
    net = h.network(admin)
    h.created(rbac(admin, net["id"], project_of(admin), "access_as_external"), "rbac_policy")
    assert admin.get(f"/v2.0/networks/{net['id']}")[1]["network"][EXT] is True
    h.subnet(admin, net["id"], "10.78.3.0/24", enable_dhcp=False)
    fip = {"floatingip": {"floating_network_id": net["id"]}}
    h.error(other.post("/v2.0/floatingips", fip), 404, "NetworkNotFound")
    h.error(gateway(other, net["id"]), 404, "NetworkNotFound")
    h.created(rbac(admin, net["id"], project_of(other), "access_as_external"), "rbac_policy")
    made = h.created(other.post("/v2.0/floatingips", fip), "floatingip")
    assert other.delete(f"/v2.0/floatingips/{made['id']}")[0] == 204
    # a network the caller sees but that is not external stays a 400
    own = h.network(other)
    msg = h.error(gateway(other, own["id"]), 400, "BadRequest")
    assert msg.endswith(f"Network {own['id']} is not an external network.")
    assert admin.delete(f"/v2.0/networks/{net['id']}")[0] == 204


def test_wildcard_entry_of_the_default_external_network_stays(admin):
    """tempest's test_wildcard_policy_delete_blocked_on_default_ext."""
    net = h.network(admin, **{EXT: True, "is_default": True})
    pol = admin.get(f"/v2.0/rbac-policies?object_id={net['id']}")[1]["rbac_policies"][0]
    msg = h.error(admin.delete(f"/v2.0/rbac-policies/{pol['id']}"), 409, "RbacPolicyInUse")
    assert msg.endswith("Default external networks must be shared to everyone.")
    assert admin.put(f"/v2.0/networks/{net['id']}", {"network": {"is_default": False}})[0] == 200
    assert admin.delete(f"/v2.0/rbac-policies/{pol['id']}")[0] == 204
    assert admin.delete(f"/v2.0/networks/{net['id']}")[0] == 204


EXTERNAL_TYPE_CONF = """
[ml2]
type_drivers = local,vlan,vxlan
tenant_network_types = vlan
external_network_type = vxlan
[ml2_type_vlan]
network_vlan_ranges = physnet1:10:11
[ml2_type_vxlan]
vni_ranges = 100:101
"""


def test_ml2_external_network_type(tmp_path):
    srv = Server(tmp_path, extra=EXTERNAL_TYPE_CONF).start()
    try:
        admin = Client(srv.url, uuid.uuid4().hex, "admin")
        ext = h.network(admin, **{EXT: True})
        plain = h.network(admin)
        assert ext["provider:network_type"] == "vxlan"
        assert ext["provider:segmentation_id"] in (100, 101)
        assert plain["provider:network_type"] == "vlan"
    finally:
        srv.stop()


def test_subnets_filtered_by_their_networks_external_flag(admin, member, other):
    """``GET /v2.0/subnets?router:external=...`` (``subnet-external-network``,
    which tempest's subnet list tests send): the network's flag for whoever
    asks; visibility still decides which subnets a caller gets."""
    ext = h.network(admin, **{EXT: True})
    ext_sub = h.subnet(admin, ext["id"], "10.79.0.0/24")
    own = h.network(member)
    own_sub = h.subnet(member, own["id"], "10.79.1.0/24")
    mine = {ext_sub["id"], own_sub["id"]}
    for value, wanted in (("True", ext_sub), ("true", ext_sub), ("1", ext_sub),
                          ("False", own_sub), ("false", own_sub)):
        got = set(ids(admin.get(f"/v2.0/subnets?router:external={value}"), "subnets"))
        assert got & mine == {wanted["id"]}, value
    got = set(ids(member.get("/v2.0/subnets?router:external=False"), "subnets"))
    assert got & mine == {own_sub["id"]}
    got = set(ids(other.get("/v2.0/subnets?router:external=True"), "subnets"))
    assert got & mine == {ext_sub["id"]}
    got = set(ids(other.get("/v2.0/subnets?router:external=False"), "subnets"))
    assert not got & mine  # (shared networks of other tests may show)
    h.error(admin.get("/v2.0/subnets?router:external=maybe"), 400)
    assert admin.delete(f"/v2.0/networks/{ext['id']}")[0] == 204


# -- the flag kept apart from the entries (upstream's externalnetworks) ----------------


def test_last_entry_gone_under_the_owners_router_leaves_the_network_external(
        admin, other, third):
    """Upstream's conversion back to internal fails (and is only logged)
    while a gateway port is on the network: the owner's router needs no
    entry, so the last one goes and the network stays external with none.
    Setting ``router:external`` again then changes nothing; unsetting it
    waits for the router."""
    net = h.network(admin)
    h.subnet(admin, net["id"], "10.78.4.0/24", enable_dhcp=False)
    pol = h.created(rbac(admin, net["id"], project_of(other), "access_as_external"),
                    "rbac_policy")
    router = h.created(gateway(admin, net["id"]), "router")
    assert admin.delete(f"/v2.0/rbac-policies/{pol['id']}")[0] == 204
    assert entries(admin, net["id"]) == []
    assert admin.get(f"/v2.0/networks/{net['id']}")[1]["network"][EXT] is True
    assert net["id"] in ids(admin.get("/v2.0/networks?router:external=True"), "networks")
    # no entry: the project it was for sees nothing
    h.error(other.get(f"/v2.0/networks/{net['id']}"), 404, "NetworkNotFound")
    h.error(gateway(other, net["id"]), 404, "NetworkNotFound")
    # already external: true adds no ``*`` entry
    status, body = admin.put(f"/v2.0/networks/{net['id']}", {"network": {EXT: True}})
    assert status == 200 and body["network"][EXT] is True
    assert entries(admin, net["id"]) == []
    h.error(admin.put(f"/v2.0/networks/{net['id']}", {"network": {EXT: False}}), 409,
            "ExternalNetworkInUse")
    # an entry on an external network converts nothing
    h.created(rbac(admin, net["id"], project_of(third), "access_as_external"), "rbac_policy")
    assert entries(admin, net["id"]) == [("access_as_external", project_of(third))]
    assert admin.delete(f"/v2.0/routers/{router['id']}")[0] == 204
    status, body = admin.put(f"/v2.0/networks/{net['id']}", {"network": {EXT: False}})
    assert status == 200 and body["network"][EXT] is False
    assert entries(admin, net["id"]) == []
    assert admin.delete(f"/v2.0/networks/{net['id']}")[0] == 204


def test_last_entry_gone_without_a_gateway_makes_the_network_internal(server, other):
    """tempest's test_external_conversion_on_policy_delete and
    ..._on_one_policy_delete; a sharing entry's removal leaves the flag alone
    (test_external_network_on_shared_policy_delete)."""
    admin = Client(server.url, uuid.uuid4().hex, "admin")
    net = h.network(admin)
    wildcard = h.created(rbac(admin, net["id"], "*", "access_as_external"), "rbac_policy")
    mine = h.created(rbac(admin, net["id"], project_of(admin), "access_as_external"),
                     "rbac_policy")
    theirs = h.created(rbac(admin, net["id"], project_of(other), "access_as_external"),
                       "rbac_policy")
    for pol in (theirs, wildcard):
        assert admin.delete(f"/v2.0/rbac-policies/{pol['id']}")[0] == 204
        assert admin.get(f"/v2.0/networks/{net['id']}")[1]["network"][EXT] is True
    assert admin.delete(f"/v2.0/rbac-policies/{mine['id']}")[0] == 204
    assert admin.get(f"/v2.0/networks/{net['id']}")[1]["network"][EXT] is False
    ext = h.network(admin, **{EXT: True})
    shared = h.created(rbac(admin, ext["id"], "*"), "rbac_policy")
    assert admin.delete(f"/v2.0/rbac-policies/{shared['id']}")[0] == 204
    assert admin.get(f"/v2.0/networks/{ext['id']}")[1]["network"][EXT] is True
    for n in (net, ext):
        assert admin.delete(f"/v2.0/networks/{n['id']}")[0] == 204


def test_external_flag_shown_to_every_project_that_sees_the_network(
        server, admin, member, other, third):
    """Upstream shows ``router:external`` (and filters on it) as the
    network's own fact: a project that sees the network through a sharing
    entry sees it external though no external entry names it, and may put
    its router's gateway and floating IPs there; a project no entry names
    sees neither the network nor its subnets."""
    net = h.network(member)
    sub = h.subnet(member, net["id"], "10.78.5.0/24", enable_dhcp=False)
    h.created(rbac(member, net["id"], project_of(other)), "rbac_policy")
    h.created(rbac(member, net["id"], project_of(third), "access_as_external"), "rbac_policy")
    for client in (member, other, third, admin):
        status, body = client.get(f"/v2.0/networks/{net['id']}")
        assert status == 200 and body["network"][EXT] is True, body
        assert net["id"] in ids(client.get("/v2.0/networks?router:external=True"), "networks")
        assert net["id"] not in ids(client.get("/v2.0/networks?router:external=False"),
                                    "networks")
        assert net["id"] in [n["id"] for n in client.get("/v2.0/networks")[1]["networks"]
                             if n[EXT] is True]
    status, body = other.get("/v2.0/floatingip_pools")
    assert status == 200 and sub["id"] in [p["subnet_id"] for p in body["floatingip_pools"]]
    router = h.created(gateway(other, net["id"]), "router")
    fip = h.created(other.post("/v2.0/floatingips", {"floatingip": {
        "floating_network_id": net["id"]}}), "floatingip")
    stranger = Client(server.url, uuid.uuid4().hex, "member")
    h.error(stranger.get(f"/v2.0/networks/{net['id']}"), 404, "NetworkNotFound")
    h.error(stranger.get(f"/v2.0/subnets/{sub['id']}"), 404, "SubnetNotFound")
    assert net["id"] not in ids(stranger.get("/v2.0/networks?router:external=True"),
                                "networks")
    assert sub["id"] not in ids(stranger.get("/v2.0/subnets?router:external=True"), "subnets")
    assert other.delete(f"/v2.0/floatingips/{fip['id']}")[0] == 204
    assert other.delete(f"/v2.0/routers/{router['id']}")[0] == 204
    assert admin.delete(f"/v2.0/networks/{net['id']}")[0] == 204

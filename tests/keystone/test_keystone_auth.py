"""neutrino behind keystonemiddleware, with a real Keystone and real tokens.

Keystone (see conftest.py) has projects A and B; ``member-of-a`` and
``member-of-b`` hold the ``member`` role in them, ``reader-of-a`` the
``reader`` role in A, ``admin`` the ``admin`` role in the bootstrap project.
neutrino validates tokens as the service user ``neutron`` (admin + service in
project ``service``).  Roles and projects reach neutrino only through the
token: Keystone puts the implied roles in it (admin ⇒ manager ⇒ member ⇒
reader), neutrino does not add them in keystone mode.
"""
from __future__ import annotations

import uuid
from typing import Any

import pytest
import requests

from tests.keystone.conftest import PASSWORD, Cloud, Identity

pytestmark = pytest.mark.keystone


def call(cloud: Cloud, who: Identity | None, method: str, path: str, body: Any = None,
         headers: dict[str, str] | None = None) -> tuple[int, Any, requests.Response]:
    hdrs = {**(who.headers() if who else {}), **(headers or {})}
    resp = requests.request(method, cloud.url + path, json=body, headers=hdrs, timeout=60)
    try:
        data = resp.json() if resp.content else None
    except ValueError:
        data = resp.text
    return resp.status_code, data, resp


def create_network(cloud: Cloud, who: Identity, **attrs: Any) -> dict[str, Any]:
    status, body, _ = call(cloud, who, "POST", "/v2.0/networks",
                           {"network": {"name": f"net-{uuid.uuid4().hex[:8]}", **attrs}})
    assert status == 201, body
    return body["network"]


def network_ids(cloud: Cloud, who: Identity) -> set[str]:
    status, body, _ = call(cloud, who, "GET", "/v2.0/networks")
    assert status == 200, body
    return {n["id"] for n in body["networks"]}


@pytest.fixture(scope="module")
def shared_net(cloud: Cloud) -> dict[str, Any]:
    return create_network(cloud, cloud.admin, shared=True)


@pytest.fixture(scope="module")
def net_a(cloud: Cloud) -> dict[str, Any]:
    return create_network(cloud, cloud.member_a)


@pytest.fixture(scope="module")
def net_b(cloud: Cloud) -> dict[str, Any]:
    return create_network(cloud, cloud.member_b)


# -- authentication ---------------------------------------------------------------

def test_request_without_token_is_401_pointing_at_keystone(cloud: Cloud) -> None:
    status, _, resp = call(cloud, None, "GET", "/v2.0/networks")
    assert status == 401
    assert resp.headers["WWW-Authenticate"] == f'Keystone uri="{cloud.keystone.url}"'


def test_request_with_a_bogus_token_is_401(cloud: Cloud) -> None:
    status, _, resp = call(cloud, None, "GET", "/v2.0/networks",
                           headers={"X-Auth-Token": "gAAAAAB-not-a-real-token"})
    assert status == 401
    assert resp.headers["WWW-Authenticate"] == f'Keystone uri="{cloud.keystone.url}"'


def test_revoked_token_is_401(cloud: Cloud) -> None:
    ks = cloud.keystone
    token, _ = ks.issue_token("member-of-a", PASSWORD, project_id=cloud.project_a)
    requests.delete(f"{ks.url}/v3/auth/tokens", timeout=60,
                    headers={"X-Auth-Token": ks.admin_token, "X-Subject-Token": token}
                    ).raise_for_status()
    status, _, _ = call(cloud, None, "GET", "/v2.0/networks", headers={"X-Auth-Token": token})
    assert status == 401


def test_version_discovery_needs_no_token(cloud: Cloud) -> None:
    status, body, _ = call(cloud, None, "GET", "/")
    assert status == 200
    assert any(v["id"] == "v2.0" for v in body["versions"])


def test_valid_token_is_accepted(cloud: Cloud) -> None:
    status, body, _ = call(cloud, cloud.member_a, "GET", "/v2.0/networks")
    assert status == 200
    assert isinstance(body["networks"], list)


# -- admin ------------------------------------------------------------------------

def test_admin_creates_shared_network_in_its_own_project(cloud: Cloud,
                                                         shared_net: dict[str, Any]) -> None:
    assert shared_net["shared"] is True
    assert shared_net["project_id"] == cloud.admin.project_id
    assert shared_net["tenant_id"] == cloud.admin.project_id


def test_admin_sees_every_projects_networks(cloud: Cloud, net_a: dict[str, Any],
                                            net_b: dict[str, Any],
                                            shared_net: dict[str, Any]) -> None:
    assert {net_a["id"], net_b["id"], shared_net["id"]} <= network_ids(cloud, cloud.admin)
    status, body, _ = call(cloud, cloud.admin, "GET", f"/v2.0/networks/{net_a['id']}")
    assert status == 200
    assert body["network"]["project_id"] == cloud.project_a


# -- project members --------------------------------------------------------------

def test_created_network_belongs_to_the_tokens_project(cloud: Cloud,
                                                       net_a: dict[str, Any]) -> None:
    assert net_a["project_id"] == cloud.project_a == cloud.member_a.project_id
    assert net_a["tenant_id"] == cloud.project_a
    assert net_a["shared"] is False


def test_subnet_belongs_to_the_tokens_project(cloud: Cloud, net_a: dict[str, Any]) -> None:
    status, body, _ = call(cloud, cloud.member_a, "POST", "/v2.0/subnets", {"subnet": {
        "network_id": net_a["id"], "ip_version": 4, "cidr": "10.55.0.0/24"}})
    assert status == 201, body
    assert body["subnet"]["project_id"] == cloud.project_a


def test_member_may_name_its_own_project_but_not_another(cloud: Cloud) -> None:
    own = create_network(cloud, cloud.member_a, project_id=cloud.project_a)
    assert own["project_id"] == cloud.project_a
    # upstream (neutron-lib's _validate_privileges) answers 400, before policy
    status, body, _ = call(cloud, cloud.member_a, "POST", "/v2.0/networks", {"network": {
        "name": "not-mine", "project_id": cloud.project_b}})
    assert status == 400, body
    assert body["NeutronError"]["type"] == "HTTPBadRequest"
    status, body, _ = call(cloud, cloud.admin, "GET", "/v2.0/networks?name=not-mine")
    assert status == 200 and body["networks"] == []


def test_other_project_cannot_see_the_network(cloud: Cloud, net_a: dict[str, Any]) -> None:
    status, body, _ = call(cloud, cloud.member_b, "GET", f"/v2.0/networks/{net_a['id']}")
    assert status == 404, body
    assert net_a["id"] not in network_ids(cloud, cloud.member_b)


def test_other_project_cannot_update_or_delete_the_network(cloud: Cloud,
                                                           net_a: dict[str, Any]) -> None:
    path = f"/v2.0/networks/{net_a['id']}"
    status, body, _ = call(cloud, cloud.member_b, "PUT", path, {"network": {"name": "stolen"}})
    assert status == 404, body
    status, body, _ = call(cloud, cloud.member_b, "DELETE", path)
    assert status == 404, body
    status, body, _ = call(cloud, cloud.member_a, "GET", path)
    assert status == 200 and body["network"]["name"] == net_a["name"]


def test_every_project_sees_the_shared_network(cloud: Cloud, shared_net: dict[str, Any]) -> None:
    for who in (cloud.member_a, cloud.member_b, cloud.reader_a):
        assert shared_net["id"] in network_ids(cloud, who)
        status, body, _ = call(cloud, who, "GET", f"/v2.0/networks/{shared_net['id']}")
        assert status == 200, body


def test_member_cannot_update_the_admins_shared_network(cloud: Cloud,
                                                        shared_net: dict[str, Any]) -> None:
    status, body, _ = call(cloud, cloud.member_b, "PUT", f"/v2.0/networks/{shared_net['id']}",
                           {"network": {"name": "mine-now"}})
    assert status == 403, body


def test_member_cannot_create_a_shared_network(cloud: Cloud) -> None:
    status, body, _ = call(cloud, cloud.member_b, "POST", "/v2.0/networks",
                           {"network": {"name": "wants-shared", "shared": True}})
    assert status == 403, body
    assert body["NeutronError"]["type"] == "PolicyNotAuthorized"


def test_member_cannot_share_its_network(cloud: Cloud) -> None:
    net = create_network(cloud, cloud.member_a)
    status, body, _ = call(cloud, cloud.member_a, "PUT", f"/v2.0/networks/{net['id']}",
                           {"network": {"shared": True}})
    assert status == 403, body
    status, body, _ = call(cloud, cloud.member_a, "PUT", f"/v2.0/networks/{net['id']}",
                           {"network": {"name": "renamed"}})
    assert status == 200, body


def test_member_deletes_its_own_network(cloud: Cloud) -> None:
    net = create_network(cloud, cloud.member_a)
    status, body, _ = call(cloud, cloud.member_a, "DELETE", f"/v2.0/networks/{net['id']}")
    assert status == 204, body
    status, _, _ = call(cloud, cloud.member_a, "GET", f"/v2.0/networks/{net['id']}")
    assert status == 404


# -- reader -----------------------------------------------------------------------

def test_reader_lists_and_shows_its_projects_network(cloud: Cloud, net_a: dict[str, Any]) -> None:
    assert net_a["id"] in network_ids(cloud, cloud.reader_a)
    status, body, _ = call(cloud, cloud.reader_a, "GET", f"/v2.0/networks/{net_a['id']}")
    assert status == 200, body
    assert body["network"]["project_id"] == cloud.project_a


def test_reader_cannot_create_update_or_delete(cloud: Cloud, net_a: dict[str, Any]) -> None:
    path = f"/v2.0/networks/{net_a['id']}"
    status, body, _ = call(cloud, cloud.reader_a, "POST", "/v2.0/networks",
                           {"network": {"name": "reader-net"}})
    assert status == 403, body
    status, body, _ = call(cloud, cloud.reader_a, "PUT", path, {"network": {"name": "x"}})
    assert status == 403, body
    status, body, _ = call(cloud, cloud.reader_a, "DELETE", path)
    assert status == 403, body
    status, body, _ = call(cloud, cloud.reader_a, "GET", path)
    assert status == 200 and body["network"]["name"] == net_a["name"]


# -- roles come from the token ----------------------------------------------------

def test_keystone_puts_implied_roles_in_the_token(cloud: Cloud) -> None:
    assert cloud.admin.roles == ["admin", "manager", "member", "reader"]
    assert cloud.member_a.roles == ["member", "reader"]
    assert cloud.reader_a.roles == ["reader"]


def test_member_reads_through_the_reader_role_keystone_implies(cloud: Cloud,
                                                               net_a: dict[str, Any]) -> None:
    # get_network needs role:reader; member-of-a was only assigned "member"
    status, body, _ = call(cloud, cloud.member_a, "GET", f"/v2.0/networks/{net_a['id']}")
    assert status == 200, body


def test_role_that_keystone_says_implies_member_can_create(cloud: Cloud) -> None:
    """neutrino knows nothing of "netops": only Keystone's implication makes it a member."""
    ks = cloud.keystone
    ks.imply("netops", "member")
    ks.create_user("netops-of-a", cloud.project_a, "netops")
    who = ks.login("netops-of-a", PASSWORD, cloud.project_a)
    assert who.roles == ["member", "netops", "reader"]
    net = create_network(cloud, who)
    assert net["project_id"] == cloud.project_a


def test_role_that_implies_nothing_grants_nothing(cloud: Cloud, net_a: dict[str, Any],
                                                  shared_net: dict[str, Any]) -> None:
    ks = cloud.keystone
    ks.create_user("observer-of-a", cloud.project_a, "observer")
    who = ks.login("observer-of-a", PASSWORD, cloud.project_a)
    assert who.roles == ["observer"]
    status, body, _ = call(cloud, who, "POST", "/v2.0/networks", {"network": {"name": "no"}})
    assert status == 403, body
    status, body, _ = call(cloud, who, "GET", f"/v2.0/networks/{net_a['id']}")
    assert status == 404, body
    visible = network_ids(cloud, who)
    assert net_a["id"] not in visible
    assert shared_net["id"] in visible


def test_admin_role_in_a_project_token_is_cloud_admin(cloud: Cloud, net_b: dict[str, Any]) -> None:
    """An admin token scoped to project A still reaches project B's network."""
    ks = cloud.keystone
    ks.create_user("admin-of-a", cloud.project_a, "admin")
    who = ks.login("admin-of-a", PASSWORD, cloud.project_a)
    assert who.roles == ["admin", "manager", "member", "reader"]
    status, body, _ = call(cloud, who, "GET", f"/v2.0/networks/{net_b['id']}")
    assert status == 200, body
    net = create_network(cloud, who, shared=True)
    assert net["project_id"] == cloud.project_a

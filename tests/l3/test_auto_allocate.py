"""``auto-allocated-topology``: get-me-a-network, as upstream 29 answers it.

A server of its own: the default external network and default subnet
pools are deployment-wide and would change what other suites see.
"""
from __future__ import annotations

import threading
import uuid
from pathlib import Path
from typing import Iterator

import pytest

from tests.api import _helpers as h
from tests.conftest import Client, Server

URL = "/v2.0/auto-allocated-topology"
EXTRA = ("service_plugins = router,auto_allocate\n"
         "quota_network = -1\nquota_subnet = -1\nquota_router = -1\nquota_port = -1\n")


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    s = Server(Path(tmp_path_factory.mktemp("auto_allocate")), extra=EXTRA).start()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def root(srv) -> Client:
    return Client(srv.url)


def member_of(srv, project: str | None = None, roles: str = "member") -> Client:
    return Client(srv.url, project or uuid.uuid4().hex, roles)


def test_requirements_missing_then_met(srv, root):
    member = member_of(srv)
    project = member.session.headers["X-Project-Id"]
    msg = h.error(member.get(f"{URL}/{project}?fields=dry-run"), 409, "AutoAllocationFailure")
    assert msg == "Deployment error: No default router:external network."
    ext = h.network(root, **{"router:external": True, "is_default": True})
    assert ext["is_default"] is True
    h.subnet(root, ext["id"], "172.31.0.0/24")
    msg = h.error(member.get(f"{URL}/{project}?fields=dry-run"), 409, "AutoAllocationFailure")
    assert msg == "Deployment error: No default subnetpools defined."
    h.created(root.post("/v2.0/subnetpools", {"subnetpool": {
        "name": "default-v4", "prefixes": ["10.128.0.0/12"], "default_prefixlen": 26,
        "is_default": True, "shared": True}}), "subnetpool")
    assert member.get(f"{URL}/{project}?fields=dry-run") == (200, {
        "auto_allocated_topology": {"id": "dry-run=pass", "project_id": project}})
    assert member.get(f"{URL}/None?fields=dry-run")[1]["auto_allocated_topology"][
        "project_id"] == project
    msg = h.error(member.get(f"{URL}/{project}?fields=foo"), 400, "BadRequest")
    assert msg == "Bad auto_allocate request: Unrecognized field."
    # Only one default external network.
    status, body = root.post("/v2.0/networks", {"network": {
        "name": "second", "router:external": True, "is_default": True}})
    assert status == 409 and body["NeutronError"]["type"] == "DefaultExternalNetworkExists"
    assert body["NeutronError"]["message"] == \
        f"A default external network already exists: {ext['id']}."
    assert [n for n in root.get("/v2.0/networks?name=second")[1]["networks"]] == []


def _defaults(root) -> str:
    """The default external network (and v4 pool), made unless a test did already."""
    nets = [n for n in root.get("/v2.0/networks")[1]["networks"] if n.get("is_default")]
    if nets:
        return nets[0]["id"]
    ext = h.network(root, **{"router:external": True, "is_default": True})
    h.subnet(root, ext["id"], "172.31.0.0/24")
    h.created(root.post("/v2.0/subnetpools", {"subnetpool": {
        "name": "default-v4", "prefixes": ["10.128.0.0/12"], "default_prefixlen": 26,
        "is_default": True, "shared": True}}), "subnetpool")
    return ext["id"]


def test_is_default_is_shown_on_external_networks_only_and_admin_only(srv, root):
    ext_id = _defaults(root)
    member = member_of(srv)
    private = h.network(member)
    assert "is_default" not in private
    assert member.get(f"/v2.0/networks/{ext_id}")[1]["network"]["is_default"] is True
    status, body = member.put(f"/v2.0/networks/{private['id']}", {"network": {
        "is_default": True}})
    assert status == 403 and body["NeutronError"]["type"] == "PolicyNotAuthorized"
    # An external network that stops being external stops being the default.
    ext = h.network(root, **{"router:external": True})
    assert ext["is_default"] is False
    assert root.put(f"/v2.0/networks/{ext_id}", {"network": {"is_default": False}})[0] == 200
    assert root.put(f"/v2.0/networks/{ext['id']}", {"network": {"is_default": True}})[1][
        "network"]["is_default"] is True
    assert root.put(f"/v2.0/networks/{ext['id']}", {"network": {
        "router:external": False}})[0] == 200
    assert root.put(f"/v2.0/networks/{ext_id}", {"network": {"is_default": True}})[1][
        "network"]["is_default"] is True


def test_allocate_once_show_again_and_delete(srv, root):
    ext_id = _defaults(root)
    member = member_of(srv)
    project = member.session.headers["X-Project-Id"]
    status, body = member.get(f"{URL}/{project}")
    assert status == 200, body
    topo = body["auto_allocated_topology"]
    assert topo["project_id"] == project
    net = member.get(f"/v2.0/networks/{topo['id']}")[1]["network"]
    assert net["name"] == "auto_allocated_network" and net["admin_state_up"] is True
    assert net["project_id"] == project
    subnets = member.get(f"/v2.0/subnets?network_id={topo['id']}")[1]["subnets"]
    assert [(s["name"], s["ip_version"]) for s in subnets] == [("auto_allocated_subnet_v4", 4)]
    assert subnets[0]["subnetpool_id"] is not None
    routers = member.get("/v2.0/routers")[1]["routers"]
    assert [(r["name"], r["external_gateway_info"]["network_id"]) for r in routers] == [
        ("auto_allocated_router", ext_id)]
    assert member.get(f"{URL}/{project}")[1]["auto_allocated_topology"]["id"] == topo["id"]
    assert member.get(f"{URL}/None")[1]["auto_allocated_topology"]["id"] == topo["id"]
    assert member.delete(f"{URL}/{project}")[0] == 204
    assert member.get(f"/v2.0/networks?project_id={project}")[1]["networks"] == []
    assert member.get("/v2.0/routers")[1]["routers"] == []


def test_other_project_and_reader(srv, root):
    _defaults(root)
    member = member_of(srv)
    other = member_of(srv)
    project = member.session.headers["X-Project-Id"]
    msg = h.error(other.get(f"{URL}/{project}"), 403, "NotAuthorized")
    assert msg == "Not authorized."
    h.error(other.delete(f"{URL}/{project}"), 403, "NotAuthorized")
    reader = member_of(srv, project, "reader")
    assert reader.get(f"{URL}/{project}?fields=dry-run")[0] == 200
    # An admin may allocate for any project.
    status, body = root.get(f"{URL}/{project}")
    assert status == 200 and body["auto_allocated_topology"]["project_id"] == project
    assert member.get(f"{URL}/{project}")[1] == body
    h.error(reader.delete(f"{URL}/{project}"), 403, "PolicyNotAuthorized")
    assert member.delete(f"{URL}/{project}")[0] == 204


def test_concurrent_requests_build_one_topology(srv, root):
    _defaults(root)
    member = member_of(srv)
    project = member.session.headers["X-Project-Id"]
    answers: list[tuple[int, object]] = []

    def ask() -> None:
        answers.append(member_of(srv, project).get(f"{URL}/{project}"))
    threads = [threading.Thread(target=ask) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert all(status == 200 for status, _ in answers), answers
    assert len({body["auto_allocated_topology"]["id"] for _, body in answers}) == 1
    assert len(member.get(f"/v2.0/networks?project_id={project}")[1]["networks"]) == 1
    assert len(member.get("/v2.0/routers")[1]["routers"]) == 1


def test_cli_and_sdk(srv, root, tmp_path):
    _defaults(root)
    from tests.clients.conftest import CLI
    cli = CLI(srv.url, tmp_path / "home")
    try:
        project = uuid.uuid4().hex
        checked = cli.json("network", "auto", "allocated", "topology", "create",
                           "--check-resources", "--project", project)
        # The CLI exits 0 on a pass; it renders the answer as ``dry_run`` unset
        # (its own formatting, the same against upstream).
        assert checked == {"dry_run": None}, checked
        made = cli.json("network", "auto", "allocated", "topology", "create",
                        "--project", project)
        assert made["project_id"] == project and made["id"] != "dry-run=pass"
        cli.run("network", "auto", "allocated", "topology", "delete", "--project", project)
        assert root.get(f"/v2.0/networks?project_id={project}")[1]["networks"] == []
    finally:
        cli.close()
    import openstack
    conn = openstack.connection.Connection(
        auth_type="none", endpoint=srv.url, network_endpoint_override=srv.url)
    try:
        project = uuid.uuid4().hex
        conn.network.validate_auto_allocated_topology(project)
        topo = conn.network.get_auto_allocated_topology(project)
        assert topo.project_id == project
        conn.network.delete_auto_allocated_topology(project)
        assert root.get(f"/v2.0/networks?project_id={project}")[1]["networks"] == []
    finally:
        conn.close()

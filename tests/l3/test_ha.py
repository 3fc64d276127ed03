"""``l3-ha``: HA routers as the server keeps them (upstream Neutron 29's
attribute policy, per-project HA network, owners and migration rule,
observed on the anchor)."""
from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Client, Server
from tests.l3 import _l3 as l3

REPLICATED = "network:ha_router_replicated_interface"


@pytest.fixture
def padmin(server: Any) -> Client:
    """An admin of a project of its own (the HA network is per project)."""
    return Client(server.url, uuid.uuid4().hex, "admin")


def ha_networks(client: Client, project_id: str) -> list[dict[str, Any]]:
    name = f"HA network project {project_id}"
    return [n for n in client.get("/v2.0/networks")[1]["networks"] if n["name"] == name]


def project_of(client: Client) -> str:
    return client.session.headers["X-Project-Id"]


def test_l3_ha_is_listed_with_upstreams_descriptor(admin):
    ext = admin.get("/v2.0/extensions/l3-ha")[1]["extension"]
    assert ext == {"alias": "l3-ha", "name": "HA Router extension",
                   "description": "Adds HA capability to routers.",
                   "updated": "2014-04-26T00:00:00-00:00", "links": []}


def test_only_admins_choose_or_see_ha(admin, member):
    assert l3.router(admin, ha=False)["ha"] is False
    assert l3.router(admin)["ha"] is False  # [DEFAULT] l3_ha
    mine = l3.router(member)
    assert "ha" not in mine
    assert admin.get(f"/v2.0/routers/{mine['id']}")[1]["router"]["ha"] is False
    status, body = member.post("/v2.0/routers", {"router": {"ha": True}})
    assert status == 403 and body["NeutronError"]["type"] == "PolicyNotAuthorized", body
    status, _ = member.put(f"/v2.0/routers/{mine['id']}", {"router": {"ha": True}})
    assert status == 403


def test_ha_router_gets_its_projects_ha_network_once(padmin):
    project = project_of(padmin)
    first = l3.router(padmin, ha=True)
    second = l3.router(padmin, ha=True)
    assert first["ha"] is second["ha"] is True
    nets = ha_networks(padmin, project)
    assert len(nets) == 1
    net = nets[0]
    assert net["project_id"] == "" and net["shared"] is False
    subnets = padmin.get(f"/v2.0/subnets?network_id={net['id']}")[1]["subnets"]
    assert [(s["name"], s["cidr"], s["enable_dhcp"], s["gateway_ip"], s["project_id"])
            for s in subnets] == [(f"HA subnet project {project}", "169.254.192.0/18",
                                   False, None, "")]
    # No L3 agent hosts them: no HA port.
    assert padmin.get(f"/v2.0/ports?network_id={net['id']}")[1]["ports"] == []
    # The network stays while an HA router is left, and goes with the last one.
    assert padmin.delete(f"/v2.0/routers/{first['id']}")[0] == 204
    assert len(ha_networks(padmin, project)) == 1
    assert padmin.delete(f"/v2.0/routers/{second['id']}")[0] == 204
    assert ha_networks(padmin, project) == []


def test_legacy_routers_make_no_ha_network(padmin):
    l3.router(padmin, ha=False)
    assert ha_networks(padmin, project_of(padmin)) == []


def test_ha_router_interfaces_are_replicated_interfaces(padmin):
    r = l3.router(padmin, ha=True)
    sub = l3.private_subnet(padmin)
    l3.add_interface(padmin, r["id"], subnet_id=sub["id"])
    owners = [p["device_owner"] for p in
              padmin.get(f"/v2.0/ports?device_id={r['id']}")[1]["ports"]]
    assert owners == [REPLICATED]
    # HA and distributed together: distributed's owner wins, as upstream.
    both = l3.router(padmin, ha=True, distributed=True)
    assert both["ha"] is True and both["distributed"] is True


def test_ha_changes_only_on_a_router_that_is_down(padmin):
    project = project_of(padmin)
    r = l3.router(padmin)
    sub = l3.private_subnet(padmin)
    l3.add_interface(padmin, r["id"], subnet_id=sub["id"])
    status, body = padmin.put(f"/v2.0/routers/{r['id']}", {"router": {"ha": True}})
    assert status == 400, body
    assert body["NeutronError"] == {
        "type": "BadRequest", "detail": "",
        "message": "Bad router request: Cannot change HA attribute of active routers. "
                   "Please set router admin_state_up to False prior to upgrade."}
    assert padmin.get(f"/v2.0/routers/{r['id']}")[1]["router"]["ha"] is False
    assert ha_networks(padmin, project) == []
    # Going down in the same request is enough.
    status, body = padmin.put(f"/v2.0/routers/{r['id']}",
                              {"router": {"ha": True, "admin_state_up": False}})
    assert status == 200 and body["router"]["ha"] is True, body
    owners = [p["device_owner"] for p in
              padmin.get(f"/v2.0/ports?device_id={r['id']}")[1]["ports"]]
    assert owners == [REPLICATED]
    assert len(ha_networks(padmin, project)) == 1
    status, body = padmin.put(f"/v2.0/routers/{r['id']}", {"router": {"ha": False}})
    assert status == 200 and body["router"]["ha"] is False, body
    owners = [p["device_owner"] for p in
              padmin.get(f"/v2.0/ports?device_id={r['id']}")[1]["ports"]]
    assert owners == ["network:router_interface"]
    assert ha_networks(padmin, project) == []


def test_centralized_router_update_to_dvr(admin):
    """tempest admin/test_routers_dvr.py::test_centralized_router_update_to_dvr."""
    r = l3.router(admin, ha=False, distributed=False, admin_state_up=False)
    assert r["distributed"] is False and r["ha"] is False
    status, body = admin.put(f"/v2.0/routers/{r['id']}", {"router": {"distributed": True}})
    assert status == 200, body
    assert body["router"]["distributed"] is True and body["router"]["ha"] is False
    shown = admin.get(f"/v2.0/routers/{r['id']}")[1]["router"]
    assert shown["distributed"] is True and shown["ha"] is False


def test_ha_routers_can_be_filtered(padmin):
    ha_r = l3.router(padmin, ha=True)
    legacy = l3.router(padmin, ha=False)
    ids = {r["id"] for r in padmin.get("/v2.0/routers?ha=true")[1]["routers"]}
    assert ha_r["id"] in ids and legacy["id"] not in ids


def test_the_system_default_makes_routers_ha(tmp_path: Path) -> None:
    server = Server(tmp_path, extra="service_plugins = router\nl3_ha = true\n")
    server.start()
    try:
        admin = Client(server.url, uuid.uuid4().hex, "admin")
        assert l3.router(admin)["ha"] is True
        assert len(ha_networks(admin, project_of(admin))) == 1
        assert l3.router(admin, ha=False)["ha"] is False
    finally:
        server.stop()

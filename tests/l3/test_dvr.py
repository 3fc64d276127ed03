"""``dvr``: distributed routers as the API keeps them (upstream Neutron 29's
owners, SNAT twins and migration rules, observed on the anchor)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import Client, Server
from tests.l3 import _l3 as l3

DIST = "network:router_interface_distributed"
SNAT = "network:router_centralized_snat"


def owners(admin: Any, router_id: str) -> list[str]:
    return sorted(p["device_owner"] for p in
                  admin.get(f"/v2.0/ports?device_id={router_id}")[1]["ports"])


def test_only_admins_choose_or_see_distribution(admin, member):
    assert l3.router(admin, distributed=True)["distributed"] is True
    assert l3.router(admin, distributed=False)["distributed"] is False
    assert l3.router(admin)["distributed"] is False  # [DEFAULT] router_distributed
    mine = l3.router(member)
    assert "distributed" not in mine
    assert admin.get(f"/v2.0/routers/{mine['id']}")[1]["router"]["distributed"] is False
    status, body = member.post("/v2.0/routers", {"router": {"distributed": True}})
    assert status == 403, body
    status, _ = member.put(f"/v2.0/routers/{mine['id']}", {"router": {"distributed": True}})
    assert status == 403


def test_distributed_interfaces_and_their_snat_twins_follow_the_gateway(admin):
    ext, _ = l3.external_network(admin)
    r = l3.router(admin, distributed=True)
    sub = l3.private_subnet(admin)
    l3.add_interface(admin, r["id"], subnet_id=sub["id"])
    assert owners(admin, r["id"]) == [DIST]
    admin.put(f"/v2.0/routers/{r['id']}",
              {"router": {"external_gateway_info": {"network_id": ext["id"]}}})
    assert owners(admin, r["id"]) == sorted([DIST, "network:router_gateway", SNAT])
    twin = admin.get(f"/v2.0/ports?device_id={r['id']}&device_owner={SNAT}")[1]["ports"][0]
    assert twin["project_id"] == "" and twin["network_id"] == sub["network_id"]
    assert [i["subnet_id"] for i in twin["fixed_ips"]] == [sub["id"]]
    assert twin["fixed_ips"][0]["ip_address"] != sub["gateway_ip"]
    status, body = admin.delete(f"/v2.0/ports/{twin['id']}")
    assert status == 409 and body["NeutronError"]["type"] == "ServicePortInUse"
    # No gateway, no twin; a twin again with the gateway back; none without the interface.
    admin.put(f"/v2.0/routers/{r['id']}", {"router": {"external_gateway_info": {}}})
    assert owners(admin, r["id"]) == [DIST]
    admin.put(f"/v2.0/routers/{r['id']}",
              {"router": {"external_gateway_info": {"network_id": ext["id"]}}})
    assert l3.remove_interface(admin, r["id"], subnet_id=sub["id"])[0] == 200
    assert owners(admin, r["id"]) == ["network:router_gateway"]


def test_distribution_changes_only_on_a_router_that_is_down(admin):
    ext, _ = l3.external_network(admin)
    r = l3.router(admin, external_gateway_info={"network_id": ext["id"]})
    sub = l3.private_subnet(admin)
    l3.add_interface(admin, r["id"], subnet_id=sub["id"])
    assert owners(admin, r["id"]) == ["network:router_gateway", "network:router_interface"]
    status, body = admin.put(f"/v2.0/routers/{r['id']}", {"router": {"distributed": True}})
    assert status == 400
    assert body["NeutronError"]["message"] == (
        "Bad router request: Cannot change the 'distributed' attribute of active routers. "
        "Please set router admin_state_up to False prior to upgrade.")
    assert owners(admin, r["id"]) == ["network:router_gateway", "network:router_interface"]
    admin.put(f"/v2.0/routers/{r['id']}", {"router": {"admin_state_up": False}})
    status, body = admin.put(f"/v2.0/routers/{r['id']}", {"router": {"distributed": True}})
    assert status == 200 and body["router"]["distributed"] is True
    assert owners(admin, r["id"]) == sorted([DIST, "network:router_gateway", SNAT])
    status, body = admin.put(f"/v2.0/routers/{r['id']}", {"router": {"distributed": False}})
    assert status == 200 and body["router"]["distributed"] is False
    assert owners(admin, r["id"]) == ["network:router_gateway", "network:router_interface"]


def test_extensions_list_dvr(admin):
    aliases = {e["alias"] for e in admin.get("/v2.0/extensions")[1]["extensions"]}
    assert {"dvr", "router-admin-state-down-before-update"} <= aliases


def test_the_system_default_makes_routers_distributed(tmp_path: Path) -> None:
    server = Server(tmp_path, extra="service_plugins = router\nrouter_distributed = true\n")
    server.start()
    try:
        admin = Client(server.url, roles="admin")
        assert l3.router(admin)["distributed"] is True
        assert l3.router(admin, distributed=False)["distributed"] is False
    finally:
        server.stop()

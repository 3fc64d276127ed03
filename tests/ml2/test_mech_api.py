"""Mechanism drivers over the API: failures undo or roll back, and
hierarchical binding takes (and gives back) a dynamic segment."""
from __future__ import annotations

import uuid
from typing import Iterator

import pytest
import sqlalchemy as sa

from neutrino.db import tables as t
from neutrino.db.engine import make_engine
from neutrino.plugins.ml2.agents_db import AGENT_TYPE_OVS
from tests.conftest import Client, Server
from tests.ml2.binding_helpers import host, network, port, report_agent, start_server, update

FAILING = "tests.ml2.mech_test_drivers.Failing"
HIER = "tests.ml2.mech_test_drivers.Hierarchical"


@pytest.fixture(scope="module")
def msrv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = start_server(tmp_path_factory.mktemp("mech"), f"{HIER},openvswitch,{FAILING}")
    yield srv
    srv.stop()


@pytest.fixture
def admin(msrv: Server) -> Client:
    return Client(msrv.url, uuid.uuid4().hex, "admin")


def _names(client: Client, plural: str, name: str) -> list[str]:
    status, body = client.get(f"/v2.0/{plural}?name={name}")
    assert status == 200, body
    return [item["id"] for item in body[plural]]


def _error(body: dict) -> tuple[str, str]:
    return body["NeutronError"]["type"], body["NeutronError"]["message"]


@pytest.mark.parametrize("plural", ["networks", "ports", "subnets"])
def test_postcommit_failure_on_create_deletes_what_was_created(
        admin: Client, plural: str) -> None:
    net = network(admin)
    name = f"fail-create_{plural[:-1]}_postcommit"
    item: dict = {"name": name}
    if plural != "networks":
        item["network_id"] = net["id"]
    if plural == "subnets":
        item.update(ip_version=4, cidr="10.9.0.0/24")
    status, body = admin.post(f"/v2.0/{plural}", {plural[:-1]: item})
    assert status == 500
    assert _error(body) == ("MechanismDriverError", f"create_{plural[:-1]}_postcommit failed.")
    assert _names(admin, plural, name) == []


def test_precommit_failure_rolls_back_the_create(admin: Client) -> None:
    status, body = admin.post("/v2.0/networks",
                              {"network": {"name": "fail-create_network_precommit"}})
    assert status == 500
    assert _error(body) == ("MechanismDriverError", "create_network_precommit failed.")
    assert _names(admin, "networks", "fail-create_network_precommit") == []


def test_a_drivers_own_api_error_reaches_the_caller(admin: Client) -> None:
    status, body = admin.post("/v2.0/networks",
                              {"network": {"name": "invalid-create_network_precommit"}})
    assert status == 400
    assert _error(body) == ("InvalidInput", "Invalid input for operation: test driver "
                                            "refuses create_network_precommit.")


def test_precommit_failure_rolls_back_an_update(admin: Client) -> None:
    p = port(admin, network(admin), name="before")
    status, body = admin.put(f"/v2.0/ports/{p['id']}",
                             {"port": {"name": "fail-update_port_precommit"}})
    assert status == 500 and _error(body)[0] == "MechanismDriverError"
    assert admin.get(f"/v2.0/ports/{p['id']}")[1]["port"]["name"] == "before"


def test_delete_postcommit_failure_still_deletes(admin: Client) -> None:
    net = network(admin)
    p = port(admin, net, name="fail-delete_port_postcommit")
    assert admin.delete(f"/v2.0/ports/{p['id']}")[0] == 204
    assert admin.get(f"/v2.0/ports/{p['id']}")[0] == 404


def test_precommit_failure_on_delete_keeps_the_resource(admin: Client) -> None:
    net = network(admin)
    p = port(admin, net, name="fail-delete_port_precommit")
    status, body = admin.delete(f"/v2.0/ports/{p['id']}")
    assert status == 500 and _error(body)[0] == "MechanismDriverError"
    assert admin.get(f"/v2.0/ports/{p['id']}")[0] == 200


def _allocated_vlans(server: Server) -> set[int]:
    engine = make_engine(f"sqlite:///{server.tmp / 'var' / 'neutrino.sqlite'}")
    try:
        with engine.connect() as conn:
            return {r.vlan_id for r in conn.execute(
                sa.select(t.ml2_vlan_allocations.c.vlan_id).where(
                    t.ml2_vlan_allocations.c.allocated.is_(True)))}
    finally:
        engine.dispose()


def test_hierarchical_binding_uses_a_dynamic_vlan_below_the_vxlan(
        msrv: Server, admin: Client) -> None:
    h = host()
    report_agent(msrv, AGENT_TYPE_OVS, h, {"bridge_mappings": {"physnet1": "br-eth1"}})
    net = network(admin)
    assert net["provider:network_type"] == "vxlan"
    before = _allocated_vlans(msrv)
    p = port(admin, net, **{"binding:host_id": h})
    assert p["binding:vif_type"] == "ovs"
    assert p["binding:vif_details"]["bound_drivers"] == {"0": HIER, "1": "openvswitch"}
    taken = _allocated_vlans(msrv) - before
    assert len(taken) == 1
    # A second port on the network shares the dynamic segment.
    port(admin, net, **{"binding:host_id": h})
    assert _allocated_vlans(msrv) - before == taken
    # The dynamic segment is not one of the network's provider segments.
    shown = admin.get(f"/v2.0/networks/{net['id']}")[1]["network"]
    assert shown["provider:network_type"] == "vxlan"
    # Unbinding every port gives the VLAN back.
    for item in admin.get(f"/v2.0/ports?network_id={net['id']}")[1]["ports"]:
        update(admin, item["id"], **{"binding:host_id": None})
    assert _allocated_vlans(msrv) - before == set()


def test_deleting_the_port_gives_back_its_dynamic_segment(
        msrv: Server, admin: Client) -> None:
    h = host()
    report_agent(msrv, AGENT_TYPE_OVS, h, {"bridge_mappings": {"physnet1": "br-eth1"}})
    net = network(admin)
    before = _allocated_vlans(msrv)
    p = port(admin, net, **{"binding:host_id": h})
    assert _allocated_vlans(msrv) - before
    assert admin.delete(f"/v2.0/ports/{p['id']}")[0] == 204
    assert _allocated_vlans(msrv) - before == set()
    assert admin.delete(f"/v2.0/networks/{net['id']}")[0] == 204


def test_failed_hierarchical_binding_leaves_no_dynamic_segment(
        msrv: Server, admin: Client) -> None:
    h = host()
    report_agent(msrv, AGENT_TYPE_OVS, h, {"bridge_mappings": {"physnet9": "br-x"}})
    before = _allocated_vlans(msrv)
    p = port(admin, network(admin), **{"binding:host_id": h})
    assert p["binding:vif_type"] == "binding_failed"
    assert _allocated_vlans(msrv) - before == set()

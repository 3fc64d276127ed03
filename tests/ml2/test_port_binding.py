"""Port binding over the API, with agents reported by writing their rows."""
from __future__ import annotations

import uuid
from typing import Iterator

import pytest

from neutrino.plugins.ml2.agents_db import (
    AGENT_TYPE_LINUXBRIDGE,
    AGENT_TYPE_NIC_SWITCH,
    AGENT_TYPE_OVS,
)
from tests.conftest import Client, Server
from tests.ml2.binding_helpers import (
    host,
    network,
    port,
    report_agent,
    start_server,
    update,
    vlan_net,
)

OVS_PHYSNET1_VXLAN = {"bridge_mappings": {"physnet1": "br-eth1"}, "tunnel_types": ["vxlan"]}


@pytest.fixture(scope="module")
def bsrv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = start_server(tmp_path_factory.mktemp("bind"),
                       "logger,openvswitch,linuxbridge,sriovnicswitch,l2population")
    yield srv
    srv.stop()


@pytest.fixture
def admin(bsrv: Server) -> Client:
    return Client(bsrv.url, uuid.uuid4().hex, "admin")


def test_binding_extension_is_listed_as_upstream_describes_it(admin: Client) -> None:
    status, body = admin.get("/v2.0/extensions/binding")
    assert status == 200
    assert body["extension"]["name"] == "Port Binding"
    assert body["extension"]["description"] == ("Expose port bindings of a virtual port "
                                                "to external application")


def test_port_without_host_is_unbound_and_down(admin: Client) -> None:
    p = port(admin, network(admin))
    assert p["binding:host_id"] == "" and p["binding:vif_type"] == "unbound"
    assert p["binding:vif_details"] == {} and p["binding:profile"] == {}
    assert p["binding:vnic_type"] == "normal" and p["status"] == "DOWN"


def test_port_on_host_with_live_ovs_agent_is_bound_ovs_and_stays_down(
        bsrv: Server, admin: Client) -> None:
    h = host()
    report_agent(bsrv, AGENT_TYPE_OVS, h, OVS_PHYSNET1_VXLAN)
    p = port(admin, network(admin), **{"binding:host_id": h})
    assert p["binding:vif_type"] == "ovs"
    assert p["binding:vif_details"] == {
        "port_filter": True, "connectivity": "l2", "ovs_hybrid_plug": False,
        "datapath_type": "system", "bridge_name": "br-int",
        "bound_drivers": {"0": "openvswitch"}}
    assert p["status"] == "DOWN"
    shown = admin.get(f"/v2.0/ports/{p['id']}")[1]["port"]
    assert shown["binding:vif_type"] == "ovs" and shown["binding:host_id"] == h


def test_ovs_vif_details_follow_the_agents_report(bsrv: Server, admin: Client) -> None:
    h = host()
    report_agent(bsrv, AGENT_TYPE_OVS, h, {**OVS_PHYSNET1_VXLAN, "datapath_type": "netdev",
                                          "integration_bridge": "br-x",
                                          "ovs_hybrid_plug": True})
    details = port(admin, network(admin), **{"binding:host_id": h})["binding:vif_details"]
    assert (details["datapath_type"], details["bridge_name"],
            details["ovs_hybrid_plug"]) == ("netdev", "br-x", True)


def test_host_without_agent_is_binding_failed(admin: Client) -> None:
    p = port(admin, network(admin), **{"binding:host_id": host()})
    assert p["binding:vif_type"] == "binding_failed" and p["binding:vif_details"] == {}


def test_dead_agent_does_not_bind(bsrv: Server, admin: Client) -> None:
    h = host()
    report_agent(bsrv, AGENT_TYPE_OVS, h, OVS_PHYSNET1_VXLAN, age_seconds=200)
    p = port(admin, network(admin), **{"binding:host_id": h})
    assert p["binding:vif_type"] == "binding_failed"


def test_vlan_binds_only_where_the_agent_maps_the_physnet(bsrv: Server, admin: Client) -> None:
    h = host()
    report_agent(bsrv, AGENT_TYPE_OVS, h, OVS_PHYSNET1_VXLAN)
    mapped = port(admin, vlan_net(admin, "physnet1"), **{"binding:host_id": h})
    unmapped = port(admin, vlan_net(admin, "physnet2"), **{"binding:host_id": h})
    assert mapped["binding:vif_type"] == "ovs"
    assert unmapped["binding:vif_type"] == "binding_failed"


def test_vxlan_binds_only_where_the_agent_lists_the_tunnel_type(
        bsrv: Server, admin: Client) -> None:
    without, with_vxlan = host(), host()
    report_agent(bsrv, AGENT_TYPE_OVS, without, {"bridge_mappings": {"physnet1": "br-eth1"}})
    report_agent(bsrv, AGENT_TYPE_OVS, with_vxlan, OVS_PHYSNET1_VXLAN)
    net = network(admin)
    assert net["provider:network_type"] == "vxlan"
    assert port(admin, net, **{"binding:host_id": without})["binding:vif_type"] == \
        "binding_failed"
    assert port(admin, net, **{"binding:host_id": with_vxlan})["binding:vif_type"] == "ovs"


def test_ovs_binds_local_networks_without_mappings(bsrv: Server, admin: Client) -> None:
    h = host()
    report_agent(bsrv, AGENT_TYPE_OVS, h, {})
    net = network(admin, **{"provider:network_type": "local"})
    assert port(admin, net, **{"binding:host_id": h})["binding:vif_type"] == "ovs"


def test_linuxbridge_binds_with_interface_mappings(bsrv: Server, admin: Client) -> None:
    h = host()
    report_agent(bsrv, AGENT_TYPE_LINUXBRIDGE, h, {"interface_mappings": {"physnet2": "eth2"}})
    p = port(admin, vlan_net(admin, "physnet2"), **{"binding:host_id": h})
    assert p["binding:vif_type"] == "bridge"
    assert p["binding:vif_details"] == {"port_filter": True, "connectivity": "l2",
                                        "bound_drivers": {"0": "linuxbridge"}}


def test_sriov_binds_direct_ports_with_the_vlan_in_the_details(
        bsrv: Server, admin: Client) -> None:
    h = host()
    report_agent(bsrv, AGENT_TYPE_OVS, h, OVS_PHYSNET1_VXLAN)
    report_agent(bsrv, AGENT_TYPE_NIC_SWITCH, h, {"device_mappings": {"physnet1": ["ens1f0"]}})
    net = vlan_net(admin, "physnet1")
    direct = port(admin, net, **{"binding:host_id": h, "binding:vnic_type": "direct"})
    assert direct["binding:vif_type"] == "hw_veb"
    assert direct["binding:vif_details"] == {
        "port_filter": False, "connectivity": "l2",
        "vlan": str(net["provider:segmentation_id"]),
        "bound_drivers": {"0": "sriovnicswitch"}}
    macvtap = port(admin, net, **{"binding:host_id": h, "binding:vnic_type": "macvtap"})
    assert macvtap["binding:vif_type"] == "hw_veb"
    physical = port(admin, net, **{"binding:host_id": h,
                                   "binding:vnic_type": "direct-physical"})
    assert physical["binding:vif_type"] == "hostdev_physical"
    normal = port(admin, net, **{"binding:host_id": h})
    assert normal["binding:vif_type"] == "ovs"


def test_sriov_needs_a_nic_switch_agent(bsrv: Server, admin: Client) -> None:
    h = host()
    report_agent(bsrv, AGENT_TYPE_OVS, h, OVS_PHYSNET1_VXLAN)
    p = port(admin, vlan_net(admin), **{"binding:host_id": h, "binding:vnic_type": "direct"})
    assert p["binding:vif_type"] == "binding_failed"


def test_binding_is_redone_when_the_host_changes_and_cleared_with_it(
        bsrv: Server, admin: Client) -> None:
    good, bad = host(), host()
    report_agent(bsrv, AGENT_TYPE_OVS, good, OVS_PHYSNET1_VXLAN)
    p = port(admin, network(admin), **{"binding:host_id": good})
    assert p["binding:vif_type"] == "ovs"
    assert update(admin, p["id"], **{"binding:host_id": bad})["binding:vif_type"] == \
        "binding_failed"
    assert update(admin, p["id"], **{"binding:host_id": good})["binding:vif_type"] == "ovs"
    cleared = update(admin, p["id"], **{"binding:host_id": None})
    assert (cleared["binding:host_id"], cleared["binding:vif_type"],
            cleared["binding:vif_details"]) == ("", "unbound", {})


def test_binding_is_redone_when_the_vnic_type_changes(bsrv: Server, admin: Client) -> None:
    h = host()
    report_agent(bsrv, AGENT_TYPE_OVS, h, OVS_PHYSNET1_VXLAN)
    p = port(admin, vlan_net(admin), **{"binding:host_id": h})
    assert p["binding:vif_type"] == "ovs"
    changed = update(admin, p["id"], **{"binding:vnic_type": "direct"})
    assert changed["binding:vif_type"] == "binding_failed"


def test_failed_binding_is_retried_by_any_update(bsrv: Server, admin: Client) -> None:
    h = host()
    p = port(admin, network(admin), **{"binding:host_id": h})
    assert p["binding:vif_type"] == "binding_failed"
    report_agent(bsrv, AGENT_TYPE_OVS, h, OVS_PHYSNET1_VXLAN)
    assert update(admin, p["id"], name="retry")["binding:vif_type"] == "ovs"


def test_bound_port_is_not_rebound_by_unrelated_updates(bsrv: Server, admin: Client) -> None:
    h = host()
    report_agent(bsrv, AGENT_TYPE_OVS, h, OVS_PHYSNET1_VXLAN)
    p = port(admin, network(admin), **{"binding:host_id": h})
    report_agent(bsrv, AGENT_TYPE_OVS, h, OVS_PHYSNET1_VXLAN, age_seconds=500)  # now dead
    assert update(admin, p["id"], name="renamed")["binding:vif_type"] == "ovs"


def test_profile_is_stored_and_rebinds(bsrv: Server) -> None:
    svc = Client(bsrv.url, uuid.uuid4().hex, "admin,service")
    h = host()
    report_agent(bsrv, AGENT_TYPE_OVS, h, OVS_PHYSNET1_VXLAN)
    p = port(svc, vlan_net(svc), **{"binding:host_id": h, "binding:vnic_type": "direct"})
    assert p["binding:vif_type"] == "binding_failed"  # direct on OVS needs switchdev
    p = update(svc, p["id"], **{"binding:profile": {"capabilities": ["switchdev"]}})
    assert p["binding:profile"] == {"capabilities": ["switchdev"]}
    assert p["binding:vif_type"] == "ovs"


def test_binding_attribute_errors_are_upstreams(admin: Client) -> None:
    p = port(admin, network(admin))
    status, body = admin.put(f"/v2.0/ports/{p['id']}", {"port": {"binding:vnic_type": "bogus"}})
    assert status == 400
    assert body["NeutronError"]["message"] == ("Invalid input for binding:vnic_type. "
                                               "Reason: bogus is not in valid_values.")
    status, body = admin.put(f"/v2.0/ports/{p['id']}", {"port": {"binding:vif_type": "ovs"}})
    assert status == 400
    assert body["NeutronError"]["message"] == "Cannot update read-only attribute binding:vif_type"
    svc = Client(admin.url, "p", "admin,service")
    status, body = svc.put(f"/v2.0/ports/{p['id']}", {"port": {"binding:profile": "x"}})
    assert status == 400
    assert body["NeutronError"]["message"] == ("Invalid input for binding:profile. "
                                               "Reason: 'x' is not a dictionary.")


def test_admin_without_service_role_cannot_set_the_profile(admin: Client) -> None:
    p = port(admin, network(admin))
    status, body = admin.put(f"/v2.0/ports/{p['id']}", {"port": {"binding:profile": {"a": 1}}})
    assert status == 403 and body["NeutronError"]["type"] == "PolicyNotAuthorized"


def test_ports_can_be_listed_by_host(bsrv: Server, admin: Client) -> None:
    h = host()
    net = network(admin)
    on_host = port(admin, net, **{"binding:host_id": h})
    port(admin, net)
    status, body = admin.get(f"/v2.0/ports?binding:host_id={h}")
    assert status == 200, body
    found = body["ports"]
    assert [p["id"] for p in found] == [on_host["id"]]


def test_member_sees_vnic_type_but_not_where_the_port_is_bound(
        bsrv: Server) -> None:
    member = Client(bsrv.url, uuid.uuid4().hex, "member,reader")
    p = port(member, network(member))
    assert p["binding:vnic_type"] == "normal"
    assert not {"binding:host_id", "binding:vif_type", "binding:vif_details",
                "binding:profile"} & set(p)

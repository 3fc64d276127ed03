"""The OVS agent's pure core: which flows a host's state asks for."""
from __future__ import annotations

from neutrino.agents.ovs import flows
from neutrino.agents.ovs.flows import Flow, LocalNet

VX = LocalNet("net-a", "vxlan", 1001, None, 1)
VX2 = LocalNet("net-b", "vxlan", 1002, None, 2)
VLAN = LocalNet("net-c", "vlan", 200, "physnet1", 3)
FLAT = LocalNet("net-d", "flat", None, "physnet1", 4)


def test_networks_keep_their_local_vlan_and_new_ones_take_the_lowest_free() -> None:
    assert flows.allocate_vlans({}, {"b", "a"}) == {"a": 1, "b": 2}
    assert flows.allocate_vlans({"a": 1, "b": 2}, {"b", "c"}) == {"b": 2, "c": 1}
    assert flows.allocate_vlans({"x": 7}, {"x", "y"}) == {"x": 7, "y": 1}


def test_tunnel_port_names_carry_the_peer_address_in_hex_within_15_chars() -> None:
    assert flows.tunnel_port_name("vxlan", "10.99.0.2") == "vxlan-0a630002"
    assert len(flows.tunnel_port_name("geneve", "255.255.255.255")) <= 15


def test_br_int_drops_unwired_ports_and_switches_the_rest_normally() -> None:
    got = flows.integration_flows([VX], {})
    assert Flow(0, 65535, "vlan_tci=0x0fff/0x1fff", "drop") in got
    assert Flow(0, 0, "", "resubmit(,60)") in got
    assert Flow(60, 0, "", "NORMAL") in got


def test_provider_vlan_and_flat_translate_between_wire_and_local_vlan() -> None:
    got = flows.integration_flows([VLAN, FLAT, VX], {"physnet1": "br-eth1"})
    assert Flow(0, 3, "in_port=int-br-eth1,dl_vlan=200", "mod_vlan_vid:3,resubmit(,60)") in got
    assert Flow(0, 3, "in_port=int-br-eth1,vlan_tci=0x0000/0x1fff",
                "mod_vlan_vid:4,resubmit(,60)") in got
    assert Flow(0, 2, "in_port=int-br-eth1", "drop") in got
    phys = flows.physical_flows([VLAN, FLAT, VX], "physnet1", "br-eth1")
    assert Flow(0, 4, "in_port=phy-br-eth1,dl_vlan=3", "mod_vlan_vid:200,NORMAL") in phys
    assert Flow(0, 4, "in_port=phy-br-eth1,dl_vlan=4", "strip_vlan,NORMAL") in phys
    assert not [f for f in phys if "dl_vlan=1" in f.match]  # the overlay stays off the wire


def test_br_tun_maps_vni_to_local_vlan_and_floods_each_network_to_its_tunnels() -> None:
    tunnels = {"vxlan-0a630002": "vxlan", "vxlan-0a630003": "vxlan", "gre-0a630004": "gre"}
    got = flows.tunnel_flows([VX, VX2], tunnels)
    assert Flow(4, 1, "tun_id=0x3e9", "mod_vlan_vid:1,resubmit(,10)") in got
    assert Flow(22, 1, "dl_vlan=2", "strip_vlan,set_tunnel:0x3ea,"
                "output:vxlan-0a630002,output:vxlan-0a630003") in got
    assert Flow(0, 1, "in_port=vxlan-0a630002", "resubmit(,4)") in got
    assert Flow(0, 1, "in_port=patch-int", "resubmit(,2)") in got
    assert Flow(22, 0, "", "drop") in got


def test_a_network_with_no_peer_yet_floods_nowhere() -> None:
    got = flows.tunnel_flows([VX], {})
    assert not [f for f in got if f.table == 22 and f.priority == 1]
    assert Flow(4, 1, "tun_id=0x3e9", "mod_vlan_vid:1,resubmit(,10)") in got


def test_diff_adds_new_deletes_gone_and_replaces_changed_actions_without_delete() -> None:
    a = Flow(0, 1, "in_port=x", "drop")
    b = Flow(22, 1, "dl_vlan=1", "output:p1")
    b2 = Flow(22, 1, "dl_vlan=1", "output:p1,output:p2")
    c = Flow(4, 1, "tun_id=0x1", "mod_vlan_vid:1")
    add, delete = flows.diff({a, b, c}, {a, b2})
    assert add == [b2] and delete == [c]


def test_flow_specs_carry_the_cookie_and_keys_omit_actions() -> None:
    f = Flow(4, 1, "tun_id=0x3e9", "mod_vlan_vid:1")
    assert f.spec(0xab) == "cookie=0xab,table=4,priority=1,tun_id=0x3e9,actions=mod_vlan_vid:1"
    assert Flow(0, 0, "", "drop").key() == "table=0,priority=0"

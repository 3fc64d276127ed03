"""The OVS adapter against a real (private, userspace) Open vSwitch."""
from __future__ import annotations

import os
from typing import Iterator

import pytest

from neutrino.agents.ovs.ovsctl import OvsCtl
from tests.fullstack.hosts import Fabric, Host, needs_ovs

pytestmark = needs_ovs()


@pytest.fixture(scope="module")
def host(fabric: Fabric) -> Host:
    return fabric.host("a")


@pytest.fixture
def ovs(host: Host) -> Iterator[OvsCtl]:
    saved = os.environ.get("OVS_RUNDIR")
    os.environ["OVS_RUNDIR"] = str(host.dir)
    try:
        yield OvsCtl()
    finally:
        if saved is None:
            os.environ.pop("OVS_RUNDIR", None)
        else:
            os.environ["OVS_RUNDIR"] = saved


def test_bridges_and_patch_ports_are_created_once(ovs: OvsCtl) -> None:
    for _ in range(2):
        ovs.ensure_bridge("br-int", "netdev")
        ovs.ensure_bridge("br-tun", "netdev")
        ovs.ensure_patch("br-int", "patch-tun", "patch-int")
        ovs.ensure_patch("br-tun", "patch-int", "patch-tun")
    assert ovs.bridge_exists("br-int") and ovs.ports("br-int") == ["patch-tun"]


def test_vif_ports_are_those_with_an_iface_id_and_tags_stick(ovs: OvsCtl, host: Host) -> None:
    ovs.ensure_bridge("br-int", "netdev")
    ovs.add_internal_port("br-int", "tapx1", "port-1", "fa:16:3e:00:00:01")
    host.vsctl("add-port", "br-int", "plain1", "--", "set", "interface", "plain1",
               "type=internal")
    vifs = {p.iface_id: p for p in ovs.vif_ports("br-int")}
    assert list(vifs) == ["port-1"]
    assert vifs["port-1"].mac == "fa:16:3e:00:00:01" and vifs["port-1"].tag is None
    ovs.set_port_tag("tapx1", 5, {"net_uuid": "net-1"})
    vif = ovs.vif_ports("br-int")[0]
    assert vif.tag == 5 and vif.other_config == {"net_uuid": "net-1"}
    ovs.delete_port("br-int", "tapx1")
    ovs.delete_port("br-int", "tapx1")  # absent is fine
    assert ovs.vif_ports("br-int") == []


def test_an_empty_other_config_value_is_left_out_not_refused(ovs: OvsCtl) -> None:
    ovs.ensure_bridge("br-int", "netdev")
    ovs.add_internal_port("br-int", "tapx2", "port-2", "fa:16:3e:00:00:02")
    ovs.set_port_tag("tapx2", 3, {"net_uuid": "net-1", "segmentation_id": "200"})
    ovs.set_port_tag("tapx2", 4, {"net_uuid": "net-2", "segmentation_id": ""})  # flat
    vif = ovs.vif_ports("br-int")[0]
    assert vif.tag == 4 and vif.other_config == {"net_uuid": "net-2"}
    ovs.delete_port("br-int", "tapx2")


def test_tunnel_ports_list_their_remote(ovs: OvsCtl) -> None:
    ovs.ensure_bridge("br-tun", "netdev")
    ovs.ensure_tunnel("br-tun", "vxlan-0a630002", "vxlan", "10.99.0.1", "10.99.0.2")
    assert ovs.tunnel_ports("br-tun") == {"vxlan-0a630002": "10.99.0.2"}


def test_flows_are_added_by_cookie_and_stale_cookies_removed(ovs: OvsCtl) -> None:
    ovs.ensure_bridge("br-scr", "netdev")
    ovs.add_flows("br-scr", ["cookie=0x11,table=0,priority=1,in_port=1,actions=drop",
                             "cookie=0x11,table=3,priority=2,actions=NORMAL"])
    ovs.add_flows("br-scr", ["cookie=0x22,table=3,priority=2,actions=NORMAL"])  # replaces
    assert ovs.cookies("br-scr") == {0x11, 0x22}
    assert len(ovs.dump_flows("br-scr")) == 2
    ovs.delete_flows_by_cookie("br-scr", 0x11)
    assert ovs.cookies("br-scr") == {0x22}
    ovs.delete_flows_strict("br-scr", ["table=3,priority=2"])
    assert ovs.dump_flows("br-scr") == []

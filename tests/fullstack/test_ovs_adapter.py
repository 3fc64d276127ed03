"""The OVS adapter against a real (private, userspace) Open vSwitch."""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Iterator

import pytest

from neutrino.agents.ovs.ovsctl import OvsCtl, OvsError
from tests.fullstack.hosts import (  # noqa: F401 - host, ovs: the shared fixtures
    Fabric,
    Host,
    host,
    needs_ovs,
    ovs,
    ovs_rundir,
)

pytestmark = needs_ovs()


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


def test_tagging_a_port_plugged_as_a_dead_vlan_trunk_makes_it_an_access_port(
        ovs: OvsCtl, host: Host) -> None:
    """Upstream's interface driver plugs DHCP and router ports so (``vlan_mode
    = trunk, trunks = [4095]``); a tag alone leaves such a port isolated."""
    ovs.ensure_bridge("br-int", "netdev")
    ovs.add_internal_port("br-int", "tapx3", "port-3", "fa:16:3e:00:00:03")
    host.vsctl("set", "Port", "tapx3", "vlan_mode=trunk", "trunks=4095")
    ovs.set_port_tag("tapx3", 7, {"net_uuid": "net-3"})
    assert [host.vsctl("get", "Port", "tapx3", column).strip()
            for column in ("tag", "vlan_mode", "trunks")] == ["7", "[]", "[]"]
    ovs.delete_port("br-int", "tapx3")


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


@pytest.fixture
def ofctl_only_path(tmp_path: Path) -> Iterator[str]:
    """PATH holding ``ovs-ofctl`` and nothing else (no ``ovs-vsctl``)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "ovs-ofctl").symlink_to(shutil.which("ovs-ofctl") or "ovs-ofctl")
    saved = os.environ["PATH"]
    os.environ["PATH"] = str(bin_dir)
    try:
        yield str(bin_dir)
    finally:
        os.environ["PATH"] = saved


def test_the_database_is_managed_without_ovs_vsctl(ovs: OvsCtl, host: Host,
                                                   ofctl_only_path: str) -> None:
    assert shutil.which("ovs-vsctl") is None and shutil.which("ovs-ofctl")
    ovs.ensure_bridge("br-idl", "netdev")
    ovs.add_internal_port("br-idl", "tapi1", "port-i1", "fa:16:3e:00:01:01")
    ovs.set_port_tags([("tapi1", 7, {"net_uuid": "net-7"})])
    ovs.add_flows("br-idl", ["cookie=0x7,table=0,priority=1,in_port=tapi1,actions=drop"])
    ovs.set_port_shaping("tapi1", 2000, 200)
    assert [(p.iface_id, p.tag) for p in ovs.vif_ports("br-idl")] == [("port-i1", 7)]
    assert ovs.cookies("br-idl") == {0x7}
    assert ovs.port_shapings() == {"tapi1": (2000, 200)}
    ovs.delete_port("br-idl", "tapi1")
    assert ovs.ports("br-idl") == []
    os.environ["PATH"] = os.pathsep.join([ofctl_only_path, *os.defpath.split(os.pathsep)])
    assert "tapi1" not in host.vsctl("list-ports", "br-idl")


def test_replaced_and_cleared_shaping_leaves_no_qos_or_queue_rows(ovs: OvsCtl,
                                                                  host: Host) -> None:
    def rows() -> tuple[set[str], set[str]]:
        return (set(host.vsctl("--bare", "--columns=_uuid", "list", "qos").split()),
                set(host.vsctl("--bare", "--columns=_uuid", "list", "queue").split()))

    before = rows()
    ovs.ensure_bridge("br-int", "netdev")
    ovs.add_internal_port("br-int", "tapq1", "port-q1", "fa:16:3e:00:02:01")
    ovs.set_port_shaping("tapq1", 1000, 100)
    ovs.set_port_shaping("tapq1", 3000, 300)
    assert ovs.port_shapings()["tapq1"] == (3000, 300)
    assert [len(now - was) for now, was in zip(rows(), before)] == [1, 1]
    ovs.set_port_shaping("tapq1", None)
    ovs.set_port_shaping("tapq1", None)  # nothing to clear is fine
    assert "tapq1" not in ovs.port_shapings()
    assert rows() == before
    ovs.delete_port("br-int", "tapq1")


def test_a_batch_of_tags_is_applied_to_every_port(ovs: OvsCtl) -> None:
    ovs.ensure_bridge("br-int", "netdev")
    names = [f"tapb{i}" for i in range(30)]
    for i, name in enumerate(names):
        ovs.add_internal_port("br-int", name, f"port-b{i}", f"fa:16:3e:00:03:{i:02x}")
    ovs.set_port_tags([(n, 10 + i, {"net_uuid": f"net-{i}"}) for i, n in enumerate(names)])
    tags = {p.name: (p.tag, p.other_config["net_uuid"]) for p in ovs.vif_ports("br-int")}
    assert tags == {n: (10 + i, f"net-{i}") for i, n in enumerate(names)}
    for name in names:
        ovs.delete_port("br-int", name)


def test_the_default_database_follows_ovs_rundir_and_an_explicit_one_wins(
        host: Host, tmp_path: Path) -> None:
    with ovs_rundir(tmp_path):
        assert OvsCtl().db == f"unix:{tmp_path}/db.sock"
        with pytest.raises(OvsError):
            OvsCtl().bridge_exists("br-int")  # no switch there
        assert OvsCtl(f"unix:{host.dir}/db.sock").bridge_exists(host.name) is False
        os.environ.pop("OVS_RUNDIR")
        assert OvsCtl().db == "unix:/var/run/openvswitch/db.sock"


def test_each_switch_of_a_process_is_reached_through_its_own_connection(
        fabric: Fabric, host: Host) -> None:
    """ovsdbapp keeps a backend's connection on its class: without a class
    per endpoint, every OvsCtl of a process used the first switch it opened."""
    other = fabric.host("a2")
    first, second = OvsCtl(f"unix:{host.dir}/db.sock"), OvsCtl(f"unix:{other.dir}/db.sock")
    first.ensure_bridge("br-first", "netdev")
    second.ensure_bridge("br-second", "netdev")
    assert "br-second" in other.vsctl("list-br").split()
    assert "br-second" not in host.vsctl("list-br").split()
    assert first.bridge_exists("br-first") and not second.bridge_exists("br-first")

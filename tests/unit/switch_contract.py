"""What every ``switch.Switch`` must do, as tests a switch's test module
inherits (``class TestX(SwitchContract)`` with a ``switch`` fixture): the
in-memory switch (tests/unit/test_memory_switch.py) and the real adapter on
a private Open vSwitch (tests/fullstack/test_ovs_switch_contract.py) pass
the same ones, so the agent's tests on the first say what the second does."""
from __future__ import annotations

import threading
import time
from typing import Callable

from neutrino.agents.ovs.switch import Switch


def wait_for(check: Callable[[], bool], within: float = 10) -> bool:
    deadline = time.monotonic() + within
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


class SwitchContract:
    datapath = "netdev"

    def test_bridges_and_patch_ports_are_made_once(self, switch: Switch) -> None:
        for _ in range(2):
            switch.ensure_bridge("brc-a", self.datapath)
            switch.ensure_bridge("brc-b", self.datapath)
            switch.ensure_patch("brc-a", "pc-b", "pc-a")
            switch.ensure_patch("brc-b", "pc-a", "pc-b")
        assert switch.bridge_exists("brc-a") and not switch.bridge_exists("brc-none")
        assert switch.ports("brc-a") == ["pc-b"]

    def test_vifs_are_the_ports_naming_a_neutron_port(self, switch: Switch) -> None:
        switch.ensure_bridge("brc-v", self.datapath)
        switch.ensure_patch("brc-v", "pc-v", "pc-w")
        switch.add_internal_port("brc-v", "tapc1", "port-c1", "fa:16:3e:00:0c:01")
        switch.add_internal_port("brc-v", "tapc2", "port-c2", "fa:16:3e:00:0c:02")
        vifs = switch.vif_ports("brc-v")
        assert [(v.name, v.iface_id, v.mac, v.tag) for v in vifs] == [
            ("tapc1", "port-c1", "fa:16:3e:00:0c:01", None),
            ("tapc2", "port-c2", "fa:16:3e:00:0c:02", None)]
        assert all(v.ofport > 0 for v in vifs) and vifs[0].ofport != vifs[1].ofport
        switch.delete_port("brc-v", "tapc2")
        switch.delete_port("brc-v", "tapc2")  # absent is fine
        assert [v.name for v in switch.vif_ports("brc-v")] == ["tapc1"]
        switch.delete_port("brc-v", "tapc1")

    def test_tags_merge_other_config_and_an_empty_value_drops_its_key(
            self, switch: Switch) -> None:
        switch.ensure_bridge("brc-t", self.datapath)
        switch.add_internal_port("brc-t", "tapc3", "port-c3", "fa:16:3e:00:0c:03")
        switch.add_internal_port("brc-t", "tapc4", "port-c4", "fa:16:3e:00:0c:04")
        switch.set_port_tags([("tapc3", 3, {"net_uuid": "n1", "segmentation_id": "200"}),
                              ("tapc4", 4, {"net_uuid": "n2"})])
        switch.set_port_tag("tapc3", 5, {"net_uuid": "n3", "segmentation_id": ""})
        tags = {v.name: (v.tag, v.other_config) for v in switch.vif_ports("brc-t")}
        assert tags == {"tapc3": (5, {"net_uuid": "n3"}), "tapc4": (4, {"net_uuid": "n2"})}
        switch.set_port_tags([])  # nothing to do is fine
        for name in tags:
            switch.delete_port("brc-t", name)

    def test_tunnel_ports_list_their_remote(self, switch: Switch) -> None:
        switch.ensure_bridge("brc-tun", self.datapath)
        switch.ensure_patch("brc-tun", "pc-tun", "pc-int")
        switch.ensure_tunnel("brc-tun", "vxlan-0a630002", "vxlan", "10.99.0.1", "10.99.0.2")
        assert switch.tunnel_ports("brc-tun") == {"vxlan-0a630002": "10.99.0.2"}
        switch.delete_port("brc-tun", "vxlan-0a630002")
        assert switch.tunnel_ports("brc-tun") == {}

    def test_flows_are_kept_by_key_and_cookie(self, switch: Switch) -> None:
        switch.ensure_bridge("brc-f", self.datapath)
        switch.add_internal_port("brc-f", "tapc5", "port-c5", "fa:16:3e:00:0c:05")
        assert switch.cookies("brc-f") == set()
        switch.add_flows("brc-f", ["cookie=0x11,table=0,priority=1,in_port=tapc5,actions=drop",
                                   "cookie=0x11,table=3,priority=2,actions=NORMAL"])
        switch.add_flows("brc-f", ["cookie=0x22,table=3,priority=2,actions=NORMAL"])  # replaces
        switch.add_flows("brc-f", [])
        assert switch.cookies("brc-f") == {0x11, 0x22}
        assert switch.flow_counts("brc-f") == {0x11: 1, 0x22: 1}
        switch.delete_flows_strict("brc-f", ["table=0,priority=1,in_port=tapc5"])
        assert switch.cookies("brc-f") == {0x22}
        switch.add_flows("brc-f", ["cookie=0x33,table=5,priority=1,actions=drop"])
        switch.delete_flows_by_cookie("brc-f", 0x22)
        assert switch.cookies("brc-f") == {0x33}
        switch.delete_port("brc-f", "tapc5")

    def test_meters_are_added_changed_and_deleted(self, switch: Switch) -> None:
        switch.ensure_bridge("brc-m", self.datapath)
        spec = "meter={},kbps,burst,band=type=drop,rate={},burst_size={}"
        switch.set_meter("brc-m", spec.format(7, 1000, 800), exists=False)
        switch.set_meter("brc-m", spec.format(8, 3000, 100), exists=False)
        switch.set_meter("brc-m", spec.format(7, 2000, 900), exists=True)
        assert switch.meters("brc-m") == {7: (2000, 900), 8: (3000, 100)}
        switch.delete_meter("brc-m", 8)
        assert switch.meters("brc-m") == {7: (2000, 900)}
        switch.delete_meter("brc-m", 7)

    def test_shaping_is_set_replaced_and_cleared(self, switch: Switch) -> None:
        switch.ensure_bridge("brc-s", self.datapath)
        switch.add_internal_port("brc-s", "tapc6", "port-c6", "fa:16:3e:00:0c:06")
        switch.set_port_shaping("tapc6", 1000, 100)
        switch.set_port_shaping("tapc6", 3000, 300)
        switch.set_port_shaping("tapc-none", 1000, 100)  # no such port: nothing
        assert switch.port_shapings() == {"tapc6": (3000, 300)}
        switch.set_port_shaping("tapc6", None)
        switch.set_port_shaping("tapc6", None)
        assert switch.port_shapings() == {}
        switch.delete_port("brc-s", "tapc6")

    def test_a_plugged_vif_wakes_the_watchers_until_unwatched(self, switch: Switch) -> None:
        switch.ensure_bridge("brc-w", self.datapath)
        woken = threading.Event()
        unwatch = switch.watch_vifs(woken.set)
        try:
            switch.add_internal_port("brc-w", "tapc7", "port-c7", "fa:16:3e:00:0c:07")
            assert wait_for(woken.is_set)
        finally:
            unwatch()
        unwatch()  # twice is fine
        switch.delete_port("brc-w", "tapc7")

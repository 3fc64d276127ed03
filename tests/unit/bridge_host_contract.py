"""What every ``host.BridgeHost`` must do, as tests a host's test module
inherits (``class TestX(BridgeHostContract)`` with a ``host`` fixture and a
``plug`` fixture that makes a tap-like link): the in-memory host
(tests/unit/test_memory_host.py) and the real one in a network namespace
(tests/lbagent/test_bridge_host_contract.py) pass the same ones."""
from __future__ import annotations

from typing import Callable

from neutrino.agents.linuxbridge import nftables
from neutrino.agents.linuxbridge.host import FLOOD_MAC, BridgeHost

Plug = Callable[[str], None]


class BridgeHostContract:
    def test_bridges_hold_the_devices_enslaved_until_released_or_deleted(
            self, host: BridgeHost, plug: Plug) -> None:
        host.ensure_bridge("brqc1")
        host.ensure_bridge("brqc1")
        plug("tapc1")
        plug("tapc2")
        host.enslave("tapc1", "brqc1", up=True, mtu=1400)
        host.enslave("tapc2", "brqc1", up=False)
        links = host.links()
        assert links["tapc1"]["master"] == "brqc1" and links["tapc2"]["master"] == "brqc1"
        host.release("tapc1")
        host.release("tapc-none")  # gone is fine
        assert "master" not in host.links()["tapc1"]
        host.delete("brqc1")
        host.delete("brqc1")  # gone is fine
        links = host.links()
        assert "brqc1" not in links and "master" not in links["tapc2"]
        host.delete("tapc1")
        host.delete("tapc2")

    def test_vxlan_forwarding_entries_add_up_for_floods_and_replace_for_macs(
            self, host: BridgeHost) -> None:
        for _ in range(2):
            host.ensure_vxlan("vxlan-c1", 1001, "10.97.0.1", 4789, None, learning=False,
                              ttl=None, tos=None)
        assert "vxlan-c1" in host.links() and host.fdb("vxlan-c1") == set()
        host.fdb_add("vxlan-c1", FLOOD_MAC, "10.97.0.2")
        host.fdb_add("vxlan-c1", FLOOD_MAC, "10.97.0.3")
        host.fdb_add("vxlan-c1", "fa:16:3e:00:0c:01", "10.97.0.2")
        host.fdb_add("vxlan-c1", "fa:16:3e:00:0c:01", "10.97.0.3")  # moved
        assert host.fdb("vxlan-c1") == {(FLOOD_MAC, "10.97.0.2"), (FLOOD_MAC, "10.97.0.3"),
                                        ("fa:16:3e:00:0c:01", "10.97.0.3")}
        host.fdb_del("vxlan-c1", FLOOD_MAC, "10.97.0.2")
        host.fdb_del("vxlan-c1", FLOOD_MAC, "10.97.0.2")  # gone is fine
        assert host.fdb("vxlan-c1") == {(FLOOD_MAC, "10.97.0.3"),
                                        ("fa:16:3e:00:0c:01", "10.97.0.3")}
        host.neigh_replace("vxlan-c1", "10.0.0.3", "fa:16:3e:00:0c:01")
        host.delete("vxlan-c1")
        assert "vxlan-c1" not in host.links()

    def test_a_ruleset_is_loaded_again_and_again(self, host: BridgeHost) -> None:
        host.nft_load(nftables.ruleset([]))
        host.nft_load(nftables.ruleset([]))

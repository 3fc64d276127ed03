#!/usr/bin/env python3
"""What one internal port costs on a switch that already has many (root only).

On an emulated host's private userspace Open vSwitch (tests/fullstack/hosts.py),
internal ports are added to br-int a hundred at a time through neutrino's
switch adapter, one port per OVSDB transaction (as an agent plugging one
device at a time did), and after each hundred the mean time of one such
transaction and of one listing of br-int's ports is printed. Both grow
with the ports the switch has: ovs-vswitchd reconfigures its bridges at
every transaction, and a listing is as long as the bridge. (Why the L3
agent attaches a pass's devices together and never lists br-int's ports.)

    sudo .venv/bin/python benchmarks/ovs_port_growth.py --ports 1500
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fullstack.hosts import Fabric, ovs_rundir  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ports", type=int, default=1500)
    parser.add_argument("--listings", type=int, default=20, help="timed after each hundred")
    args = parser.parse_args(argv)
    fab = Fabric(Path(tempfile.mkdtemp()))
    try:
        host = fab.host("g")
        host.vsctl("add-br", "br-int", "--", "set", "bridge", "br-int",
                   "datapath_type=netdev", "fail-mode=secure")
        with ovs_rundir(host.dir):
            from neutrino.agents.ovs.ovsctl import OvsCtl
            ovs = OvsCtl()
            for start in range(0, args.ports, 100):
                began = time.perf_counter()
                for n in range(start, start + 100):
                    ovs.add_internal_port("br-int", f"qr-{n:011d}", f"port-{n}",
                                          "fa:16:3e:00:00:01")
                add = (time.perf_counter() - began) / 100
                began = time.perf_counter()
                for _ in range(args.listings):
                    ovs.ports("br-int")
                listing = (time.perf_counter() - began) / args.listings
                print(f"{start + 100} ports: one port's transaction {add * 1000:.1f} ms, "
                      f"one listing {listing * 1000:.2f} ms "
                      f"(load {os.getloadavg()[0]:.1f})", flush=True)
    finally:
        fab.destroy()
    return 0


if __name__ == "__main__":
    sys.exit(main())

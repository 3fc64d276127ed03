"""Gratuitous ARP: tell a network that addresses now live behind a device's MAC.

Neighbours that tried a floating IP before it was set up keep a failed (or
another router's) entry for it; an unsolicited ARP updates them, as
upstream's agent does when it adds an address. Run inside the router's
namespace (``ip netns exec NS python -m neutrino.agents.l3.garp DEV IP...
[+ DEV IP...]``: one process for all of a router's devices); standard
library only, no ``arping`` needed.

The announcement is repeated (``SCHEDULE``), as upstream's arping sends
several: a device just plugged into br-int drops everything until the OVS
agent has tagged its port, so a single ARP sent at once was lost, and a
neighbour that had asked for the address in the meantime waited for its
own next probe (a second, the kernel's ``retrans_time``) before it could
reach it.
"""
from __future__ import annotations

import errno
import ipaddress
import socket
import sys
import time
from pathlib import Path

ETH_P_ARP = 0x0806
# seconds after the start at which the addresses are announced again
SCHEDULE = (0.0, 0.1, 0.3, 0.7, 1.5)


def frame(mac: bytes, ip: str) -> bytes:
    """An ARP request for ``ip`` from ``ip`` itself, broadcast."""
    addr = ipaddress.IPv4Address(ip).packed
    eth = b"\xff" * 6 + mac + ETH_P_ARP.to_bytes(2, "big")
    arp = (b"\x00\x01\x08\x00\x06\x04\x00\x01" + mac + addr + b"\x00" * 6 + addr)
    return eth + arp


def announce(device: str, addresses: list[str], schedule: tuple[float, ...] = SCHEDULE) -> None:
    announce_all({device: addresses}, schedule)


def announce_all(by_device: dict[str, list[str]],
                 schedule: tuple[float, ...] = SCHEDULE) -> None:
    """Each device's addresses, every round of ``schedule``."""
    sockets = []
    for device, addresses in by_device.items():
        try:
            mac = bytes.fromhex(Path(f"/sys/class/net/{device}/address").read_text()
                                .strip().replace(":", ""))
            sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        except OSError:
            continue  # the device went away: nothing to announce on it
        try:
            sock.bind((device, ETH_P_ARP))
        except OSError:
            sock.close()
            continue
        sockets.append((sock, mac, addresses))
    started = time.monotonic()
    try:
        for at in schedule:
            time.sleep(max(0.0, started + at - time.monotonic()))
            for sock, mac, addresses in list(sockets):
                for ip in addresses:
                    try:
                        sock.send(frame(mac, ip))
                    except OSError as exc:
                        if exc.errno in (errno.ENODEV, errno.ENXIO):
                            sockets.remove((sock, mac, addresses))  # the device went away
                        break  # not up yet (ENETDOWN): a later round
    finally:
        for sock, _, _ in sockets:
            sock.close()


def parse(argv: list[str]) -> dict[str, list[str]]:
    """``DEV IP... [+ DEV IP...]`` as {device: addresses}."""
    groups: dict[str, list[str]] = {}
    current: list[str] = []
    for arg in [*argv, "+"]:
        if arg != "+":
            current.append(arg)
        elif current:
            groups.setdefault(current[0], []).extend(current[1:])
            current = []
    return groups


if __name__ == "__main__":
    announce_all(parse(sys.argv[1:]))

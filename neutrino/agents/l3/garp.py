"""Gratuitous ARP: tell a network that addresses now live behind a device's MAC.

Neighbours that tried a floating IP before it was set up keep a failed (or
another router's) entry for it; an unsolicited ARP updates them, as
upstream's agent does when it adds an address. Run inside the router's
namespace (``ip netns exec NS python -m neutrino.agents.l3.garp DEV IP...``);
standard library only, no ``arping`` needed.
"""
from __future__ import annotations

import ipaddress
import socket
import sys
from pathlib import Path

ETH_P_ARP = 0x0806


def frame(mac: bytes, ip: str) -> bytes:
    """An ARP request for ``ip`` from ``ip`` itself, broadcast."""
    addr = ipaddress.IPv4Address(ip).packed
    eth = b"\xff" * 6 + mac + ETH_P_ARP.to_bytes(2, "big")
    arp = (b"\x00\x01\x08\x00\x06\x04\x00\x01" + mac + addr + b"\x00" * 6 + addr)
    return eth + arp


def announce(device: str, addresses: list[str]) -> None:
    mac = bytes.fromhex(Path(f"/sys/class/net/{device}/address").read_text()
                        .strip().replace(":", ""))
    with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as sock:
        sock.bind((device, ETH_P_ARP))
        for ip in addresses:
            sock.send(frame(mac, ip))


if __name__ == "__main__":
    announce(sys.argv[1], sys.argv[2:])

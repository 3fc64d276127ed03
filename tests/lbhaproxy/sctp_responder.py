"""An SCTP member for the load-balancer tests on a kernel without SCTP
sockets: ``python -m tests.lbhaproxy.sctp_responder PORT`` answers every
INIT to PORT with an INIT ACK from a raw socket (the start of SCTP's
handshake, what a health check and the tests look for)."""
from __future__ import annotations

import socket
import struct
import sys

from neutrino.agents.loadbalancer.probe import INIT, INIT_ACK, SCTP, crc32c


def init_ack(src_port: int, dst_port: int, peer_tag: int) -> bytes:
    cookie = struct.pack("!HH", 7, 8) + b"cake"  # a State Cookie parameter
    chunk = struct.pack("!BBHIIHHI", INIT_ACK, 0, 20 + len(cookie), 0x5EC7A6, 65535, 1, 1, 1)
    packet = struct.pack("!HHII", src_port, dst_port, peer_tag, 0) + chunk + cookie
    return packet[:8] + struct.pack("<I", crc32c(packet)) + packet[12:]


def main() -> None:
    port = int(sys.argv[1])
    with socket.socket(socket.AF_INET, socket.SOCK_RAW, SCTP) as sock:
        while True:
            data, peer = sock.recvfrom(65535)
            sctp = data[(data[0] & 0x0F) * 4:]
            if len(sctp) < 20:
                continue
            sport, dport = struct.unpack("!HH", sctp[:4])
            if dport == port and sctp[12] == INIT:
                tag = struct.unpack("!I", sctp[16:20])[0]
                sock.sendto(init_ack(dport, sport, tag), (peer[0], 0))


if __name__ == "__main__":
    main()

"""A UDP member for the load-balancer tests, and its client.

``python -m tests.lbhaproxy.udp_backend serve NAME PORT`` answers every
datagram with NAME; ``python -m tests.lbhaproxy.udp_backend ask HOST PORT N``
sends N datagrams, each from a socket of its own (so each is a new flow
to the load balancer), and prints one answer per line (``-`` for none).
"""
from __future__ import annotations

import socket
import sys


def serve(name: str, port: int) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("0.0.0.0", port))
        while True:
            _, peer = sock.recvfrom(2048)
            sock.sendto(name.encode(), peer)


def ask(host: str, port: int, times: int, timeout: float = 1.0) -> list[str]:
    answers = []
    for _ in range(times):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.settimeout(timeout)
            try:
                sock.sendto(b"who?", (host, port))
                answers.append(sock.recv(2048).decode())
            except OSError:
                answers.append("-")
    return answers


def main() -> None:
    if sys.argv[1] == "serve":
        serve(sys.argv[2], int(sys.argv[3]))
    else:
        print("\n".join(ask(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))))


if __name__ == "__main__":
    main()

"""A minimal TFTP exchange for conntrack helper tests: what matters is that the
server answers a read request from a new port, as TFTP does, so the answer
is no reply of the request's connection and passes a NAT only when the
kernel's tftp helper expects it."""
from __future__ import annotations

import subprocess
import sys

SERVER = ("import socket\n"
          "s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
          "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
          "s.bind(('0.0.0.0', 69))\n"
          "while True:\n"
          "    data, peer = s.recvfrom(512)\n"
          "    if data[:2] != b'\\x00\\x01':\n"
          "        continue\n"
          "    if data[2:].split(b'\\x00')[0] == b'same-port':\n"
          "        s.sendto(b'\\x00\\x03\\x00\\x01data', peer)\n"
          "        continue\n"
          "    r=socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
          "    r.bind(('0.0.0.0', 0)); r.sendto(b'\\x00\\x03\\x00\\x01data', peer); r.close()\n")

CLIENT = ("import socket,sys\n"
          "s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(1.5)\n"
          "s.sendto(b'\\x00\\x01' + sys.argv[2].encode() + b'\\x00octet\\x00', (sys.argv[1], 69))\n"
          "s.recvfrom(512)\n")


def serve(ns: str) -> subprocess.Popen[bytes]:
    """The server in ``ns`` (the caller kills it)."""
    return subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-c", SERVER],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def answered(ns: str, server_ip: str, same_port: bool = False, tries: int = 3) -> bool:
    """A read request from ``ns`` (a new client port each try) gets its first block."""
    name = "same-port" if same_port else "file"
    for _ in range(tries):
        done = subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c", CLIENT,
                               server_ip, name], capture_output=True, timeout=30)
        if done.returncode == 0:
            return True
    return False

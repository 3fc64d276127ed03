"""The probes of UDP and SCTP pools' members, run inside a load balancer's namespace
(``ip netns exec qlbaas-<id> python -m neutrino.agents.loadbalancer.probe``):
the checks as JSON on stdin (``udp_health.Check`` fields), ``{member id:
passed}`` as JSON on stdout. All of one load balancer's checks run at once,
each within its timeout.

The standard library only: the agent starts this once per round of checks.
"""
from __future__ import annotations

import http.client
import json
import os
import select
import socket
import struct
import subprocess
import sys
import threading
import time
from typing import Any

SCTP = 132
INIT, INIT_ACK, ABORT = 1, 2, 6


def _crc32c_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_CRC32C = _crc32c_table()


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli), SCTP's checksum."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _CRC32C[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def sctp_init(src_port: int, dst_port: int, tag: int) -> bytes:
    """An SCTP packet holding one INIT chunk (RFC 9260 3.3.2), checksummed."""
    chunk = struct.pack("!BBHIIHHI", INIT, 0, 20, tag, 65535, 1, 1, tag)
    packet = struct.pack("!HHII", src_port, dst_port, 0, 0) + chunk
    return packet[:8] + struct.pack("<I", crc32c(packet)) + packet[12:]


def sctp_check(address: str, port: int, timeout: float) -> bool:
    """An INIT to the member passes when answered by an INIT ACK (an ABORT,
    or nothing, fails): SCTP's handshake started, as Octavia's check does,
    from a raw socket (this kernel may have no SCTP sockets)."""
    src_port = 1024 + int.from_bytes(os.urandom(2), "big") % 60000
    tag = 1 + int.from_bytes(os.urandom(4), "big") % 0xFFFFFFFE
    with socket.socket(socket.AF_INET, socket.SOCK_RAW, SCTP) as sock:
        sock.sendto(sctp_init(src_port, port, tag), (address, 0))
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            if not select.select([sock], [], [], left)[0]:
                break
            data, peer = sock.recvfrom(65535)
            header = (data[0] & 0x0F) * 4  # raw IPv4 sockets give the IP header
            sctp = data[header:]
            if peer[0] != address or len(sctp) < 13:
                continue
            sport, dport, vtag = struct.unpack("!HHI", sctp[:8])
            if sport == port and dport == src_port and vtag == tag:
                return sctp[12] == INIT_ACK
    return False


def udp_connect(address: str, port: int, timeout: float) -> bool:
    """A datagram to the member fails only when answered by an ICMP port
    unreachable (a reply, or silence, passes)."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as sock:
        sock.settimeout(timeout)
        try:
            sock.connect((address, port))
            sock.send(b"\n")
            sock.recv(2048)
        except ConnectionRefusedError:
            return False
        except TimeoutError:
            return True
        except OSError:
            return False
    return True


def tcp_connect(address: str, port: int, timeout: float) -> bool:
    try:
        with socket.create_connection((address, port), timeout=timeout):
            return True
    except OSError:
        return False


def ping(address: str, timeout: float) -> bool:
    argv = ["ping", "-6" if ":" in address else "-4", "-q", "-n", "-c", "1",
            "-W", str(max(1, int(timeout))), address]
    try:
        return subprocess.run(argv, capture_output=True, timeout=timeout + 2).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def expected(codes: str, status: int) -> bool:
    """``expected_codes`` (``200``, ``200,202``, ``200-204``) accepts ``status``."""
    for part in codes.replace(" ", "").split(","):
        if "-" in part:
            low, high = part.split("-", 1)
            if int(low) <= status <= int(high):
                return True
        elif part and int(part) == status:
            return True
    return False


def http_check(address: str, port: int, timeout: float, method: str, path: str,
               codes: str) -> bool:
    conn = http.client.HTTPConnection(address, port, timeout=timeout)
    try:
        conn.request(method, path)
        return expected(codes, conn.getresponse().status)
    except (OSError, http.client.HTTPException):
        return False
    finally:
        conn.close()


def run_check(check: dict[str, Any]) -> bool:
    kind, address, port = check["type"], check["address"], int(check["port"])
    timeout = float(check["timeout"])
    if kind == "UDP-CONNECT":
        return udp_connect(address, port, timeout)
    if kind == "TCP":
        return tcp_connect(address, port, timeout)
    if kind == "SCTP":
        return sctp_check(address, port, timeout)
    if kind == "PING":
        return ping(address, timeout)
    if kind == "HTTP":
        return http_check(address, port, timeout, check.get("http_method") or "GET",
                          check.get("url_path") or "/", check.get("expected_codes") or "200")
    return False


def run_all(checks: list[dict[str, Any]]) -> dict[str, bool]:
    results: dict[str, bool] = {}

    def one(check: dict[str, Any]) -> None:
        results[check["member_id"]] = run_check(check)

    threads = [threading.Thread(target=one, args=(c,), daemon=True) for c in checks]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def main() -> None:
    json.dump(run_all(json.load(sys.stdin)), sys.stdout)


if __name__ == "__main__":
    main()

"""The probes of UDP pools' members, run inside a load balancer's namespace
(``ip netns exec qlbaas-<id> python -m neutrino.agents.loadbalancer.probe``):
the checks as JSON on stdin (``udp_health.Check`` fields), ``{member id:
passed}`` as JSON on stdout. All of one load balancer's checks run at once,
each within its timeout.

The standard library only: the agent starts this once per round of checks.
"""
from __future__ import annotations

import http.client
import json
import socket
import subprocess
import sys
import threading
from typing import Any


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

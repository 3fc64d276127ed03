"""FWaaS on a router: what the L3 agent's ``fwaas_v2`` extension renders from a
router's ``_firewall_groups`` (pure), and real packets between two networks
behind a router, allowed, dropped and rejected rule by rule, established
connections kept across a policy change that still allows them."""
from __future__ import annotations

import subprocess
import sys
import uuid
from typing import Any, Iterator

import pytest

from neutrino.agents.l3 import fwaas
from neutrino.agents.l3.router import RouterManager
from tests.l3host.fabric import Fabric, namespaces, need_root, sh
from tests.l3host.routers import interface, router
from tests.waiting import wait_for

ECHO_LINES = ("import socket,sys,threading\n"
              "s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
              "s.bind(('0.0.0.0', int(sys.argv[1]))); s.listen(16)\n"
              "def serve(c):\n"
              "    f=c.makefile('rwb', 0)\n"
              "    for line in f: f.write(line)\n"
              "while True:\n"
              "    c,a=s.accept(); threading.Thread(target=serve, args=(c,), daemon=True).start()\n")
# one connection kept open: each line read is sent, its echo printed (or TIMEOUT)
TALK = ("import socket,sys\n"
        "s=socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=3)\n"
        "f=s.makefile('rwb', 0)\n"
        "print('CONNECTED', flush=True)\n"
        "for line in sys.stdin:\n"
        "    f.write(line.encode())\n"
        "    try:\n"
        "        print(f.readline().decode().strip() or 'CLOSED', flush=True)\n"
        "    except OSError:\n"
        "        print('TIMEOUT', flush=True)\n")
CONNECT = ("import socket,sys\n"
           "try:\n"
           "    socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=2)\n"
           "    print('OPEN')\n"
           "except ConnectionRefusedError:\n"
           "    print('REFUSED')\n"
           "except OSError:\n"
           "    print('TIMEOUT')\n")


def rule(action: str, protocol: str | None = None, port: str | None = None,
         version: int = 4, enabled: bool = True, source: str | None = None) -> dict[str, Any]:
    return {"id": str(uuid.uuid4()), "action": action, "protocol": protocol,
            "destination_port": port, "source_port": None, "ip_version": version,
            "source_ip_address": source, "destination_ip_address": None, "enabled": enabled}


def group(ports: list[str], ingress: list[dict[str, Any]], egress: list[dict[str, Any]],
          admin_state_up: bool = True) -> dict[str, Any]:
    return {"id": str(uuid.uuid4()), "ports": ports, "admin_state_up": admin_state_up,
            "ingress_rule_list": ingress, "egress_rule_list": egress}


# -- what the extension renders (pure) -------------------------------------------------

def test_a_group_becomes_two_stateful_chains_per_interface_with_enabled_rules_in_order() -> None:
    qr = interface("10.100.1.0/24", "10.100.1.1", "fa:16:3e:00:0a:01")
    r = router([qr])
    g = group([qr["id"], "a-port-of-another-router"],
              [rule("allow", "tcp", "22"), rule("deny", "udp", enabled=False),
               rule("reject", "icmp", version=6), rule("allow", source="10.0.0.0/8")],
              [rule("allow", "udp", "1000:2000")])
    r["_firewall_groups"] = [g]
    fws = fwaas.port_firewalls(r)
    dev = "qr-" + qr["id"][:11]
    assert [f.device for f in fws] == [dev]
    script = fwaas.replace_script(fws)
    assert script.startswith("table inet neutrino_fwaas\ndelete table inet neutrino_fwaas\n")
    assert (f"  chain i-{dev} {{\n"
            "    ct state invalid drop\n"
            "    ct direction reply accept\n"
            "    ct state related accept\n"
            "    meta nfproto ipv4 meta l4proto 6 th dport 22 accept\n"
            "    meta nfproto ipv6 meta l4proto 58 reject\n"
            "    meta nfproto ipv4 ip saddr 10.0.0.0/8 accept\n"
            "    drop\n"
            "  }\n") in script
    assert "    meta nfproto ipv4 meta l4proto 17 th dport 1000-2000 accept\n" in script
    assert (f'    oifname "{dev}" jump i-{dev}\n'
            f'    iifname "{dev}" jump o-{dev}\n') in script
    assert fwaas.statuses(fws, True) == {g["id"]: "ACTIVE"}
    assert fwaas.statuses(fws, False) == {g["id"]: "ERROR"}


def test_a_group_set_down_drops_everything_and_no_group_filters_nothing() -> None:
    qr = interface("10.100.1.0/24", "10.100.1.1", "fa:16:3e:00:0a:01")
    r = router([qr])
    r["_firewall_groups"] = [group([qr["id"]], [rule("allow")], [rule("allow")],
                                   admin_state_up=False)]
    fws = fwaas.port_firewalls(r)
    dev = "qr-" + qr["id"][:11]
    assert f"  chain i-{dev} {{\n    ct state invalid drop\n    drop\n  }}\n" in (
        fwaas.replace_script(fws))
    assert set(fwaas.statuses(fws, True).values()) == {"DOWN"}
    r["_firewall_groups"] = []
    assert fwaas.replace_script(fwaas.port_firewalls(r)) == fwaas.delete_script()


# -- real packets ------------------------------------------------------------------------

@pytest.fixture
def two_networks() -> Iterator[dict[str, Any]]:
    """A router between two networks, an instance on each, servers on the second."""
    need_root()
    fabric = Fabric()
    r: dict[str, Any] = {}
    talkers: list[subprocess.Popen[str]] = []
    try:
        qr1 = interface("10.101.1.0/24", "10.101.1.1", "fa:16:3e:00:1a:01")
        qr2 = interface("10.101.2.0/24", "10.101.2.1", "fa:16:3e:00:1a:02")
        vm1 = fabric.host("vm1", qr1["network_id"], "10.101.1.11/24", "10.101.1.1",
                          "fa:16:3e:00:1b:11")
        vm2 = fabric.host("vm2", qr2["network_id"], "10.101.2.12/24", "10.101.2.1",
                          "fa:16:3e:00:1b:12")
        for port in (8080, 9090):
            fabric.servers.append(subprocess.Popen(
                ["ip", "netns", "exec", vm2, sys.executable, "-c", ECHO_LINES, str(port)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        r = router([qr1, qr2])
        manager = RouterManager(fabric, firewall=True)
        yield {"fabric": fabric, "router": r, "manager": manager, "vm1": vm1, "vm2": vm2,
               "qr2": qr2["id"], "talkers": talkers}
    finally:
        for proc in talkers:
            proc.kill()
            proc.wait()
        if r and f"qrouter-{r['id']}" in namespaces():
            sh("ip", "netns", "delete", f"qrouter-{r['id']}", check=False)
        fabric.cleanup()


def connect(ns: str, address: str, port: int) -> str:
    """One connection attempt from ``ns``: OPEN, REFUSED or TIMEOUT.

    One attempt, never retried on REFUSED: a router answers rejected SYNs
    with ICMP errors its kernel rate-limits per destination, so a burst of
    tries would end in a TIMEOUT the rule did not decide. Wait for a server
    still starting with ``wait_for(... == "OPEN")`` instead."""
    return str(sh("ip", "netns", "exec", ns, sys.executable, "-c", CONNECT, address,
                  str(port), check=False).stdout.strip())


def _connect(ns: str, port: int) -> str:
    return connect(ns, "10.101.2.12", port)


def _apply(env: dict[str, Any], *groups: dict[str, Any]) -> None:
    env["router"]["_firewall_groups"] = list(groups)
    result = env["manager"].apply(env["router"])
    assert result.error is None
    assert set(result.firewall_statuses) == {g["id"] for g in groups}


def test_traffic_into_a_network_is_allowed_dropped_and_rejected_rule_by_rule(
        two_networks: dict[str, Any]) -> None:
    env = two_networks
    fabric, vm1, vm2 = env["fabric"], env["vm1"], env["vm2"]
    _apply(env)
    for port in (8080, 9090):  # the servers may still be starting
        assert wait_for(lambda: _connect(vm1, port) == "OPEN", 10)
    assert fabric.pings(vm1, "10.101.2.12")
    _apply(env, group([env["qr2"]], [rule("allow", "tcp", "8080")], [rule("allow")]))
    assert _connect(vm1, 8080) == "OPEN"
    assert _connect(vm1, 9090) == "TIMEOUT"  # no rule: dropped
    assert not fabric.pings(vm1, "10.101.2.12")
    assert fabric.pings(vm2, "10.101.1.11")  # egress allowed, its replies come back
    _apply(env, group([env["qr2"]], [rule("allow", "tcp", "8080"), rule("reject", "tcp"),
                                     rule("allow", "icmp")], [rule("allow")]))
    assert _connect(vm1, 9090) == "REFUSED"
    assert fabric.pings(vm1, "10.101.2.12")
    # a disabled rule is skipped; an IPv6 rule does not match IPv4
    _apply(env, group([env["qr2"]], [rule("deny", "tcp", "8080", enabled=False),
                                     rule("deny", "tcp", "8080", version=6),
                                     rule("allow", "tcp", "8080")], [rule("allow")]))
    assert _connect(vm1, 8080) == "OPEN"
    # egress denied: the second network starts nothing, but answers what ingress allows
    _apply(env, group([env["qr2"]], [rule("allow", "tcp", "8080")], [rule("deny")]))
    assert not fabric.pings(vm2, "10.101.1.11")
    assert _connect(vm1, 8080) == "OPEN"
    _apply(env)
    assert _connect(vm1, 9090) == "OPEN"


def test_a_policy_change_keeps_the_established_connections_it_still_allows(
        two_networks: dict[str, Any]) -> None:
    env = two_networks
    vm1 = env["vm1"]
    allow_8080 = rule("allow", "tcp", "8080")
    g = group([env["qr2"]], [allow_8080], [rule("allow")])
    _apply(env, g)
    assert _connect(vm1, 8080) == "OPEN"
    talker = subprocess.Popen(["ip", "netns", "exec", vm1, sys.executable, "-c", TALK,
                               "10.101.2.12", "8080"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    env["talkers"].append(talker)
    assert talker.stdin is not None and talker.stdout is not None

    def say(word: str) -> str:
        assert talker.stdin is not None and talker.stdout is not None
        talker.stdin.write(word + "\n")
        talker.stdin.flush()
        return talker.stdout.readline().strip()

    assert talker.stdout.readline().strip() == "CONNECTED"
    assert say("one") == "one"
    # the new policy still allows 8080 (after a rule of its own): the connection goes on
    _apply(env, group([env["qr2"]], [rule("allow", "icmp"), allow_8080], [rule("allow")]))
    assert say("two") == "two"
    # the policy no longer allows it: the connection's next packet is dropped
    _apply(env, group([env["qr2"]], [rule("allow", "icmp")], [rule("allow")]))
    assert say("three") == "TIMEOUT"

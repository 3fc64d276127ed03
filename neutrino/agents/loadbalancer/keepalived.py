"""keepalived between the two haproxy of an ACTIVE_STANDBY load balancer (pure).

Each host's load balancer has a port of its own on the VIP network; VRRP
over it (unicast to the other host's port address) elects the master,
which carries the VIP address and announces it with gratuitous ARPs. Both
start as BACKUP with ``nopreempt``, the first port's host with the higher
priority, so a recovered host does not take the VIP back. A master whose
haproxy is gone gives the VIP up (the check script tracks its master
process). haproxy binds the VIP on both hosts (``ip_nonlocal_bind``), so
the backup takes over without a restart.
"""
from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Vrrp:
    vip: str  # address/prefixlen
    router_id: int
    priority: int
    peers: tuple[str, ...]


def config(vrrp: Vrrp, device: str, own_address: str, check_script: str, lb_id: str) -> str:
    lines = ["global_defs {", f"    router_id lb-{lb_id[:8]}", "}",
             "vrrp_script check_haproxy {", f'    script "{check_script}"',
             "    interval 1", "    fall 2", "    rise 2", "}",
             "vrrp_instance lb {",
             "    state BACKUP",
             f"    interface {device}",
             f"    virtual_router_id {vrrp.router_id}",
             f"    priority {vrrp.priority}",
             "    nopreempt",
             "    advert_int 1",
             f"    unicast_src_ip {own_address}",
             "    unicast_peer {", *(f"        {p}" for p in vrrp.peers), "    }",
             "    virtual_ipaddress {", f"        {vrrp.vip} dev {device}", "    }",
             "    track_script {", "        check_haproxy", "    }",
             "}"]
    return "\n".join(lines) + "\n"


def check_script(haproxy_pid_file: str) -> str:
    return f'#!/bin/sh\nkill -0 "$(cat {haproxy_pid_file})" 2>/dev/null\n'

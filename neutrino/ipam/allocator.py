"""Choosing IP addresses for ports, safe across processes and servers.

Addresses are tried at random among the first ``WINDOW`` addresses of the
allocation pools (upstream picks among the first ``WINDOW`` free ones),
several at once, and checked with one indexed query. A subnet whose first
``WINDOW`` addresses are all taken (a thousand ports) is tried next in a
window ``GROWTH`` times larger, and so on: a round or two more instead of
reading every allocation of the subnet on each create, whose cost grows
with the ports of the subnet. Only a nearly
full subnet falls back to walking the pools. The primary key (subnet_id,
ip_address) is the final arbiter: a concurrent writer that took the same
address makes the insert fail, and the whole operation is retried
(``db.engine.retrying``).
"""
from __future__ import annotations

import random
import socket
from typing import Any, Iterable

import netaddr
import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.db import tables as t
from neutrino.ipam import subnet_rules

SAMPLE = 16  # random candidates per round
ROUNDS = 3  # at least, the last window repeated when the pools are small
# Upstream picks at random among the first free addresses of the pools, not
# anywhere in them: IPv6 ports get small addresses (2001:db8::1c, not
# 2001:db8::57d6:ba10:79b3:a694). This is the size of that window.
WINDOW = 1000
GROWTH = 4  # each further round's window is this many times larger
WIDEST = 6  # windows tried at most: up to WINDOW * GROWTH ** 5 addresses


def generate_mac(base_mac: str) -> str:
    """A random MAC under ``base_mac``, by upstream's rule: the first three
    octets are kept, the fourth too when it is not zero, the rest random."""
    parts = base_mac.lower().split(":")
    keep = 4 if parts[3] != "00" else 3
    return ":".join(parts[:keep] + [f"{random.randint(0, 255):02x}"
                                    for _ in range(6 - keep)])


# Built once: every port create reads its subnet's pools and asks which
# of a few candidate addresses are taken.
_POOLS = (sa.select(t.allocation_pools.c.first_ip, t.allocation_pools.c.last_ip)
          .where(t.allocation_pools.c.subnet_id == sa.bindparam("subnet"))
          .order_by(t.allocation_pools.c.id))
_TAKEN = sa.select(t.ipallocations.c.ip_address).where(
    t.ipallocations.c.subnet_id == sa.bindparam("subnet"),
    t.ipallocations.c.ip_address.in_(sa.bindparam("ips", expanding=True)))


# In a subnet's dict: its pools' (first, last) addresses, when they were
# read with it.
POOLS = "_pools"


def _pools(conn: Connection, subnet: dict[str, Any]) -> list[netaddr.IPRange]:
    bounds = subnet.get(POOLS)
    if bounds is None:
        bounds = conn.execute(_POOLS, {"subnet": subnet["id"]}).all()
    return [netaddr.IPRange(first, last) for first, last in bounds]


def _taken(conn: Connection, subnet_id: str, candidates: Iterable[str]) -> set[str]:
    cands = list(candidates)
    if not cands:
        return set()
    return {r.ip_address for r in conn.execute(_TAKEN, {"subnet": subnet_id, "ips": cands})}


def windows(total: int) -> list[int]:
    """The rounds' window sizes for pools of ``total`` addresses: growing
    until they cover the pools, the last repeated up to ``ROUNDS`` rounds."""
    out = [min(total, WINDOW)]
    while out[-1] < total and len(out) < WIDEST:
        out.append(min(total, out[-1] * GROWTH))
    return out + out[-1:] * (ROUNDS - len(out))


def _random_candidates(pools: list[netaddr.IPRange], count: int, window: int) -> list[str]:
    sizes = [p.size for p in pools]
    total = min(sum(sizes), window)
    picks: set[int] = set()
    for _ in range(min(count, total)):
        n = random.randrange(total)
        for pool, size in zip(pools, sizes):
            if n < size:
                picks.add(pool.first + n)
                break
            n -= size
    version = pools[0].version
    return [str(netaddr.IPAddress(p, version)) for p in picks]


def pick_address(conn: Connection, subnet: dict[str, Any]) -> str | None:
    """A free address from the subnet's pools, or None when it is full."""
    pools = _pools(conn, subnet)
    if not pools:
        return None
    for window in windows(sum(p.size for p in pools)):
        cands = _random_candidates(pools, SAMPLE, window)
        taken = _taken(conn, subnet["id"], cands)
        free = [c for c in cands if c not in taken]
        if free:
            return random.choice(free)
    used = set(map(_as_int, conn.execute(
        sa.select(t.ipallocations.c.ip_address)
        .where(t.ipallocations.c.subnet_id == subnet["id"])).scalars().all()))
    free_window = first_free([(p.first, p.last) for p in pools], used, WINDOW)
    if not free_window:
        return None
    # At random within the window: concurrent writers on a nearly full
    # subnet spread over the last free addresses instead of all racing for
    # the lowest one (each lost race costs a whole-operation retry).
    return str(netaddr.IPAddress(random.choice(free_window), pools[0].version))


def _as_int(ip: str) -> int:
    """An address as an integer, through the C parser: a nearly full subnet
    has every one of its allocations converted on each pick."""
    family = socket.AF_INET6 if ":" in ip else socket.AF_INET
    return int.from_bytes(socket.inet_pton(family, ip), "big")


def first_free(pools: list[tuple[int, int]], used: set[int], count: int) -> list[int]:
    """The first ``count`` addresses of the pools (inclusive integer ranges,
    in order) that are not in ``used``.

    Plain integers and one pass: the walk stops after ``count`` free
    addresses, so it costs the addresses taken before them, not the size of
    the subnet, and no set algebra over every allocation (which was the bulk
    of a port create once a subnet held a thousand ports)."""
    found: list[int] = []
    for first, last in pools:
        addr = first
        while addr <= last and len(found) < count:
            if addr not in used:
                found.append(addr)
            addr += 1
        if len(found) >= count:
            break
    return found


def check_requested(conn: Connection, subnet: dict[str, Any], ip: str) -> None:
    """An explicitly requested address must be inside the subnet and free."""
    net = netaddr.IPNetwork(subnet["cidr"])
    addr = netaddr.IPAddress(ip)
    if addr not in net or subnet_rules.gateway_is_invalid(net, ip):
        raise errors.InvalidIpForSubnet(ip_address=ip)
    if _taken(conn, subnet["id"], [ip]):
        raise errors.IpAddressAlreadyAllocated(ip=ip, subnet_id=subnet["id"])


def is_taken(conn: Connection, subnet_id: str, ip: str) -> bool:
    return bool(_taken(conn, subnet_id, [ip]))

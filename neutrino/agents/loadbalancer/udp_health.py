"""The health of UDP and SCTP pools' members (pure): which checks are due,
and what their results make of each member.

haproxy checks the members of the pools it carries; UDP and SCTP pools are
nftables' (``nft_udp``), so the agent checks their members itself, through
the host adapter's probes (``probe``), with Octavia's semantics:
``UDP-CONNECT`` sends a datagram and fails only on an ICMP port
unreachable (silence passes, as ``nc -uz`` judges it), ``SCTP`` an INIT
that must be answered by an INIT ACK, ``PING`` an echo,
``TCP`` a connect, ``HTTP`` a request whose status must be among
``expected_codes``. As haproxy does, a member starts in rotation; it leaves
after ``max_retries_down`` failures in a row (ERROR) and comes back after
``max_retries`` passes in a row (ONLINE). Checks of a member run every
``delay`` seconds, each waiting at most ``timeout``; the member's
``monitor_address``/``monitor_port`` are checked when given.
"""
from __future__ import annotations

import dataclasses
from typing import Mapping

from neutrino.resources.lb_graph import ERROR, ONLINE, LoadBalancer
from neutrino.resources.lb_haproxy import by_nftables, live


@dataclasses.dataclass(frozen=True)
class Check:
    """One probe of one member, as the host adapter runs it."""

    member_id: str
    type: str  # UDP-CONNECT, SCTP, PING, TCP, HTTP
    address: str
    port: int
    timeout: float
    http_method: str = "GET"
    url_path: str = "/"
    expected_codes: str = "200"


@dataclasses.dataclass(frozen=True)
class Health:
    """What the checks made of a member so far."""

    up: bool = True  # in rotation
    passes: int = 0  # in a row
    fails: int = 0  # in a row
    next_at: float = float("-inf")  # when its next check is due


@dataclasses.dataclass(frozen=True)
class Monitored:
    check: Check
    delay: float
    rise: int
    fall: int


def monitored(lb: LoadBalancer) -> dict[str, Monitored]:
    """The members of ``lb``'s UDP pools that a monitor checks, by id."""
    out: dict[str, Monitored] = {}
    for pool in live(lb.pools):
        hm = pool.healthmonitor
        if not by_nftables(pool.protocol) or hm is None or not hm.admin_state_up or (
                hm.provisioning_status == "PENDING_DELETE") or not pool.admin_state_up:
            continue
        for m in live(pool.members):
            if not m.admin_state_up:
                continue
            check = Check(m.id, hm.type, m.monitor_address or m.address,
                          m.monitor_port or m.protocol_port, float(hm.timeout),
                          hm.http_method or "GET", hm.url_path or "/",
                          hm.expected_codes or "200")
            out[m.id] = Monitored(check, float(hm.delay), max(1, hm.max_retries),
                                  max(1, hm.max_retries_down))
    return out


def due(lb: LoadBalancer, state: Mapping[str, Health], now: float) -> list[Check]:
    """The checks to run now."""
    return [w.check for mid, w in sorted(monitored(lb).items())
            if state.get(mid, Health()).next_at <= now]


def record(lb: LoadBalancer, state: Mapping[str, Health], results: Mapping[str, bool],
           now: float) -> dict[str, Health]:
    """The members' health after ``results`` (member id -> passed); members
    no longer monitored are forgotten (they start afresh if monitored again)."""
    out: dict[str, Health] = {}
    for mid, watch in monitored(lb).items():
        h = state.get(mid, Health())
        if mid in results:
            if results[mid]:
                passes, fails = h.passes + 1, 0
                up = h.up or passes >= watch.rise
            else:
                passes, fails = 0, h.fails + 1
                up = h.up and fails < watch.fall
            h = Health(up, passes, fails, now + watch.delay)
        out[mid] = h
    return out


def down(state: Mapping[str, Health]) -> frozenset[str]:
    """The members out of rotation."""
    return frozenset(mid for mid, h in state.items() if not h.up)


def member_statuses(lb: LoadBalancer, state: Mapping[str, Health]) -> dict[str, str]:
    """The operating status of each checked member (ONLINE or ERROR); members
    without a monitor, or down, are the health report's to judge."""
    return {mid: ONLINE if state.get(mid, Health()).up else ERROR
            for mid in monitored(lb)}


def next_due(lb: LoadBalancer, state: Mapping[str, Health]) -> float | None:
    """When the next check is due (None: no member is checked)."""
    times = [state.get(mid, Health()).next_at for mid in monitored(lb)]
    return min(times) if times else None

"""What haproxy's statistics say about a load balancer (pure).

haproxy answers ``show stat`` on its stats socket with one CSV row per
frontend (a listener), backend (a pool for one listener) and server (a
member). From them come the operating statuses Octavia's health manager
reports, worked out as it does: a member ONLINE while its checks pass,
ERROR once they fail, NO_MONITOR without a monitor, DRAINING at weight 0
or drained, OFFLINE when disabled; a pool ERROR when no member answers and
DEGRADED when some do not; a listener ONLINE while it accepts and DEGRADED
once full; the load balancer DEGRADED when any of its listeners or pools
is not ONLINE. Anything administratively down is OFFLINE. And the
listeners' counters, which the API sums into the load balancer's.

UDP listeners have no row there (nftables carries them): a UDP listener
is ONLINE while up, its members' statuses are the agent's own checks'
(``udp_health.member_statuses``), its pool judged from them as above, and
its counters are the nftables counters of its table and its flows in
conntrack (``udp_listener_stats``).
"""
from __future__ import annotations

import csv
import io
import json
from typing import Any, Mapping

from neutrino.agents.loadbalancer.nft_udp import counter_names, udp_listeners
from neutrino.resources.lb_graph import (
    DEGRADED,
    DRAINING,
    ERROR,
    NO_MONITOR,
    OFFLINE,
    ONLINE,
    PENDING_DELETE,
    LoadBalancer,
    Pool,
)
from neutrino.resources.lb_haproxy import by_nftables, live

# the kinds of object a status report names (the provider interface's keys)
LOADBALANCERS, LISTENERS, POOLS, MEMBERS = "loadbalancers", "listeners", "pools", "members"
HEALTHMONITORS, L7POLICIES, L7RULES = "healthmonitors", "l7policies", "l7rules"
_RANK = {ONLINE: 0, NO_MONITOR: 0, DRAINING: 1, OFFLINE: 1, DEGRADED: 2, ERROR: 3}


def parse_stat(text: str) -> list[dict[str, str]]:
    """``show stat`` output (CSV under a ``# `` header) as rows."""
    text = text.lstrip()
    if text.startswith("# "):
        text = text[2:]
    return [dict(row) for row in csv.DictReader(io.StringIO(text)) if row.get("pxname")]


def member_status(row: dict[str, str] | None, monitored: bool) -> str:
    if row is None:
        return OFFLINE
    status = row.get("status", "").split(" ")[0]
    if status == "MAINT" or status.startswith("MAINT"):
        return OFFLINE
    if status == "DRAIN" or (status == "UP" and row.get("weight") == "0"):
        return DRAINING
    if status == "no" or not monitored:  # "no check"
        return NO_MONITOR
    if status in ("UP", "NOLB"):
        return ONLINE
    return ERROR


def _worst(statuses: list[str], default: str = ONLINE) -> str:
    return max(statuses, key=lambda s: _RANK.get(s, 0)) if statuses else default


def statuses(lb: LoadBalancer, rows: list[dict[str, str]],
             udp_members: Mapping[str, str] | None = None) -> list[dict[str, str]]:
    """Each object's operating status as ``{"kind", "id", "operating_status"}``;
    ``udp_members``: the checked UDP members' statuses."""
    frontends = {r["pxname"]: r for r in rows if r.get("svname") == "FRONTEND"}
    backends = {r["pxname"]: r for r in rows if r.get("svname") == "BACKEND"}
    servers: dict[tuple[str, str], dict[str, str]] = {
        (r["pxname"], r["svname"]): r for r in rows
        if r.get("svname") not in ("FRONTEND", "BACKEND")}
    out: list[dict[str, str]] = []

    def add(kind: str, oid: str, status: str) -> None:
        out.append({"kind": kind, "id": oid, "operating_status": status})

    listener_states: list[str] = []
    for listener in live(lb.listeners):
        row = frontends.get(listener.id)
        if by_nftables(listener.protocol) and listener.admin_state_up and lb.admin_state_up:
            state = ONLINE
        elif not (listener.admin_state_up and lb.admin_state_up) or row is None:
            state = OFFLINE
        else:
            state = {"OPEN": ONLINE, "FULL": DEGRADED}.get(row.get("status", ""), OFFLINE)
        listener_states.append(state)
        add(LISTENERS, listener.id, state)
        for policy in live(listener.l7policies):
            add(L7POLICIES, policy.id, _up(policy.admin_state_up))
            for rule in live(policy.rules):
                add(L7RULES, rule.id, _up(rule.admin_state_up))
    pool_states = [s for s in (
        _udp_pool(lb, pool, udp_members or {}, add) if by_nftables(pool.protocol)
        else _pool(lb, pool, backends, servers, add)
        for pool in live(lb.pools)) if s is not None]
    if not lb.admin_state_up:
        lb_state = OFFLINE
    else:
        worst = _worst(listener_states + pool_states)
        lb_state = ONLINE if _RANK.get(worst, 0) < _RANK[DEGRADED] else DEGRADED
    add(LOADBALANCERS, lb.id, lb_state)
    return out


def _up(admin_state_up: bool) -> str:
    return ONLINE if admin_state_up else OFFLINE


def _reported_down(lb: LoadBalancer, pool: Pool, add: Any) -> bool:
    """Report the pool's monitor (unless being deleted); and when the pool or
    its load balancer is down, the pool and its members OFFLINE: then True."""
    hm = pool.healthmonitor
    if hm is not None and hm.provisioning_status != PENDING_DELETE:
        add(HEALTHMONITORS, hm.id, _up(hm.admin_state_up))
    if pool.admin_state_up and lb.admin_state_up:
        return False
    for member in live(pool.members):
        add(MEMBERS, member.id, OFFLINE)
    add(POOLS, pool.id, OFFLINE)
    return True


def _pool(lb: LoadBalancer, pool: Pool, backends: dict[str, dict[str, str]],
          servers: dict[tuple[str, str], dict[str, str]], add: Any) -> str | None:
    """Report the pool, its members and monitor; the pool's status (None
    when no listener uses it: nothing observes it)."""
    if _reported_down(lb, pool, add):
        return OFFLINE
    hm = pool.healthmonitor
    monitored = hm is not None and hm.admin_state_up and hm.provisioning_status != PENDING_DELETE
    names = [n for n in backends if n.startswith(f"{pool.id}:")]
    member_states = []
    for member in live(pool.members):
        rows = [servers[(n, member.id)] for n in names if (n, member.id) in servers]
        if not member.admin_state_up:
            state = OFFLINE
        elif not rows:
            state = NO_MONITOR if not monitored else OFFLINE
        else:
            state = _worst([member_status(r, monitored) for r in rows])
        member_states.append(state)
        add(MEMBERS, member.id, state)
    if not names:
        return None
    down = [backends[n].get("status") == "DOWN" for n in names]
    if any(down):
        state = ERROR
    elif ERROR in member_states:
        state = DEGRADED
    else:
        state = ONLINE
    add(POOLS, pool.id, state)
    return state


def _udp_pool(lb: LoadBalancer, pool: Pool, checked: Mapping[str, str], add: Any
              ) -> str | None:
    """As ``_pool``, for a UDP pool: members as their checks left them."""
    if _reported_down(lb, pool, add):
        return OFFLINE
    states = []
    for member in live(pool.members):
        if not member.admin_state_up:
            state = OFFLINE
        elif member.weight == 0:
            state = DRAINING
        else:
            state = checked.get(member.id, NO_MONITOR)
        states.append(state)
        add(MEMBERS, member.id, state)
    used = any(x.default_pool_id == pool.id and x.admin_state_up and by_nftables(x.protocol)
               for x in live(lb.listeners))
    if not used:
        return None
    judged = [s for s in states if s != OFFLINE]
    if judged and all(s == ERROR for s in judged):
        state = ERROR
    elif ERROR in judged:
        state = DEGRADED
    else:
        state = ONLINE
    add(POOLS, pool.id, state)
    return state


def listener_stats(lb: LoadBalancer, rows: list[dict[str, str]]) -> list[dict[str, Any]]:
    """Each listener's counters since its haproxy started, from its frontend."""
    frontends = {r["pxname"]: r for r in rows if r.get("svname") == "FRONTEND"}
    out = []
    for listener in live(lb.listeners):
        if by_nftables(listener.protocol):
            continue
        row = frontends.get(listener.id, {})
        out.append({"listener_id": listener.id,
                    "bytes_in": _int(row.get("bin")),
                    "bytes_out": _int(row.get("bout")),
                    "active_connections": _int(row.get("scur")),
                    "total_connections": _int(row.get("stot")),
                    "request_errors": _int(row.get("ereq"))})
    return out


def _int(value: str | None) -> int:
    try:
        return int(value or 0)
    except ValueError:
        return 0


def nft_counters(text: str) -> dict[str, tuple[int, int]]:
    """``nft -j list counters`` as name -> (packets, bytes)."""
    try:
        items = json.loads(text or "{}").get("nftables", [])
    except ValueError:
        return {}
    return {c["name"]: (_int(str(c.get("packets"))), _int(str(c.get("bytes"))))
            for c in (i.get("counter") for i in items) if c}


def flows_to(conntrack: str, proto: str, addresses: set[str], port: int) -> int:
    """How many flows of ``/proc/net/nf_conntrack`` were opened to one of
    ``addresses`` on ``port`` (the first tuple is the original direction)."""
    count = 0
    for line in conntrack.splitlines():
        words = line.split()
        if proto not in words[:4]:
            continue
        fields = [w.split("=", 1) for w in words if "=" in w]
        dst = next((v for k, v in fields if k == "dst"), None)
        dport = next((v for k, v in fields if k == "dport"), None)
        if dst in addresses and dport == str(port):
            count += 1
    return count


def udp_listener_stats(lb: LoadBalancer, counters_json: str, conntrack: str
                       ) -> list[dict[str, Any]]:
    """Each UDP listener's counters: bytes from clients and from members, flows
    opened, flows conntrack still holds; a datagram carries no request to err."""
    counters = nft_counters(counters_json)
    vips = {lb.vip.address, *(v.get("ip_address", "") for v in lb.additional_vips)}
    out = []
    for listener in udp_listeners(lb):
        c_in, c_out, c_new = counter_names(listener.id)
        out.append({"listener_id": listener.id,
                    "bytes_in": counters.get(c_in, (0, 0))[1],
                    "bytes_out": counters.get(c_out, (0, 0))[1],
                    "active_connections": flows_to(conntrack, listener.protocol.lower(),
                                                   vips, listener.protocol_port),
                    "total_connections": counters.get(c_new, (0, 0))[0],
                    "request_errors": 0})
    return out

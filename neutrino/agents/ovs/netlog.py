"""Security-group logging on br-int: the pure model (upstream's OVS firewall
log driver).

A logged port's packets are copied to the controller by flows carrying a
cookie of their own, one per port and event: its rule flows (the first
packet of each accepted connection) for ``ACCEPT``, a catch-all below its
rules (a packet no rule accepts) for ``DROP``. The agent reads those
packet-ins and writes a line per packet naming the event, the logs, their
project and the port, as upstream's driver does. Cookies are derived from
the port and event, so a restarted agent programs the same ones, and are
even, so they never equal a run's cookie (always odd).

What the agent knows of logs (``LogInfo``) comes from the server's
``sg_log_info`` answers; ``with_port_answer``, ``with_log_answer`` and
``without`` fold them in. ``RateLimit`` is upstream's token bucket
(``[network_log] rate_limit`` packets per second, bursts of
``burst_limit``), a pure function of the time given.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, replace
from typing import Any, Iterable

from neutrino.agents.ovs import firewall

ACCEPT, DROP, ALL = "ACCEPT", "DROP", "ALL"
COOKIE_MASK = (1 << 63) - 2  # 63 bits, the lowest clear


@dataclass(frozen=True)
class LogInfo:
    """A log as it concerns this host: its event, project and ports, and for
    each port the groups whose rules it logs (those of the rules the server
    listed)."""
    id: str
    event: str
    project_id: str
    ports: frozenset[str]
    groups: tuple[tuple[str, frozenset[str]], ...] = ()  # (port, groups), by port

    def groups_of(self, port_id: str) -> frozenset[str]:
        return dict(self.groups).get(port_id, frozenset())


@dataclass(frozen=True)
class PortLog:
    """What is logged on one port: the logs of each event, and the groups
    whose rules' accepted packets are logged."""
    port_id: str
    project_id: str
    accept: tuple[str, ...] = ()
    drop: tuple[str, ...] = ()
    accept_groups: frozenset[str] = frozenset()


def _info(entry: dict[str, Any]) -> LogInfo:
    ports = entry.get("ports_log") or []
    groups = {p["port_id"]: frozenset(r["security_group_id"]
                                      for r in p.get("security_group_rules") or []
                                      if r.get("security_group_id")) for p in ports}
    return LogInfo(entry["id"], entry.get("event") or ALL, entry.get("project_id") or "",
                   frozenset(groups), tuple(sorted(groups.items())))


def _with_groups(log: LogInfo, groups: dict[str, frozenset[str]]) -> LogInfo:
    kept = {p: g for p, g in groups.items() if p in log.ports}
    return replace(log, groups=tuple(sorted(kept.items())))


def with_port_answer(logs: dict[str, LogInfo], port_id: str,
                     answer: list[dict[str, Any]]) -> dict[str, LogInfo]:
    """``get_sg_log_info_for_port``'s answer for ``port_id``: the logs it
    names cover the port, no other log does any longer."""
    named = {e["id"]: _info(e) for e in answer}
    out: dict[str, LogInfo] = {}
    for log_id, log in logs.items():
        if log_id not in named:
            log = _with_groups(replace(log, ports=log.ports - {port_id}), dict(log.groups))
        if log.ports:
            out[log_id] = log
    for log_id, info in named.items():
        have = out.get(log_id)
        groups = {**dict(have.groups if have else ()), port_id: info.groups_of(port_id)}
        ports = (have.ports if have else frozenset()) | {port_id}
        out[log_id] = _with_groups(replace(info, ports=ports), groups)
    return out


def with_log_answer(logs: dict[str, LogInfo], asked: Iterable[str],
                    answer: list[dict[str, Any]]) -> dict[str, LogInfo]:
    """``get_sg_log_info_for_log_resources``'s answer for the logs ``asked``:
    each answered log covers exactly the ports it lists; one not answered
    (deleted since) covers none."""
    out = {k: v for k, v in logs.items() if k not in set(asked)}
    for entry in answer:
        info = _info(entry)
        if info.ports:
            out[info.id] = info
    return out


def without(logs: dict[str, LogInfo], log_ids: Iterable[str]) -> dict[str, LogInfo]:
    gone = set(log_ids)
    return {k: v for k, v in logs.items() if k not in gone}


def port_logs(logs: dict[str, LogInfo]) -> dict[str, PortLog]:
    """Each logged port's logs by event (the project of its first log)."""
    accept: dict[str, list[str]] = {}
    drop: dict[str, list[str]] = {}
    project: dict[str, str] = {}
    groups: dict[str, frozenset[str]] = {}
    for log in sorted(logs.values(), key=lambda lg: lg.id):
        for port in log.ports:
            project.setdefault(port, log.project_id)
            if log.event in (ACCEPT, ALL):
                accept.setdefault(port, []).append(log.id)
                groups[port] = groups.get(port, frozenset()) | log.groups_of(port)
            if log.event in (DROP, ALL):
                drop.setdefault(port, []).append(log.id)
    return {p: PortLog(p, project[p], tuple(accept.get(p, ())), tuple(drop.get(p, ())),
                       groups.get(p, frozenset())) for p in project}


def cookie(port_id: str, event: str) -> int:
    """The cookie of ``event``'s log flows on ``port_id``: stable across
    runs, even and non-zero."""
    digest = int.from_bytes(hashlib.sha256(f"{port_id}/{event}".encode()).digest()[:8], "big")
    return (digest & COOKIE_MASK) or 2


@dataclass(frozen=True)
class CookieEntry:
    """What a packet-in's cookie says: the event, port, project and logs."""
    event: str
    port_id: str
    project_id: str
    log_ids: tuple[str, ...]


def cookies(logged: dict[str, PortLog]) -> dict[int, CookieEntry]:
    out: dict[int, CookieEntry] = {}
    for port_id, log in logged.items():
        if log.accept:
            out[cookie(port_id, ACCEPT)] = CookieEntry(ACCEPT, port_id, log.project_id,
                                                       log.accept)
        if log.drop:
            out[cookie(port_id, DROP)] = CookieEntry(DROP, port_id, log.project_id, log.drop)
    return out


def log_flows(log: PortLog) -> firewall.Logged:
    """A logged port's log flows as the firewall programs them: accepted
    packets of the rules of the groups its ACCEPT logs cover, and the rest."""
    return firewall.Logged(cookie(log.port_id, ACCEPT) if log.accept else 0,
                           cookie(log.port_id, DROP) if log.drop else 0,
                           log.accept_groups)


# -- packet-ins ----------------------------------------------------------------------

_COOKIE = re.compile(r"\bcookie=(0x[0-9a-fA-F]+|\d+)")


@dataclass(frozen=True)
class PacketIn:
    cookie: int
    packet: str  # the packet as ``ovs-ofctl`` decodes it


def packet_ins(lines: Iterable[str]) -> Iterable[PacketIn]:
    """Packet-ins from ``ovs-ofctl monitor``'s output: a header line with the
    cookie, then the decoded packet."""
    pending: int | None = None
    for line in lines:
        line = line.rstrip("\n")
        if "PACKET_IN" in line:
            m = _COOKIE.search(line)
            pending = int(m.group(1), 0) if m else None
        elif pending is not None and line and not line[0].isspace():
            yield PacketIn(pending, line.strip())
            pending = None


def record(entry: CookieEntry | None, pkt: PacketIn) -> str:
    """The log line of a packet (upstream's words; an unknown cookie warns)."""
    if entry is None:
        return f"Unknown cookie={pkt.cookie} packet_in pkt={pkt.packet}"
    return (f"action={entry.event} project_id={entry.project_id} "
            f"log_resource_ids={list(entry.log_ids)} vm_port={entry.port_id} "
            f"pkt={pkt.packet}")


@dataclass(frozen=True)
class RateLimit:
    """A token bucket: ``rate`` packets per second, at most ``burst`` at once.
    ``take`` returns whether a packet at time ``now`` is logged, and the
    bucket after it."""
    rate: float
    burst: float
    tokens: float
    at: float | None = None

    @classmethod
    def full(cls, rate: float, burst: float) -> "RateLimit":
        return cls(rate, burst, burst)

    def take(self, now: float) -> tuple[bool, "RateLimit"]:
        tokens = self.tokens if self.at is None else min(
            self.burst, self.tokens + max(0.0, now - self.at) * self.rate)
        if tokens >= 1:
            return True, replace(self, tokens=tokens - 1, at=now)
        return False, replace(self, tokens=tokens, at=now)

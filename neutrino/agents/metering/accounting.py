"""Traffic accounts between two reports, and the ``l3.meter`` messages (pure).

Every ``measure_interval`` the counters read from the routers are added to
an account per key; every ``report_interval`` each account becomes one
notification and restarts from zero (its ``first_update`` stays), as
upstream's agent does. Keys are label ids, or with
``granular_traffic_data`` upstream's granular keys (``label-<id>``,
``router-<id>``, ``project-<id>``, ``router-<id>-label-<id>``,
``project-<id>-label-<id>``), each reported with its own event type
(``l3.meter.label``, ``l3.meter.router``, ...). Times are whole seconds
since the epoch, as upstream's ``utcnow_ts``; the caller passes them in.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Iterable

from neutrino.agents.metering.rules import MeteredRouter

EVENT = "l3.meter"
LABEL, ROUTER, PROJECT = "label-", "router-", "project-"

# one router's counters as read: {label id: (packets, bytes)}
Reading = tuple[MeteredRouter, dict[str, tuple[int, int]]]
Counts = dict[str, tuple[int, int, str | None]]  # key -> (packets, bytes, granularity)


@dataclasses.dataclass
class Info:
    first_update: int
    last_update: int
    granularity: str | None = None
    pkts: int = 0
    bytes: int = 0
    time: int = 0


def legacy_counts(readings: Iterable[Reading]) -> Counts:
    """Per label id, summed over the routers carrying the label."""
    out: dict[str, tuple[int, int, str | None]] = {}
    for _router, counters in readings:
        for label_id, (pkts, nbytes) in counters.items():
            p, b, _ = out.get(label_id, (0, 0, None))
            out[label_id] = (p + pkts, b + nbytes, None)
    return out


def granular_counts(readings: Iterable[Reading]) -> Counts:
    """Upstream's five granularities; a read router always has its router and
    project accounts, even when none of its labels counted anything."""
    out: dict[str, list[Any]] = {}

    def add(key: str, granularity: str, pkts: int, nbytes: int) -> None:
        acc = out.setdefault(key, [0, 0, granularity])
        acc[0] += pkts
        acc[1] += nbytes

    for router, counters in readings:
        project_key, router_key = PROJECT + str(router.project_id), ROUTER + router.router_id
        add(router_key, "router", 0, 0)
        add(project_key, "project", 0, 0)
        for label_id, (pkts, nbytes) in counters.items():
            label_key = LABEL + label_id
            add(label_key, "label", pkts, nbytes)
            add(f"{router_key}-{label_key}", "label_router", pkts, nbytes)
            add(f"{project_key}-{label_key}", "label_project", pkts, nbytes)
            add(router_key, "router", pkts, nbytes)
            add(project_key, "project", pkts, nbytes)
    return {k: (v[0], v[1], v[2]) for k, v in out.items()}


class Accounts:
    def __init__(self) -> None:
        self.infos: dict[str, Info] = {}

    def add(self, counts: Counts, now: int) -> None:
        for key, (pkts, nbytes, granularity) in counts.items():
            info = self.infos.setdefault(key, Info(first_update=now, last_update=now,
                                                  granularity=granularity))
            info.pkts += pkts
            info.bytes += nbytes
            info.time += now - info.last_update
            info.last_update = now

    def take(self) -> list[tuple[str, Info]]:
        """Every account as it stands, each then zeroed (its dates kept)."""
        out = [(key, dataclasses.replace(info)) for key, info in self.infos.items()]
        for info in self.infos.values():
            info.pkts = info.bytes = info.time = 0
        return out

    def purge(self, now: int, report_interval: float) -> None:
        """Forget accounts not updated for a report interval (labels gone)."""
        for key in [k for k, i in self.infos.items() if i.last_update < now - report_interval]:
            del self.infos[key]


@dataclasses.dataclass
class Catalog:
    """What the agent knows of its routers and labels, for the payloads."""

    routers: dict[str, MeteredRouter]

    def label(self, label_id: str) -> Any:
        for router in self.routers.values():
            for label in router.labels:
                if label.id == label_id:
                    return label
        return None

    def label_project(self, label_id: str) -> str | None:
        """Upstream's: the project of the last router carrying the label."""
        project = None
        for router in self.routers.values():
            if any(label.id == label_id for label in router.labels):
                project = router.project_id
        return project

    def router_project(self, router_id: str) -> str | None:
        router = self.routers.get(router_id)
        return router.project_id if router else None


def message(key: str, info: Info, host: str, granular: bool,
            catalog: Catalog) -> tuple[str, dict[str, Any]]:
    """(event type, payload) of one account."""
    data: dict[str, Any] = {"pkts": info.pkts, "bytes": info.bytes, "time": info.time,
                            "first_update": info.first_update,
                            "last_update": info.last_update, "host": host}
    if not granular:
        # project_id as upstream today; tenant_id as upstream sent it before
        # (what older consumers, Ceilometer's meter definitions, read)
        project = catalog.label_project(key)
        data.update(label_id=key, project_id=project, tenant_id=project)
        return EVENT, data
    data["resource_id"] = key
    if LABEL in key:
        owners, label_id = key.split(LABEL, 1)
        label = catalog.label(label_id)
        shared = label.shared if label is not None else None
        data.update(label_id=label_id, label_name=label.name if label is not None else label_id,
                    label_shared=shared)
        # router_id on router-label accounts (as upstream documents them);
        # a shared label's project is the account's, or "all"
        router_id = owners[len(ROUTER):-1] if owners.startswith(ROUTER) else None
        if router_id:
            data["router_id"] = router_id
        if not shared:
            data["project_id"] = catalog.label_project(label_id)
        elif owners.startswith(PROJECT):
            data["project_id"] = owners[len(PROJECT):-1]
        elif router_id:
            data["project_id"] = catalog.router_project(router_id)
        else:
            data["project_id"] = "all"
    elif key.startswith(PROJECT):
        data["project_id"] = key[len(PROJECT):]
    elif key.startswith(ROUTER):
        router_id = key[len(ROUTER):]
        data.update(router_id=router_id, project_id=catalog.router_project(router_id))
    return f"{EVENT}.{info.granularity}" if info.granularity else EVENT, data

"""A recording in-memory host and server for metering agent tests."""
from __future__ import annotations

from typing import Any

from neutrino.agents.l3.linux import CommandError
from neutrino.agents.metering import rules


class FakeHost:
    """Namespaces with at most one metering table each, and its counters."""

    def __init__(self, *namespaces: str) -> None:
        self.present = set(namespaces)
        self.tables: dict[str, str] = {}  # namespace -> installed table
        self.counts: dict[str, dict[str, tuple[int, int]]] = {}  # ns -> label -> counts
        self.calls: list[tuple[str, str]] = []

    def namespaces(self) -> list[str]:
        return sorted(self.present)

    def nft(self, ns: str, script: str) -> None:
        if ns not in self.present:
            raise CommandError(["nft"], 1, "no such namespace")
        self.calls.append(("nft", ns))
        if script == rules.delete_script():
            self.tables.pop(ns, None)
        else:
            self.tables[ns] = script
        self.counts[ns] = {}  # a new table starts from zero

    def reset_counters(self, ns: str) -> dict[str, tuple[int, int]]:
        self.calls.append(("reset", ns))
        if ns not in self.tables:
            raise CommandError(["nft"], 1, "No such file or directory")
        out, self.counts[ns] = self.counts.get(ns, {}), {}
        return out

    def count(self, ns: str, label_id: str, pkts: int, nbytes: int) -> None:
        p, b = self.counts.setdefault(ns, {}).get(label_id, (0, 0))
        self.counts[ns][label_id] = (p + pkts, b + nbytes)


class FakePlugin:
    def __init__(self, routers: list[dict[str, Any]] | None = None) -> None:
        self.routers = routers or []
        self.calls = 0
        self.fail = False

    def get_sync_data_metering(self) -> list[dict[str, Any]]:
        self.calls += 1
        if self.fail:
            raise RuntimeError("server away")
        return self.routers


class RecordingNotifier:
    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []

    def info(self, ctx: Any, event_type: str, payload: dict[str, Any]) -> None:
        self.sent.append((event_type, payload))


def router(router_id: str, project_id: str, gw_port_id: str | None,
           labels: list[dict[str, Any]]) -> dict[str, Any]:
    """A router as ``get_sync_data_metering`` returns it."""
    return {"id": router_id, "name": "r", "project_id": project_id, "tenant_id": project_id,
            "admin_state_up": True, "status": "ACTIVE", "gw_port_id": gw_port_id,
            "distributed": False, "_metering_labels": labels}


def label(label_id: str, rules_: list[dict[str, Any]], shared: bool = False,
          name: str = "lbl") -> dict[str, Any]:
    return {"id": label_id, "name": name, "shared": shared, "rules": rules_}


def rule(direction: str, excluded: bool = False, **prefixes: str) -> dict[str, Any]:
    return {"id": "r-" + direction, "direction": direction, "excluded": excluded,
            "remote_ip_prefix": prefixes.get("remote_ip_prefix"),
            "source_ip_prefix": prefixes.get("source_ip_prefix"),
            "destination_ip_prefix": prefixes.get("destination_ip_prefix")}

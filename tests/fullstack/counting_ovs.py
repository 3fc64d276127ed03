"""The real OVSDB adapter with counters: what a pass asks of the switch,
for tests that hold those counts and the L3 scale benchmark that reports
them (counts, never times)."""
from __future__ import annotations

from typing import Any

from neutrino.agents.ovs.ovsctl import OvsCtl


class CountingOvs(OvsCtl):
    """``OvsCtl``, counting its OVSDB transactions (empty ones are not
    sent, so not counted), its reads and its listings of a bridge's ports
    (whose cost grows with the switch's ports)."""

    def __init__(self) -> None:
        super().__init__()
        self.transactions = self.reads = self.listings = 0

    def _commit(self, commands: list[Any]) -> None:
        self.transactions += bool(commands)
        super()._commit(commands)

    def _read(self, command: Any) -> Any:
        self.reads += 1
        return super()._read(command)

    def ports(self, bridge: str) -> list[str]:
        self.listings += 1
        return super().ports(bridge)

    def summary(self) -> str:
        return (f"OVSDB: {self.transactions} transactions, {self.reads} reads, "
                f"{self.listings} port listings")

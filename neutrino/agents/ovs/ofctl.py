"""The switch's OpenFlow side through ``ovs-ofctl``: flows and meters.

One ``ovs-ofctl`` run per call; the agent batches (one ``add-flows`` for
many flows) where it matters. A flow names ports by name; deleting one of
a port that is gone needs the number the port had, which the database side
knows (``port_numbers``).
"""
from __future__ import annotations

import re
import subprocess
from typing import Callable, Iterable

from neutrino.agents.ovs.switch import OvsError, SwitchFlows


class OfctlFlows(SwitchFlows):
    """The OpenFlow half of the switch; ``port_numbers`` maps port names to
    the OpenFlow numbers they had."""

    def __init__(self, timeout: int, port_numbers: Callable[[], dict[str, int]]) -> None:
        self.timeout = timeout
        self._port_numbers = port_numbers
        self._numbers: dict[str, int] = {}

    def _run(self, argv: list[str], stdin: str | None = None) -> str:
        proc = subprocess.run(argv, input=stdin, capture_output=True, text=True,
                              timeout=self.timeout + 20)
        if proc.returncode != 0:
            raise OvsError(f"{' '.join(argv[:4])}...: {proc.stderr.strip()}")
        return proc.stdout

    def ofctl(self, *args: str, stdin: str | None = None) -> str:
        return self._run(["ovs-ofctl", *args], stdin)

    # -- flows -------------------------------------------------------------------------

    def add_flows(self, bridge: str, specs: Iterable[str]) -> None:
        specs = list(specs)
        if not specs:
            return
        self._numbers = self._port_numbers()
        # meter instructions exist from OpenFlow 1.3 on; the rest keeps the default
        metered = [s for s in specs if "meter:" in s]
        plain = [s for s in specs if "meter:" not in s]
        if plain:
            self.ofctl("add-flows", bridge, "-", stdin="\n".join(plain) + "\n")
        if metered:
            self.ofctl("-O", "OpenFlow13", "add-flows", bridge, "-",
                       stdin="\n".join(metered) + "\n")

    def _by_number(self, key: str) -> str:
        """``in_port=<name>`` as the number the port had when the flow was added."""
        return re.sub(r"in_port=([^,]+)",
                      lambda m: f"in_port={self._numbers.get(m.group(1), m.group(1))}", key)

    def delete_flows_strict(self, bridge: str, keys: Iterable[str]) -> None:
        text = "\n".join(self._by_number(k) for k in keys)
        if text:
            self.ofctl("--strict", "del-flows", bridge, "-", stdin=text + "\n")

    def delete_flows_by_cookie(self, bridge: str, cookie: int) -> None:
        self.ofctl("del-flows", bridge, f"cookie={cookie:#x}/-1")

    def dump_flows(self, bridge: str) -> list[str]:
        out = self.ofctl("--no-stats", "--names", "dump-flows", bridge)
        return [line.strip() for line in out.splitlines()
                if line.strip() and not line.startswith("NXST_FLOW")]

    def cookies(self, bridge: str) -> set[int]:
        return set(self.flow_counts(bridge))

    def flow_counts(self, bridge: str) -> dict[int, int]:
        counts: dict[int, int] = {}
        for line in self.dump_flows(bridge):
            cookie = 0  # dump-flows leaves out a zero cookie
            for part in line.replace(",", " ").split():
                if part.startswith("cookie="):
                    cookie = int(part.split("=", 1)[1], 16)
                    break
            counts[cookie] = counts.get(cookie, 0) + 1
        return counts

    # -- QoS: meters ------------------------------------------------------------------

    def meters(self, bridge: str) -> dict[int, tuple[int, int]]:
        """Meter id -> (kbps, burst kb) of the bridge's meters."""
        out: dict[int, tuple[int, int]] = {}
        text = self.ofctl("-O", "OpenFlow13", "dump-meters", bridge)
        for block in re.split(r"\n(?=meter=)", text):
            m = re.search(r"meter=(\d+).*?rate=(\d+)(?:\s+burst_size=(\d+))?", block, re.S)
            if m:
                out[int(m.group(1))] = (int(m.group(2)), int(m.group(3) or 0))
        return out

    def set_meter(self, bridge: str, spec: str, exists: bool) -> None:
        self.ofctl("-O", "OpenFlow13", "mod-meter" if exists else "add-meter", bridge, spec)

    def delete_meter(self, bridge: str, meter_id: int) -> None:
        self.ofctl("-O", "OpenFlow13", "del-meter", bridge, f"meter={meter_id}")

"""Metering drivers: make the routers' counting tables match, and read them.

``measure`` is the whole host side of one measurement and converges from
whatever it finds: a router whose namespace does not exist yet (the L3
agent has not built it) is skipped and tried again next time; a table
that changed is read first, then replaced, so counts made under the old
rules are not lost; a table that cannot be read (the namespace was rebuilt)
is installed again. The noop driver (upstream's default) installs and
counts nothing.
"""
from __future__ import annotations

import json
import logging
from typing import Iterable, Protocol

from neutrino.agents.l3.linux import CommandError, LinuxHost, run
from neutrino.agents.metering import rules
from neutrino.agents.metering.accounting import Reading
from neutrino.agents.metering.rules import MeteredRouter

LOG = logging.getLogger(__name__)

NOOP, NFTABLES = "noop", "nftables"
# upstream's driver names (stevedore aliases and class paths); its iptables
# driver's job is done here with nftables, as the L3 agent does NAT
DRIVER_NAMES = {
    "noop": NOOP,
    "neutron.services.metering.drivers.noop.noop_driver.NoopMeteringDriver": NOOP,
    "iptables": NFTABLES,
    "neutron.services.metering.drivers.iptables.iptables_driver.IptablesMeteringDriver":
        NFTABLES,
    "nftables": NFTABLES,
}


class MeteringHost(Protocol):
    def namespaces(self) -> list[str]: ...

    def nft(self, ns: str, script: str) -> None: ...

    def reset_counters(self, ns: str) -> dict[str, tuple[int, int]]: ...


class LinuxMeteringHost(LinuxHost):
    def reset_counters(self, ns: str) -> dict[str, tuple[int, int]]:
        """Read and zero the label counters at once (one nft command)."""
        out = run(["ip", "netns", "exec", ns, "nft", "-j", "reset", "counters", "table",
                   rules.FAMILY, rules.TABLE])
        return rules.read_counters(json.loads(out or "{}"))


class NoopDriver:
    name = NOOP

    def measure(self, routers: Iterable[MeteredRouter]) -> list[Reading]:
        return []


class NftablesDriver:
    name = NFTABLES

    def __init__(self, host: MeteringHost | None = None) -> None:
        self.host: MeteringHost = host or LinuxMeteringHost()
        self.applied: dict[str, tuple[MeteredRouter, str]] = {}  # router -> (router, script)

    def measure(self, routers: Iterable[MeteredRouter]) -> list[Reading]:
        desired = {r.router_id: r for r in routers}
        present = set(self.host.namespaces())
        readings: list[Reading] = []
        for router_id in sorted(set(self.applied) - set(desired)):
            old, _ = self.applied.pop(router_id)
            if old.namespace in present:
                self._read(old, readings)
                self._nft(old.namespace, rules.delete_script())
        for router in desired.values():
            if router.namespace not in present:
                self.applied.pop(router.router_id, None)
                continue
            script = rules.replace_script(router)
            known = self.applied.get(router.router_id)
            if known is not None:
                ok = self._read(known[0], readings)
                if ok and known[1] == script:
                    continue
            self.applied.pop(router.router_id, None)
            if self._nft(router.namespace, script):
                self.applied[router.router_id] = (router, script)
        return readings

    def _read(self, router: MeteredRouter, readings: list[Reading]) -> bool:
        try:
            counters = self.host.reset_counters(router.namespace)
        except (CommandError, ValueError) as exc:
            LOG.warning("router %s: metering counters unreadable (%s); installing again",
                        router.router_id, exc)
            return False
        readings.append((router, {label.id: counters.get(label.id, (0, 0))
                                  for label in router.labels}))
        return True

    def _nft(self, ns: str, script: str) -> bool:
        try:
            self.host.nft(ns, script)
            return True
        except CommandError as exc:
            LOG.warning("metering rules in %s: %s", ns, exc)
            return False


def load(name: str, host: MeteringHost | None = None) -> NoopDriver | NftablesDriver:
    """The driver ``[DEFAULT] driver`` names; ValueError naming the option otherwise."""
    kind = DRIVER_NAMES.get(name)
    if kind is None:
        raise ValueError(f"[DEFAULT] driver: unknown metering driver '{name}' "
                         f"(known: {', '.join(sorted(DRIVER_NAMES))})")
    return NoopDriver() if kind == NOOP else NftablesDriver(host)

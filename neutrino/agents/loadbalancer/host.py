"""The load-balancer agent's view of its host (the adapter interface).

The agent plans from what this says is there and changes the host only
through it; ``linux.LinuxLbHost`` does it with ``ip``, the interface driver
and haproxy, ``memory_host.MemoryLbHost`` keeps it in memory for the
agent's tests. Each load balancer's state directory is the host's record
that it is this agent's: namespaces without one belong to someone else.
"""
from __future__ import annotations

import abc

from neutrino.agents.loadbalancer.plan import Deployment, Observed
from neutrino.agents.loadbalancer.udp_health import Check


class LbHost(abc.ABC):
    @abc.abstractmethod
    def observe(self) -> dict[str, Observed]:
        """Every load balancer this agent left on the host, by id."""

    @abc.abstractmethod
    def build(self, deployment: Deployment) -> None:
        """Namespace, VIP device with its addresses and routes, files, and
        haproxy started, the UDP listeners' table in place; what is already
        there is reused."""

    @abc.abstractmethod
    def reload(self, deployment: Deployment) -> None:
        """The new files and configuration, taken by the running haproxy
        without closing established connections; the UDP listeners' table
        replaced in one transaction."""

    @abc.abstractmethod
    def teardown(self, lb_id: str, device: str | None) -> None:
        """Nothing of the load balancer left: process, device, namespace, files."""

    @abc.abstractmethod
    def stats(self, lb_id: str) -> str | None:
        """haproxy's ``show stat`` answer (None when it does not answer)."""

    @abc.abstractmethod
    def probe(self, lb_id: str, checks: list[Check]) -> dict[str, bool]:
        """Each check run from the load balancer's namespace: member id -> passed."""

    @abc.abstractmethod
    def udp_stats(self, lb_id: str) -> tuple[str, str] | None:
        """The UDP listeners' counters (``nft -j list counters``) and the
        namespace's flows (``/proc/net/nf_conntrack``); None when they are not
        this host's to report."""

"""The L3 agent's ``vpnaas`` extension (upstream's IPsec device driver, with
strongSwan): the routers' IPsec site connections, and their statuses.

Each pass reads the VPN services of the routers this agent hosts
(``get_vpn_services_on_host``), keeps one charon per router whose
namespace the agent has made (``charon.Charon``), restarting it when its
configuration (``ipsec_plan``) changes and stopping it when its service goes,
then reports what changed (``update_status``). A pass runs when the server
says a service changed (``vpnservice_updated``), after the agent applied
routers, and every ``[ipsec] ipsec_status_check_interval``.
"""
from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any, Callable

from neutrino.agents.l3 import ipsec_plan as plan
from neutrino.agents.l3.charon import Charon
from neutrino.agents.server_client import ServerClient
from neutrino.rpc import topics

LOG = logging.getLogger(__name__)
EXTENSION = "vpnaas"


class IpsecDriverApi(ServerClient):
    """The agent's side of upstream's ``ipsec_driver`` topic."""

    def __init__(self, conf: Any, host: str) -> None:
        super().__init__(conf, topics.IPSEC_DRIVER)
        self.host = host

    def get_vpn_services_on_host(self) -> list[dict[str, Any]]:
        return self.call("get_vpn_services_on_host", topics.IPSEC_VERSION,  # type: ignore[no-any-return]
                         host=self.host)

    def update_status(self, status: list[dict[str, Any]]) -> None:
        self.call("update_status", topics.IPSEC_VERSION, status=status)


class IpsecAgentEndpoint:
    """What the server casts on ``ipsec_agent``."""

    def __init__(self, extension: "VpnExtension") -> None:
        self.extension = extension

    def vpnservice_updated(self, context: Any, **kwargs: Any) -> None:
        self.extension.wake()


class VpnExtension:
    def __init__(self, conf: Any, host: str, hosted: Callable[[], set[str]],
                 rpc: Any = None) -> None:
        """``hosted``: the routers whose namespaces the agent has made."""
        self.conf = conf
        self.host = host
        self.hosted = hosted
        self.rpc = rpc
        self.base = conf.ipsec.config_base_dir
        self.backend = conf.strongswan.ipsec_backend
        self.charons: dict[str, Charon] = {}
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def charon(self, router_id: str) -> Charon:
        if router_id not in self.charons:
            self.charons[router_id] = Charon(self.base, router_id,
                                             self.conf.strongswan.charon_path,
                                             self.conf.strongswan.swanctl_path)
        return self.charons[router_id]

    def _known(self) -> set[str]:
        """The routers with a charon: this agent's, and those a previous agent
        left running (their directories)."""
        base = Path(self.base)
        found = {p.name for p in base.iterdir() if p.is_dir()} if base.is_dir() else set()
        return set(self.charons) | found

    def router_removed(self, router_id: str) -> None:
        """Before the agent deletes a router's namespace: its charon goes."""
        if router_id in self.charons or (Path(self.base) / router_id).is_dir():
            self.charon(router_id).remove()
            self.charons.pop(router_id, None)

    # -- one pass ------------------------------------------------------------------

    def sync(self) -> None:
        services = self.rpc.get_vpn_services_on_host()
        hosted = self.hosted()
        by_router = {s["router_id"]: s for s in services if s["router_id"] in hosted}
        for router_id in sorted(self._known() - set(by_router)):
            LOG.info("router %s: no VPN service here any more; stopping charon", router_id)
            self.router_removed(router_id)
        reports = []
        for router_id, service in sorted(by_router.items()):
            failed = False
            try:
                running, installed = self._converge(router_id, service)
            except Exception:  # noqa: BLE001 - reported ERROR, tried again next pass
                LOG.exception("router %s: running its VPN service failed", router_id)
                running, installed, failed = False, set(), True
            report = plan.statuses(service, running, installed, failed)
            if plan.changed(service, report):
                reports.append(report)
        if reports:
            LOG.info("VPN statuses on %s: %s", self.host, reports)
            self.rpc.update_status(reports)

    def _converge(self, router_id: str, service: dict[str, Any]) -> tuple[bool, set[str]]:
        charon = self.charon(router_id)
        if not plan.wanted(service):
            charon.stop()
            return False, set()
        files = plan.files(service, str(charon.dir), self.backend,
                           self.conf.ipsec.enable_detailed_logging)
        if charon.pid() is None or charon.files() != files:
            LOG.info("router %s: (re)starting charon for VPN service %s", router_id,
                     service["id"])
            charon.stop()
            charon.write(files)
            charon.start()
            charon.load()
        return True, charon.installed()

    # -- the loop ------------------------------------------------------------------

    def wake(self) -> None:
        self._wake.set()

    def _loop(self) -> None:
        interval = self.conf.ipsec.ipsec_status_check_interval
        while not self._stop.is_set():
            self._wake.wait(interval)
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                self.sync()
            except Exception:  # noqa: BLE001 - server or bus away: next pass
                LOG.exception("VPN extension on %s: sync failed", self.host)

    def start(self, listen: Callable[[str, list[Any]], None]) -> None:
        if self.rpc is None:
            self.rpc = IpsecDriverApi(self.conf, self.host)
        listen(topics.IPSEC_AGENT, [IpsecAgentEndpoint(self)])
        self._thread = threading.Thread(target=self._loop, name="l3-vpn", daemon=True)
        self._thread.start()
        self.wake()

    def stop(self) -> None:
        """The charons keep running (the tunnels stay up across an agent
        restart, as upstream's do); the next agent takes them over."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(30)
        if isinstance(self.rpc, IpsecDriverApi):
            self.rpc.close()

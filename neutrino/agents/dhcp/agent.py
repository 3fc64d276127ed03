"""The DHCP agent's reconcile loop.

Desired state comes from the server (``get_active_networks_info`` at start
and on every full resync, ``get_network_info`` for one network); observed
state is what the driver left on the host (``<dhcp_confs>/<net>``).
Notifications on ``dhcp_agent`` (server = this host) only mark networks
dirty and wake the loop; the loop asks the server for the network as it is
now and converges. A failure marks the network dirty again, retried every
``resync_interval``; a restart does a full sync, which also removes what is
left of networks this host no longer serves.

A pass costs the server a few calls whatever the number of networks: the
DHCP ports missing are asked for in one ``create_dhcp_ports`` call (one
``create_dhcp_port`` per network with a server without it, as upstream's),
the ports configured are reported in one ``dhcp_ready_on_ports``, and a
port notification that only echoes what is served (the agent's own DHCP
port just created, say) costs no ``get_network_info``. The networks are
converged ``num_sync_threads`` at a time: the host's work (``ip``,
dnsmasq) waits on processes, not on this one.
"""
from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

import oslo_messaging
from oslo_config import cfg

from neutrino.agents import interface
from neutrino.agents.base import Agent, timed_pass
from neutrino.agents.dhcp import audit, dnsmasq, metadata, options
from neutrino.agents.dhcp.driver import DnsmasqDriver
from neutrino.conf.agents import dhcp as dhcp_conf
from neutrino.resources.dhcp import dhcp_device_id
from neutrino.rpc import topics

LOG = logging.getLogger(__name__)

TOPIC = "dhcp_agent"
RESERVED_DHCP_PORT = "reserved_dhcp_port"
# What of a port the served files depend on: a notification of a port whose
# values here are those served changes nothing.
PORT_SERVED_KEYS = ("fixed_ips", "mac_address", "extra_dhcp_opts", "dns_assignment",
                    "device_owner", "device_id")
# DHCP ports asked for in one call (the server creates them in one transaction).
CREATE_CHUNK = 250
NOTIFICATIONS = ("network_create_end", "network_update_end", "subnet_create_end",
                 "subnet_update_end", "subnet_delete_end", "port_create_end",
                 "port_update_end", "port_delete_end")


class PluginApi(Protocol):
    """What the agent asks the server (``neutrino.agents.dhcp_rpc.DhcpPluginApi``)."""

    def get_active_networks_info(
            self, enable_dhcp_filter: bool = True) -> list[dict[str, Any]]: ...
    def get_network_info(self, network_id: str) -> dict[str, Any] | None: ...
    def create_dhcp_port(self, port: dict[str, Any]) -> dict[str, Any] | None: ...
    def create_dhcp_ports(
            self, ports: list[dict[str, Any]]) -> list[dict[str, Any] | None]: ...
    def update_dhcp_port(self, port_id: str, port: dict[str, Any]) -> dict[str, Any] | None: ...
    def release_dhcp_port(self, network_id: str, device_id: str) -> None: ...
    def dhcp_ready_on_ports(self, port_ids: list[str]) -> None: ...


class Notifications:
    """The RPC endpoint of ``dhcp_agent``: every message marks a network dirty."""

    target = oslo_messaging.Target(version="1.0")

    def __init__(self, agent: "DhcpAgent") -> None:
        self.agent = agent

    def __getattr__(self, name: str) -> Any:
        if name not in NOTIFICATIONS:
            raise AttributeError(name)

        def handle(context: Any, payload: dict[str, Any]) -> None:
            port = payload.get("port") if name in ("port_create_end", "port_update_end") \
                else None
            self.agent.mark_dirty(_network_id(name, payload), port=port)
        return handle

    def network_delete_end(self, context: Any, payload: dict[str, Any]) -> None:
        self.agent.mark_dirty(payload.get("network_id"), deleted=True)

    def agent_updated(self, context: Any, payload: dict[str, Any]) -> None:
        self.agent.mark_full_resync()


def _network_id(method: str, payload: dict[str, Any]) -> str | None:
    if "network_id" in payload:
        return payload["network_id"]
    item = payload.get(method.split("_", 1)[0]) or {}
    return item.get("id") if method.startswith("network") else item.get("network_id")


class AuditEndpoint:
    """``neutrino audit``'s questions to this host's DHCP agent (``topics.AUDIT_DHCP``)."""

    def __init__(self, agent: "DhcpAgent") -> None:
        self.agent = agent
        self.target = oslo_messaging.Target(version="1.0")

    def realised_state(self, context: Any) -> dict[str, Any]:
        return {"host": self.agent.host, "agent_type": self.agent.agent_type,
                **audit.realised(self.agent.driver, set(self.agent.networks))}

    def resync(self, context: Any) -> None:
        self.agent.mark_full_resync()


class DhcpAgent(Agent):
    agent_type = "DHCP agent"
    binary = "neutron-dhcp-agent"
    topic = TOPIC

    def __init__(self, conf: cfg.ConfigOpts, plugin: PluginApi,
                 driver: DnsmasqDriver | None = None, host: str | None = None) -> None:
        dhcp_conf.register(conf)
        super().__init__(conf, host)
        self.plugin = plugin
        self.driver = driver or DnsmasqDriver(
            conf.dhcp_confs, options.settings(conf), interface.load(conf),
            metadata.NetworkMetadata(options.metadata_flags(conf), conf.state_path,
                                     conf.metadata_proxy_socket))
        self.networks: dict[str, dict[str, Any]] = {}  # what is served, as last configured
        self.dhcp_ports: dict[str, dict[str, Any]] = {}
        self._ready: set[str] = set()  # ports already reported with dhcp_ready_on_ports
        self._lock = threading.Lock()
        self._wake = threading.Event()
        # network id -> (deleted, the ports notified; None: the network itself)
        self._dirty: dict[str, tuple[bool, list[dict[str, Any]] | None]] = {}
        self._full = True
        self._failed: dict[str, bool] = {}  # retried after resync_interval
        self._full_failed = False
        self._bulk_create = True  # until the server says it has no create_dhcp_ports

    # -- state reports --------------------------------------------------------------------------

    def availability_zone(self) -> str | None:
        return str(self.conf.AGENT.availability_zone)

    def configurations(self) -> dict[str, Any]:
        nets = list(self.networks.values())
        return {"dhcp_driver": self.conf.dhcp_driver,
                "dhcp_lease_duration": self.conf.dhcp_lease_duration,
                "log_agent_heartbeats": False,
                "networks": len(nets),
                "subnets": sum(len(n.get("subnets") or []) for n in nets),
                "ports": sum(len(n.get("ports") or []) for n in nets)}

    # -- what notifications do --------------------------------------------------------------

    def mark_dirty(self, network_id: str | None, deleted: bool = False,
                   port: dict[str, Any] | None = None) -> None:
        """Converge the network on the next pass; ``port``: only this port
        was notified (skipped then if it is served as it is)."""
        if not network_id:
            return
        with self._lock:
            was_deleted, ports = self._dirty.get(network_id, (False, []))
            self._dirty[network_id] = (
                was_deleted or deleted,
                None if ports is None or port is None or not port.get("id")
                else ports + [port])
        self._wake.set()

    def mark_full_resync(self) -> None:
        with self._lock:
            self._full = True
        self._wake.set()

    def first_reported(self) -> None:
        """Networks created while no DHCP agent was alive are scheduled to
        this one by the sync (``network_auto_schedule``) only once it exists."""
        self.mark_full_resync()

    # -- the loop -------------------------------------------------------------------------------

    def step(self) -> None:
        """One pass: a full sync when due, else the dirty networks."""
        with self._lock:
            full, self._full = self._full, False
            dirty, self._dirty = self._dirty, {}
        if full:
            self.sync_state()
            return
        wanted = []
        for network_id, (deleted, ports) in dirty.items():
            if deleted:
                if network_id in self.networks or network_id in self.driver.existing():
                    self._guarded(network_id, self.disable, network_id)
            elif ports is None or not self._served_as(network_id, ports):
                network = self._fetch(network_id)
                if network is not None:
                    wanted.append(network)
        self.converge(wanted)

    def _served_as(self, network_id: str, ports: list[dict[str, Any]]) -> bool:
        """Whether the network is served with each of ``ports`` as notified."""
        served = {p["id"]: p for p in (self.networks.get(network_id) or {}).get("ports") or []}
        return all(p["id"] in served and all(
            p.get(k) == served[p["id"]].get(k) for k in PORT_SERVED_KEYS) for p in ports)

    def _fetch(self, network_id: str) -> dict[str, Any] | None:
        """The network as the server has it now; one without DHCP here any
        more is disabled (None then, as on failure, retried later)."""
        try:
            network = self.plugin.get_network_info(network_id)
        except Exception:  # noqa: BLE001
            LOG.exception("network %s: cannot fetch it; retrying", network_id)
            self._failed[network_id] = False
            return None
        if network is None:
            self._guarded(network_id, self.disable, network_id)
        return network

    def sync_state(self) -> None:
        try:
            wanted = {n["id"]: n for n in self.plugin.get_active_networks_info()}
        except Exception:  # noqa: BLE001 - server or bus away: try again later
            LOG.exception("full sync failed; retrying")
            self._full_failed = True
            return
        gone = [n for n in set(self.driver.existing()) | set(self.networks) if n not in wanted]
        self._each(lambda n: self._guarded(n, self.disable, n), sorted(gone))
        self.converge([wanted[n] for n in sorted(wanted)])
        LOG.info("full sync: %d networks, %d removed, %d failed", len(wanted), len(gone),
                 len(self._failed))

    def _each(self, fn: Any, items: list[Any]) -> None:
        """``fn`` on every item, ``num_sync_threads`` at a time."""
        workers = max(1, int(self.conf.num_sync_threads))
        if workers == 1 or len(items) < 2:
            for item in items:
                fn(item)
            return
        with ThreadPoolExecutor(workers, thread_name_prefix="dhcp-sync") as pool:
            list(pool.map(fn, items))

    def _guarded(self, network_id: str, fn: Any, *args: Any) -> bool:
        """``fn(*args)``; False, and the network retried later, if it fails."""
        try:
            fn(*args)
        except Exception:  # noqa: BLE001 - one network's failure must not stop the others
            LOG.exception("network %s: DHCP not converged; retrying", network_id)
            self._failed[network_id] = fn == self.disable
            return False
        return True

    def retry_failed(self) -> bool:
        """Queue what failed for the next pass; whether there was anything."""
        failed, full = self._failed, self._full_failed
        self._failed, self._full_failed = {}, False
        with self._lock:
            self._full = self._full or full
            for network_id, deleted in failed.items():
                was_deleted, _ = self._dirty.get(network_id, (False, None))
                self._dirty[network_id] = (was_deleted or deleted, None)
        return bool(failed) or full

    def revived(self) -> None:
        super().revived()
        self.mark_full_resync()

    # -- one network ----------------------------------------------------------------------------

    def converge(self, networks: list[dict[str, Any]]) -> None:
        """Serve each of ``networks`` as the server describes it (none of
        its subnets with DHCP: stop serving it): their missing DHCP ports
        asked for together, the host's work in parallel, the ports made
        ready reported together."""
        serve, stop = [], []
        for network in networks:
            (serve if dnsmasq.dhcp_subnets(network) else stop).append(network["id"])
        existing = set(self.driver.existing()) if stop else set()
        stop = [n for n in stop if n in self.networks or n in existing]
        self._each(lambda n: self._guarded(n, self.disable, n, True), stop)
        wanted = {n["id"]: n for n in networks if n["id"] in set(serve)}
        ports = self._dhcp_ports(list(wanted.values()))
        try:
            self.driver.attach_fresh({n: p for n, p in ports.items() if p is not None})
        except Exception:  # noqa: BLE001 - each network then plugs its own device
            LOG.exception("attaching the devices of %d networks at once failed", len(ports))
        done: list[dict[str, Any]] = []

        def one(network_id: str) -> None:
            if self._guarded(network_id, self._enable, wanted[network_id],
                             ports.get(network_id)):
                done.append(self.networks[network_id])
        self._each(one, sorted(wanted))
        self._report_ready(done)

    def configure(self, network: dict[str, Any]) -> None:
        """``converge`` of one network."""
        self.converge([network])

    def _enable(self, network: dict[str, Any], port: dict[str, Any] | None) -> None:
        if port is None:
            raise RuntimeError(f"no DHCP port on network {network['id']}")
        ports = [p for p in network.get("ports") or [] if p["id"] != port["id"]] + [port]
        network = dict(network, ports=ports)
        self.driver.enable(network, port)
        self.networks[network["id"]] = network
        self.dhcp_ports[network["id"]] = port

    def _dhcp_ports(self, networks: list[dict[str, Any]]) -> dict[str, dict[str, Any] | None]:
        """Network id -> this host's DHCP port there (None: none could be
        had, that network fails); the missing ones made in one call."""
        out: dict[str, dict[str, Any] | None] = {}
        create: list[tuple[str, dict[str, Any]]] = []
        for network in networks:
            try:
                found = self.ensure_dhcp_port(network, create=False)
            except Exception:  # noqa: BLE001 - that network only, retried
                LOG.exception("network %s: its DHCP port cannot be had", network["id"])
                found = None
            if found is None:
                out[network["id"]] = None
            elif "id" in found:
                out[network["id"]] = found
            else:
                create.append((network["id"], found))
        if create:
            for (network_id, _), port in zip(create, self._create_ports([p for _, p in create])):
                out[network_id] = port
        return out

    def _create_ports(self, ports: list[dict[str, Any]]) -> list[dict[str, Any] | None]:
        """``create_dhcp_ports`` in chunks; a server without it (upstream's)
        gets one ``create_dhcp_port`` a port. A failure leaves those None."""
        out: list[dict[str, Any] | None] = []
        for i in range(0, len(ports), CREATE_CHUNK):
            part = ports[i:i + CREATE_CHUNK]
            try:
                if self._bulk_create:
                    out += self.plugin.create_dhcp_ports(part)
                    continue
            except oslo_messaging.RemoteError as exc:
                if exc.exc_type not in ("UnsupportedVersion", "NoSuchMethod"):
                    LOG.exception("create_dhcp_ports failed; retrying")
                    out += [None] * len(part)
                    continue
                LOG.info("the server has no create_dhcp_ports: one port a call")
                self._bulk_create = False
            except Exception:  # noqa: BLE001 - those networks retried
                LOG.exception("create_dhcp_ports failed; retrying")
                out += [None] * len(part)
                continue
            for port in part:
                try:
                    out.append(self.plugin.create_dhcp_port(port))
                except Exception:  # noqa: BLE001
                    LOG.exception("create_dhcp_port failed for network %s",
                                  port["port"]["network_id"])
                    out.append(None)
        return out

    def ensure_dhcp_port(self, network: dict[str, Any],
                         create: bool = True) -> dict[str, Any] | None:
        """This host's DHCP port on the network: the one it has, else a
        reserved one it takes over, else a new one; with an address on every
        DHCP-enabled subnet. Without ``create``, the request for a new one
        (``{"port": ...}``) instead of the port."""
        device_id = dhcp_device_id(network["id"], self.host)
        subnets = [s["id"] for s in dnsmasq.dhcp_subnets(network)]
        ports = network.get("ports") or []
        mine = next((p for p in ports if p.get("device_id") == device_id), None)
        if mine is not None:
            have = {f.get("subnet_id") for f in mine.get("fixed_ips") or []}
            missing = [s for s in subnets if s not in have]
            if not missing:
                return mine
            fixed = list(mine.get("fixed_ips") or []) + [{"subnet_id": s} for s in missing]
            return self.plugin.update_dhcp_port(mine["id"], {"port": {
                "network_id": network["id"], "fixed_ips": fixed}})
        reserved = next((p for p in ports if p.get("device_id") == RESERVED_DHCP_PORT
                         and p.get("device_owner") == dnsmasq.DEVICE_OWNER_DHCP), None)
        if reserved is not None:
            taken = self.plugin.update_dhcp_port(reserved["id"], {"port": {
                "network_id": network["id"], "device_id": device_id}})
            if taken is not None:
                return taken
        request = {"port": {
            "name": "", "admin_state_up": True, "network_id": network["id"],
            "project_id": network.get("project_id", network.get("tenant_id", "")),
            "device_id": device_id, "device_owner": dnsmasq.DEVICE_OWNER_DHCP,
            "fixed_ips": [{"subnet_id": s} for s in subnets]}}
        return self.plugin.create_dhcp_port(request) if create else request

    def _report_ready(self, networks: list[dict[str, Any]]) -> None:
        """Tell the server which ports now have their DHCP entries here
        (lifts their DHCP provisioning block); each port once, all in one call."""
        ids = [p["id"] for n in networks for p in n.get("ports") or []
               if p["id"] not in self._ready]
        if not ids:
            return
        try:
            self.plugin.dhcp_ready_on_ports(ids)
        except Exception:  # noqa: BLE001 - reported again on the next pass
            LOG.exception("dhcp_ready_on_ports failed for %d ports", len(ids))
            return
        self._ready.update(ids)

    def disable(self, network_id: str, release: bool = False) -> None:
        """Stop serving the network here and remove its namespace, device,
        files; with ``release`` also give the DHCP port back to the server."""
        port = self.dhcp_ports.pop(network_id, None)
        network = self.networks.pop(network_id, None)
        self.driver.disable(network_id, self.driver.device_name(port) if port else None)
        if network:
            self._ready.difference_update(p["id"] for p in network.get("ports") or [])
        if release:
            self.plugin.release_dhcp_port(network_id, dhcp_device_id(network_id, self.host))

    # -- process --------------------------------------------------------------------------------

    def start_listening(self) -> None:
        self.listen(TOPIC, [Notifications(self)])
        self.listen(topics.AUDIT_DHCP, [AuditEndpoint(self)])

    def run(self) -> None:
        """Listen, report, sync; then converge whatever gets dirty, until stopped."""
        self.start_listening()
        self.start_reporting()
        while not self._stop.is_set():
            timed_pass("dhcp", self.step)
            failed = bool(self._failed) or self._full_failed
            self._wake.wait(self.conf.resync_interval if failed else None)
            self._wake.clear()
            self.retry_failed()

    def halt(self) -> None:
        """Make ``run`` return (safe from a signal handler)."""
        self._stop.set()
        self._wake.set()

    def stop(self) -> None:
        self.halt()
        super().stop()

"""The L3 agent process: a reconcile loop over the routers this host serves.

At start (and after any failed exchange with the server) it does a full
sync: every router of the host from ``sync_routers``, namespaces of
routers it no longer serves removed. Notifications from the server (topic
``l3_agent``, this host) only mark routers dirty or deleted; the loop then
fetches just those routers, applies them and reports their floating IPs'
statuses. A router that failed to apply stays dirty and is retried.

With ``[agent] extensions = fip_qos, gateway_ip_qos`` (upstream's names)
the QoS policies the routers' floating IPs and gateways name are pulled
from the server (resources RPC, as the OVS agent's) and their bandwidth
limits applied on the gateway devices (``qos``); the server's fanout
``push`` of a changed or deleted policy redoes the routers using it.

With ``[agent] extensions = fwaas_v2`` and ``[fwaas] enabled = true``
(upstream's names) the firewall groups on the routers' interfaces are
fetched with them (``q-firewall-plugin``), applied (``fwaas``) and their
statuses reported; the server's fanout casts on ``firewall_agent`` name
the ports a group gained or lost, and redo the routers holding them.
"""
from __future__ import annotations

import logging
import threading
from concurrent import futures
from typing import Any

import netaddr
import oslo_messaging
from oslo_config import cfg

from neutrino.agents.base import Agent, count_resync, timed_pass
from neutrino.agents.interface import InterfaceDriver
from neutrino.agents.l3 import audit, fwaas, keepalived, live_trace, metadata, qos, ra, vpn
from neutrino.agents.l3.linux import LinuxHost
from neutrino.agents.l3.router import Result, RouterManager
from neutrino.agents.l3.rpc import L3_AGENT_TOPIC, L3PluginApi
from neutrino.conf.agents import common as agent_conf
from neutrino.conf.agents import l3 as l3_conf
from neutrino.rpc import topics

LOG = logging.getLogger(__name__)

HA_WATCH_INTERVAL = 0.5  # seconds between looks at keepalived's state files (and radvd)
# Routers applied at once: each waits on its ``ip``/``nft`` processes most of the
# time, so a few more than the cores keep them busy (upstream's agent has a pool too).
APPLY_WORKERS = 8


def _check_ipv6_gateway(address: str) -> None:
    """As upstream's agent, refuse to start with an ``ipv6_gateway`` that is not
    a link-local address (a global next hop belongs in an external subnet)."""
    if not address:
        return
    try:
        ok = netaddr.IPAddress(address).version == 6 and netaddr.IPAddress(address).is_link_local()
    except (netaddr.AddrFormatError, ValueError):
        ok = False
    if not ok:
        raise ValueError(f"{address} used in config as ipv6_gateway is not a valid IPv6 "
                         "link-local address.")


class L3AgentEndpoint:
    """What the server casts to this host (upstream's L3 agent notification API)."""

    def __init__(self, agent: "L3Agent") -> None:
        self.target = oslo_messaging.Target(version="1.4")
        self.agent = agent

    def routers_updated(self, context: Any, routers: Any = None, **kwargs: Any) -> None:
        # upstream sends router ids (older servers sent router dicts)
        ids = [r["id"] if isinstance(r, dict) else r for r in routers or ()]
        self.agent.mark_dirty(ids)

    def router_deleted(self, context: Any, router_id: str | None = None, **kwargs: Any) -> None:
        if router_id:
            self.agent.mark_deleted([router_id])

    def router_added_to_agent(self, context: Any, payload: Any = None, **kwargs: Any) -> None:
        self.agent.mark_dirty(list(payload or ()))

    def router_removed_from_agent(self, context: Any, payload: Any = None,
                                  **kwargs: Any) -> None:
        if payload and payload.get("router_id"):
            self.agent.mark_deleted([payload["router_id"]])

    def agent_updated(self, context: Any, payload: Any = None, **kwargs: Any) -> None:
        self.agent.mark_full_sync()

    def network_update(self, context: Any, network: Any = None, **kwargs: Any) -> None:
        """A network changed (its MTU, say): the routers with a port on it are redone."""
        if network and network.get("id"):
            self.agent.mark_dirty(self.agent.routers_on_network(network["id"]))


class QosPushEndpoint:
    """The server's fanout of changed QoS policies."""

    def __init__(self, agent: "L3Agent") -> None:
        self.target = oslo_messaging.Target(version="1.0")
        self.agent = agent

    def push(self, context: Any, resource_list: list[dict[str, Any]] | None = None,
             event_type: str = "updated", **kwargs: Any) -> None:
        self.agent.policies_pushed(resource_list or [], event_type == "deleted")


class FirewallAgentEndpoint:
    """Upstream's casts to FWaaS agent extensions (``firewall_agent``, fanout):
    each names the ports a group applies on and those it left."""

    target = oslo_messaging.Target(version="1.0")

    def __init__(self, agent: "L3Agent") -> None:
        self.agent = agent

    def _changed(self, firewall_group: dict[str, Any] | None) -> None:
        group = firewall_group or {}
        ports = [*group.get("add-port-ids", ()), *group.get("del-port-ids", ())]
        self.agent.ports_changed(ports)

    def create_firewall_group(self, context: Any, firewall_group: Any = None,
                              **kwargs: Any) -> None:
        self._changed(firewall_group)

    def update_firewall_group(self, context: Any, firewall_group: Any = None,
                              **kwargs: Any) -> None:
        self._changed(firewall_group)

    def delete_firewall_group(self, context: Any, firewall_group: Any = None,
                              **kwargs: Any) -> None:
        self._changed(firewall_group)


class AuditEndpoint:
    """``neutrino audit``'s and ``neutrino trace --live``'s questions to this
    host's L3 agent (``topics.AUDIT_L3``)."""

    def __init__(self, agent: "L3Agent") -> None:
        self.agent = agent
        self.target = oslo_messaging.Target(version=topics.AUDIT_VERSION)

    def realised_state(self, context: Any) -> dict[str, Any]:
        routers = self.agent.routers
        return {"host": self.agent.host, "agent_type": self.agent.agent_type,
                **audit.realised(routers.host.namespaces(),
                                 lambda rid: routers.keepalived(rid).pid() is not None)}

    def trace_packet(self, context: Any, packet: dict[str, Any]) -> dict[str, Any]:
        return {"host": self.agent.host, "agent_type": self.agent.agent_type,
                **live_trace.trace(packet)}

    def resync(self, context: Any) -> None:
        self.agent.mark_full_sync(restore_vrrp=True)


class L3Agent(Agent):
    agent_type = "L3 agent"
    binary = "neutron-l3-agent"
    topic = L3_AGENT_TOPIC
    retry_delay = 2.0  # seconds before retrying after a failure

    def __init__(self, conf: cfg.ConfigOpts, driver: InterfaceDriver,
                 host: str | None = None, plugin_rpc: Any = None,
                 routers: RouterManager | None = None,
                 namespaces: LinuxHost | None = None) -> None:
        """``namespaces``: the host adapter the routers are built on (all of the
        machine's namespaces by default)."""
        super().__init__(conf, host)
        l3_conf.register(conf)
        _check_ipv6_gateway(conf.ipv6_gateway)
        self.extensions = agent_conf.extensions(conf, "l3")
        self.qos_extensions = qos.enabled(self.extensions)
        self.firewall = fwaas.EXTENSION in self.extensions and bool(conf.fwaas.enabled)
        self.policies: dict[str, dict[str, Any]] = {}  # QoS policies by id
        self.driver = driver
        self.plugin_rpc = plugin_rpc
        self.routers = routers or RouterManager(
            driver, host=namespaces, metadata=metadata.from_conf(conf),
            ha_confs_path=conf.ha_confs_path,
            ha_settings=keepalived.Settings(conf.ha_vrrp_advert_int, conf.ha_vrrp_auth_type,
                                            conf.ha_vrrp_auth_password),
            ra_confs_path=conf.ra_confs,
            ra_settings=ra.Settings(conf.min_rtr_adv_interval, conf.max_rtr_adv_interval,
                                    conf.radvd_user),
            ipv6_gateway=conf.ipv6_gateway, qos_extensions=self.qos_extensions,
            firewall=self.firewall, agent_mode=conf.agent_mode, host_name=self.host)
        self._ha_reported: dict[str, str] = {}  # router -> state the server has
        self._ha_thread: threading.Thread | None = None
        self._cond = threading.Condition()
        self._dirty: set[str] = set()
        self._port_router: dict[str, str] = {}  # interface port -> router, as last synced
        self._deleted: set[str] = set()
        self._full_sync = True
        self._restore_vrrp = False  # an audit's repair asked for it
        self._loop_thread: threading.Thread | None = None
        self.vpn = (vpn.VpnExtension(conf, self.host, self.vpn_routers)
                    if vpn.EXTENSION in self.extensions else None)

    # -- identity ------------------------------------------------------------------

    def availability_zone(self) -> str | None:
        return str(self.conf.AGENT.availability_zone)

    def configurations(self) -> dict[str, Any]:
        applied = list(self.routers.applied.values())
        return {
            "agent_mode": self.conf.agent_mode,
            "handle_internal_only_routers": self.conf.handle_internal_only_routers,
            "interface_driver": self.conf.interface_driver,
            "routers": len(applied),
            "ex_gw_ports": sum(1 for r in applied if r.gateway_device),
            "interfaces": sum(len(r.devices) - (1 if r.gateway_device else 0)
                              for r in applied),
            "floating_ips": sum(len(r.floating_ips) for r in applied),
        }

    # -- what notifications do -----------------------------------------------------

    def mark_dirty(self, router_ids: list[str]) -> None:
        with self._cond:
            self._dirty.update(router_ids)
            self._cond.notify_all()

    def mark_deleted(self, router_ids: list[str]) -> None:
        with self._cond:
            self._deleted.update(router_ids)
            self._dirty.difference_update(router_ids)
            self._cond.notify_all()

    def mark_full_sync(self, restore_vrrp: bool = False) -> None:
        """``restore_vrrp``: after the pass, HA routers' addresses and routes
        are made what keepalived's state says (``neutrino audit --repair``)."""
        with self._cond:
            self._full_sync = True
            self._restore_vrrp |= restore_vrrp
            self._cond.notify_all()

    def first_reported(self) -> None:
        """Routers left without an agent are scheduled to this one by the sync
        (``router_auto_schedule``) only once it exists."""
        self.mark_full_sync()

    def policies_pushed(self, policies: list[dict[str, Any]], deleted: bool) -> None:
        """Keep the pushed policies the routers use; redo those routers."""
        ids = {p["id"] for p in policies if p.get("id")}
        using = sorted(rid for rid, desired in list(self.routers.applied.items())
                       if qos.used_policies(desired, self.qos_extensions) & ids)
        with self._cond:
            for policy in policies:
                if deleted:
                    self.policies.pop(policy["id"], None)
                elif policy["id"] in self.policies or using:
                    self.policies[policy["id"]] = policy
        if using:
            self.mark_dirty(using)

    def ports_changed(self, port_ids: list[str]) -> None:
        """Redo the routers whose interfaces are among ``port_ids``: those
        applied, and those of the last sync (a router being applied may have
        fetched its groups before the change)."""
        wanted = set(port_ids)
        with self._cond:
            synced = {self._port_router[p] for p in wanted if p in self._port_router}
        self.mark_dirty(sorted(synced | {
            rid for rid, desired in list(self.routers.applied.items())
            if any(d.port_id in wanted for d in desired.devices)}))

    def routers_on_network(self, network_id: str) -> list[str]:
        return sorted(rid for rid, desired in self.routers.applied.items()
                      if any(d.network_id == network_id for d in desired.devices))

    def revived(self) -> None:
        super().revived()
        self.mark_full_sync()

    def pending(self) -> bool:
        with self._cond:
            return bool(self._full_sync or self._dirty or self._deleted)

    # -- one pass ------------------------------------------------------------------

    def _take(self) -> tuple[bool, set[str], set[str]]:
        with self._cond:
            taken = (self._full_sync, self._dirty, self._deleted)
            self._full_sync, self._dirty, self._deleted = False, set(), set()
            return taken

    def process(self) -> bool:
        """Handle everything pending once; False when something must be retried."""
        full, dirty, deleted = self._take()
        ok = True
        for router_id in sorted(deleted):
            ok &= self._remove(router_id)
        if not (full or dirty):
            return ok
        try:
            routers = self.plugin_rpc.sync_routers(None if full else sorted(dirty))
        except Exception:  # noqa: BLE001 - server or bus away: try again later
            LOG.exception("L3 agent on %s: sync_routers failed", self.host)
            with self._cond:
                self._full_sync |= full
                self._dirty |= dirty
            return False
        if not self.conf.handle_internal_only_routers:
            routers = [r for r in routers if r.get("gw_port")]
        with self._cond:
            if full:
                self._port_router.clear()
            for router in routers:
                for port in router.get("_interfaces", ()):
                    self._port_router[port["id"]] = router["id"]
        try:
            policies = self._policies(routers, full)
            self._firewall_groups(routers)
        except Exception:  # noqa: BLE001 - server or bus away: try again later
            LOG.exception("L3 agent on %s: pulling QoS policies or firewall groups failed",
                          self.host)
            with self._cond:
                self._full_sync |= full
                self._dirty |= dirty
            return False
        served = {r["id"] for r in routers}
        if full:
            gone = set(self.routers.applied) | set(self.routers.stale_router_ids(served))
        else:
            gone = set(dirty)
        for router_id in sorted(gone - served):
            ok &= self._remove(router_id)
        ok &= self._apply_all(routers, policies)
        if full:
            self._restore_vrrp_states()
        if self.vpn is not None and routers:
            self.vpn.wake()
        return ok

    def _policies(self, routers: list[dict[str, Any]], full: bool) -> dict[str, dict[str, Any]]:
        """The QoS policies ``routers`` name, pulled when not known (all of
        them again on a full sync, since pushes may have been missed)."""
        if not self.qos_extensions:
            return {}
        wanted = set().union(*(qos.policy_ids(r, self.qos_extensions) for r in routers))
        with self._cond:
            if full:
                self.policies.clear()
            missing = sorted(wanted - set(self.policies))
        if missing:
            pulled = {p["id"]: p for p in self.plugin_rpc.qos_policies(missing)}
            with self._cond:
                self.policies.update(pulled)
        with self._cond:
            return {pid: self.policies[pid] for pid in wanted if pid in self.policies}

    def vpn_routers(self) -> set[str]:
        """Where this host runs VPN services: its routers, an HA router only
        while it is the active one here (its gateway address is there), as
        upstream's IPsec driver."""
        return {rid for rid, desired in list(self.routers.applied.items())
                if desired.ha is None or self.routers.keepalived(rid).state() == "active"}

    def _firewall_groups(self, routers: list[dict[str, Any]]) -> None:
        """``fwaas_v2``: each router's ``_firewall_groups``, those on its interfaces."""
        if not self.firewall:
            return
        ports = sorted({p["id"] for r in routers for p in r.get("_interfaces", ())})
        found = self.plugin_rpc.firewall_groups_for_ports(ports) if ports else []
        for router in routers:
            mine = {p["id"] for p in router.get("_interfaces", ())}
            router["_firewall_groups"] = [g for g in found if mine & set(g.get("ports", ()))]

    def _remove(self, router_id: str) -> bool:
        try:
            if self.vpn is not None:
                self.vpn.router_removed(router_id)
            self.routers.remove(router_id)
            return True
        except Exception:  # noqa: BLE001
            LOG.exception("router %s: removing failed", router_id)
            with self._cond:
                self._deleted.add(router_id)
            return False

    def _apply_all(self, routers: list[dict[str, Any]],
                   policies: dict[str, dict[str, Any]]) -> bool:
        """Apply ``routers``, several at a time (the work is ``ip`` and ``nft``
        processes, each router's in its own namespace), their devices
        attached to the switch together first; distributed ones one after
        the other (their ``fip-`` namespaces are shared). Then the
        floating IPs' new statuses go to the server in one call, not one per
        router."""
        apart = [r for r in routers if not r.get("distributed")]
        results: dict[str, Result] = {}
        self.routers.attach_devices(apart)  # the switch asked once, not per device
        if apart:
            with futures.ThreadPoolExecutor(min(APPLY_WORKERS, len(apart)),
                                            thread_name_prefix="l3-apply") as pool:
                for router, result in zip(apart, pool.map(
                        lambda r: self.routers.apply(r, policies), apart)):
                    results[router["id"]] = result
        for router in routers:
            if router.get("distributed"):
                results[router["id"]] = self.routers.apply(router, policies)
        failed = {rid for rid, result in results.items() if result.error is not None}
        failed |= self._report_statuses(results)
        for rid, result in results.items():
            for group_id, status in sorted(result.firewall_statuses.items()):
                try:
                    self.plugin_rpc.set_firewall_group_status(group_id, status)
                except Exception:  # noqa: BLE001
                    LOG.exception("firewall group %s: reporting status %s failed",
                                  group_id, status)
                    failed.add(rid)
        if failed:
            self.mark_dirty(sorted(failed))
        return not failed

    def _restore_vrrp_states(self) -> None:
        with self._cond:
            asked, self._restore_vrrp = self._restore_vrrp, False
        if not asked:
            return
        for router_id in sorted(self.routers.applied):
            try:
                self.routers.restore_vrrp_state(router_id)
            except Exception:  # noqa: BLE001 - the next audit shows what is left
                LOG.exception("router %s: restoring keepalived's addresses failed", router_id)

    def _report_statuses(self, results: dict[str, Result]) -> set[str]:
        """Every router's floating IP changes in one ``update_floatingip_statuses``;
        the routers whose report did not reach the server (sent again next time).

        The call names one router, as upstream's API has it; both servers set
        each floating IP named, whatever its router (upstream's uses the
        router only to set DOWN the floating IPs it lost, and this agent
        reports those DOWN itself)."""
        changed = {rid: result.statuses for rid, result in results.items() if result.statuses}
        if not changed:
            return set()
        statuses = {fip: status for part in changed.values() for fip, status in part.items()}
        try:
            self.plugin_rpc.update_floatingip_statuses(min(changed), statuses)
        except Exception:  # noqa: BLE001
            LOG.exception("reporting the floating IP statuses of routers %s failed",
                          sorted(changed))
            for rid, part in changed.items():
                self.routers.forget_status(rid, part)
            return set(changed)
        return set()

    # -- HA routers' states --------------------------------------------------------

    def check_ha_states(self) -> None:
        """Report keepalived's transitions to the server; a keepalived that died
        is started again by redoing its router."""
        changed: dict[str, str] = {}
        dead = []
        for router_id, desired in list(self.routers.applied.items()):
            if desired.ha is None:
                continue
            proc = self.routers.keepalived(router_id)
            if proc.pid() is None:
                dead.append(router_id)
            state = proc.state()
            if state is None:
                continue
            known = self._ha_reported.get(router_id, desired.ha.state)
            if state != known:
                changed[router_id] = state
        for router_id in set(self._ha_reported) - set(self.routers.applied):
            del self._ha_reported[router_id]
        if dead:
            self.mark_dirty(dead)
        if not changed:
            return
        LOG.info("HA routers on %s changed state: %s", self.host, changed)
        if self.vpn is not None:  # VPN services follow the active router
            self.vpn.wake()
        for router_id in sorted(r for r, s in changed.items() if s == "active"):
            self.routers.announce_vips(router_id)
        try:
            self.plugin_rpc.update_ha_routers_states(changed)
        except Exception:  # noqa: BLE001 - reported again on the next look
            LOG.exception("reporting HA router states failed")
            return
        self._ha_reported.update(changed)

    def check_radvd(self) -> None:
        """A radvd that died is started again by redoing its router (upstream's
        process monitor respawns it)."""
        dead = self.routers.radvd_stopped()
        if dead:
            LOG.warning("radvd of routers %s is not running: restarting it", dead)
            self.mark_dirty(dead)

    def _watch_ha(self) -> None:
        while not self._stop.wait(HA_WATCH_INTERVAL):
            try:
                self.check_ha_states()
                self.check_radvd()
            except Exception:  # noqa: BLE001 - keep watching
                LOG.exception("watching HA router states and radvd failed")

    # -- the process ---------------------------------------------------------------

    def _loop(self) -> None:
        while not self._stop.is_set():
            with self._cond:
                while not (self._full_sync or self._dirty or self._deleted):
                    if self._stop.is_set():
                        return
                    self._cond.wait(1.0)
            if not timed_pass("l3", self.process):
                count_resync("l3")
                self._stop.wait(self.retry_delay)

    def start(self) -> None:
        """Listen for notifications, report state, run the loop (in threads)."""
        if self.plugin_rpc is None:
            self.plugin_rpc = L3PluginApi(self.conf, self.host)
        self.listen(L3_AGENT_TOPIC, [L3AgentEndpoint(self)])
        self.listen(topics.AUDIT_L3, [AuditEndpoint(self)])
        if self.qos_extensions:
            self.listen(topics.QOS_POLICY_PUSH, [QosPushEndpoint(self)])
        if self.vpn is not None:
            self.vpn.start(self.listen)
        if self.firewall:
            self.listen(topics.FIREWALL_AGENT, [FirewallAgentEndpoint(self)])
        self.start_reporting()
        self._loop_thread = threading.Thread(target=self._loop, name="l3-agent", daemon=True)
        self._loop_thread.start()
        self._ha_thread = threading.Thread(target=self._watch_ha, name="l3-ha-states",
                                           daemon=True)
        self._ha_thread.start()

    def stop(self) -> None:
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        if self._loop_thread is not None:
            self._loop_thread.join(30)
        if self.vpn is not None:
            self.vpn.stop()
        super().stop()
        if isinstance(self.plugin_rpc, L3PluginApi):
            self.plugin_rpc.close()

    def request_stop(self) -> None:
        """Safe from a signal handler: the main thread's ``wait`` returns, then ``stop``."""
        self._stop.set()

    def wait(self) -> None:
        while not self._stop.wait(1.0):
            pass

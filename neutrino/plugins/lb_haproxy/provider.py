"""The ``haproxy`` provider: each load balancer as haproxy in a namespace on
a host running neutrino's load-balancer agent (``neutrino agent
loadbalancer``).

The provider places a load balancer on a host (``hosting``: the VIP port
bound there) and casts ``loadbalancer_changed`` to that host's agent for
every change; the agent fetches the graph (``get_loadbalancer``), applies
it and reports the provisioning statuses it finished, then the operating
statuses and counters it reads from haproxy (``rpc.LoadBalancerCallbacks``
forwards them to the Octavia plugin). A failover builds the load balancer
again: on its host while that agent lives, else on another one, and a
periodic task moves load balancers off agents that died, as Octavia's
health manager fails amphorae over.

The provider is built by the Octavia plugin, which is its status reporter;
it also reaches the plugin's core plugin (ports, the bus) through it.
"""
from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from neutrino.conf import lb_haproxy as lb_conf
from neutrino.context import Context
from neutrino.plugins.lb_haproxy import hosting, vrrp
from neutrino.plugins.lb_haproxy.barbican import BarbicanStore
from neutrino.plugins.lb_haproxy.cert_files import FileStore
from neutrino.plugins.lb_haproxy.certificates import BARBICAN, CertificateError, CertStore
from neutrino.plugins.lb_haproxy.vip_security import VipSecurity
from neutrino.plugins.octavia import faults
from neutrino.plugins.octavia import provider_api as papi
from neutrino.resources import lb_haproxy
from neutrino.resources.lb_graph import DELETED, ERROR, LoadBalancer
from neutrino.rpc import topics

LOG = logging.getLogger(__name__)


def cert_store(conf: Any) -> CertStore:
    """The store ``[certificates] cert_manager`` names (files unless Barbican)."""
    if conf.certificates.cert_manager == BARBICAN:
        return BarbicanStore(conf)
    return FileStore(conf.certificates.storage_path)


class HaproxyProvider(papi.ProviderDriver):
    name = lb_haproxy.PROVIDER
    description = "haproxy in a network namespace of a neutrino load-balancer agent's host."

    def __init__(self, conf: Any, reporter: papi.StatusReporter) -> None:
        super().__init__(conf, reporter)
        lb_conf.register(conf)
        self.certs = cert_store(conf)
        self._security: VipSecurity | None = None

    @property
    def security(self) -> VipSecurity:
        if self._security is None:
            self._security = VipSecurity(self.core, self.db)
        return self._security

    # -- what the Octavia plugin gives ------------------------------------------

    @property
    def core(self) -> Any:
        return self.reporter.core

    @property
    def db(self) -> Any:
        return self.reporter.db

    def _cast(self, host: str, method: str, lb_id: str) -> None:
        casts = getattr(self.core, "casts", None)
        if casts is not None:
            casts.cast(topics.LOADBALANCER_AGENT, method, server=host, loadbalancer_id=lb_id)

    # -- refusals ---------------------------------------------------------------

    def check(self, lb: LoadBalancer) -> None:
        why = lb_haproxy.unsupported(lb)
        if why:
            raise papi.UnsupportedOption(why)

    def check_tls_refs(self, ctx: Context, certificates: list[str], secrets: list[str]) -> None:
        try:
            self.certs.check(ctx, certificates, secrets)
        except CertificateError as exc:
            raise faults.CertificateRetrieval(ref=exc.refs) from None

    def flavor_capabilities(self) -> dict[str, str]:
        # no ':' or ',' in it: tempest's expected_flavor_capability (an oslo
        # DictOpt) must be able to name it
        return {"loadbalancer_topology": "The load balancer topology. SINGLE - one haproxy "
                                         "per load balancer. ACTIVE_STANDBY - two haproxy on "
                                         "two hosts with keepalived between them."}

    def availability_zone_capabilities(self) -> dict[str, str]:
        return {"compute_zone": "The availability zone of the load-balancer agents "
                                "([AGENT] availability_zone) that may serve the load "
                                "balancer."}

    def validate_flavor(self, data: dict[str, Any]) -> None:
        super().validate_flavor(data)
        topology = data.get("loadbalancer_topology", "SINGLE")
        if topology not in lb_haproxy.TOPOLOGIES:
            raise papi.UnsupportedOption(
                f"haproxy provider does not support the {topology} topology.")

    # -- placement --------------------------------------------------------------

    def _placement(self) -> tuple[dict[str, hosting.LbAgent], dict[str, list[str]]]:
        """The agents, and the hosts of each of this provider's load balancers."""
        graphs = self.reporter.graphs(self.name)
        with self.db.reader() as conn:
            agents = hosting.agents(conn, int(self.conf.agent_down_time))
            bound = hosting.hosts_of(conn, [g.vip.port_id for g in graphs])
            where = {}
            for lb in graphs:
                if lb_haproxy.topology_of(lb) == lb_haproxy.ACTIVE_STANDBY:
                    where[lb.id] = [p.host for p in vrrp.ports(conn, lb.id) if p.host]
                else:
                    where[lb.id] = [h for h in (bound.get(lb.vip.port_id),) if h]
        return agents, where

    def _bind(self, port_id: str, host: str) -> None:
        self.core.update(Context.admin(), "ports", port_id, {"binding:host_id": host})

    def place(self, lb: LoadBalancer) -> list[str] | None:
        """The hosts that serve ``lb`` (bound now where they were not); None
        when there are not enough live load-balancer agents. A host whose
        agent lives keeps the load balancer (a failover rebuilds it there)."""
        agents, where = self._placement()
        agents = hosting.in_zone(agents, lb.availability_zone.get("compute_zone"))
        load = Counter(h for hosts in where.values() for h in hosts)
        if lb_haproxy.topology_of(lb) == lb_haproxy.ACTIVE_STANDBY:
            return self._place_pair(lb, agents, load)
        current = self._bound_host(lb)
        if current and current in agents and agents[current].usable:
            return [current]
        host = hosting.choose(agents, load, avoid=current or None)
        if host is None:
            return None
        self._bind(lb.vip.port_id, host)
        if current and current != host:
            self._cast(current, "loadbalancer_changed", lb.id)  # its agent tears down
        return [host]

    def _place_pair(self, lb: LoadBalancer, agents: dict[str, hosting.LbAgent],
                    load: Counter[str]) -> list[str] | None:
        with self.db.reader() as conn:
            have = {p.index: p for p in vrrp.ports(conn, lb.id)}
        kept = {i: p.host for i, p in have.items()
                if p.host in agents and agents[p.host].usable}
        hosts = dict(kept)
        for index in (0, 1):
            if index in hosts:
                continue
            others = {h: a for h, a in agents.items() if h not in hosts.values()}
            host = hosting.choose(others, load)
            if host is None:
                return None
            hosts[index] = host
            load[host] += 1
        for index, host in hosts.items():
            port = have.get(index)
            if port is None:
                self._make_vrrp_port(lb, index, host)
            elif port.host != host:
                if port.host:
                    self._cast(port.host, "loadbalancer_changed", lb.id)
                self._bind(port.id, host)
        return [hosts[0], hosts[1]]

    def _make_vrrp_port(self, lb: LoadBalancer, index: int, host: str) -> None:
        fixed = {"subnet_id": lb.vip.subnet_id} if lb.vip.subnet_id else {}
        self.core.create(Context.admin(), "ports", [{
            "project_id": lb.project_id, "network_id": lb.vip.network_id,
            "name": vrrp.name(lb.id, index), "admin_state_up": True,
            "device_id": vrrp.device_id(lb.id), "device_owner": vrrp.DEVICE_OWNER,
            "fixed_ips": [fixed] if fixed else [],
            "allowed_address_pairs": [{"ip_address": lb.vip.address}],
            "binding:host_id": host}])

    def _bound_host(self, lb: LoadBalancer) -> str:
        with self.db.reader() as conn:
            return hosting.hosts_of(conn, [lb.vip.port_id]).get(lb.vip.port_id, "")

    def _hosts(self, lb: LoadBalancer) -> list[str]:
        if lb_haproxy.topology_of(lb) == lb_haproxy.ACTIVE_STANDBY:
            with self.db.reader() as conn:
                return [p.host for p in vrrp.ports(conn, lb.id) if p.host]
        host = self._bound_host(lb)
        return [host] if host else []

    def _changed(self, lb: LoadBalancer, method: str = "loadbalancer_changed") -> None:
        hosts = self.place(lb)
        if hosts is None:
            LOG.error("load balancer %s: not enough live load-balancer agents to serve it",
                      lb.id)
            self.reporter.update_statuses([papi.ObjectStatus(s.kind, s.id, ERROR)
                                           for s in papi.pending_statuses(lb)
                                           if s.provisioning_status != DELETED])
            return
        self._secure(lb)
        for host in hosts:
            self._cast(host, method, lb.id)

    def _secure(self, lb: LoadBalancer) -> None:
        """The VIP's security group in step with the listeners (a failure is
        logged: the load balancer is realised all the same)."""
        if lb_haproxy.topology_of(lb) == lb_haproxy.ACTIVE_STANDBY:
            with self.db.reader() as conn:
                ports = [p.id for p in vrrp.ports(conn, lb.id)]
        else:
            ports = [lb.vip.port_id]
        try:
            self.security.sync(lb, ports)
        except Exception:  # noqa: BLE001 - clients may be refused until the next change
            LOG.exception("load balancer %s: its security group is not in step", lb.id)

    # -- changes ----------------------------------------------------------------

    def loadbalancer_create(self, lb: LoadBalancer) -> None:
        self._changed(lb)

    def loadbalancer_update(self, lb: LoadBalancer) -> None:
        self._changed(lb)

    def loadbalancer_delete(self, lb: LoadBalancer, cascade: bool) -> None:
        hosts = self._hosts(lb)
        for host in hosts:
            self._cast(host, "loadbalancer_changed", lb.id)
        if not hosts:  # never placed: nothing to undo anywhere
            self.report(papi.pending_statuses(lb))

    def loadbalancer_failover(self, lb: LoadBalancer) -> None:
        self._changed(lb, "loadbalancer_failover")

    def _object_changed(self, lb: LoadBalancer, object_id: str) -> None:
        self._changed(lb)

    listener_create = listener_update = listener_delete = _object_changed
    pool_create = pool_update = pool_delete = _object_changed
    member_create = member_update = member_delete = member_batch_update = _object_changed
    health_monitor_create = health_monitor_update = health_monitor_delete = _object_changed
    l7policy_create = l7policy_update = l7policy_delete = _object_changed
    l7rule_create = l7rule_update = l7rule_delete = _object_changed

    # -- what the agents ask ----------------------------------------------------

    def loadbalancers_on(self, host: str) -> list[str]:
        _, where = self._placement()
        return sorted(i for i, hosts in where.items() if host in hosts)

    def describe(self, lb_id: str, host: str) -> dict[str, Any] | None:
        """``lb_id`` as the agent of ``host`` needs it; None when it is gone
        or served elsewhere."""
        lb = self.reporter.graph(lb_id)
        if lb is None or lb.provider != self.name:
            return None
        admin = Context.admin()
        pair = None
        port_id = lb.vip.port_id
        if lb_haproxy.topology_of(lb) == lb_haproxy.ACTIVE_STANDBY:
            with self.db.reader() as conn:
                pair = vrrp.ports(conn, lb.id)
            mine = [p for p in pair if p.host == host]
            if not mine:
                return None
            port_id = mine[0].id
        try:
            port = self.core.get(admin, "ports", port_id)
        except Exception:  # noqa: BLE001 - the VIP port is gone: nothing to serve
            return None
        if port.get("binding:host_id") != host:
            return None
        subnets = {}
        for fixed in port.get("fixed_ips") or []:
            subnet = self.core.get(admin, "subnets", fixed["subnet_id"])
            subnets[subnet["id"]] = {"cidr": subnet["cidr"], "gateway_ip": subnet["gateway_ip"],
                                     "host_routes": subnet.get("host_routes") or []}
        network = self.core.get(admin, "networks", port["network_id"])
        certificates = {}
        for listener in lb_haproxy.live(lb.listeners):
            try:
                bundle = self.certs.for_listener(listener)
            except CertificateError:
                LOG.exception("listener %s: its certificates are gone", listener.id)
                continue
            if bundle:
                certificates[listener.id] = bundle
        pool_certificates = {}
        for pool in lb_haproxy.live(lb.pools):
            try:
                files = self.certs.for_pool(pool)
            except CertificateError:
                LOG.exception("pool %s: its certificates are gone", pool.id)
                continue
            if files:
                pool_certificates[pool.id] = files
        extra: dict[str, Any] = {}
        if pair is not None:
            me = next(p for p in pair if p.id == port_id)
            extra["vrrp"] = {"vip": lb.vip.address, "router_id": vrrp.router_id(lb.id),
                             "priority": 100 if me.index == 0 else 90,
                             "peers": [p.address for p in pair if p.id != port_id and p.address]}
            # one agent of the pair says when a change is done: two would race,
            # a late report of an older change ending a newer one's PENDING_*
            extra["report_provisioning"] = me.index == 0
        return {**extra, "loadbalancer": lb.to_dict(),
                "vip_port": {"id": port["id"], "network_id": port["network_id"],
                             "mac_address": port["mac_address"],
                             "fixed_ips": port.get("fixed_ips") or []},
                "subnets": subnets, "mtu": network.get("mtu"), "certificates": certificates,
                "pool_certificates": pool_certificates}

    def report(self, statuses: list[papi.ObjectStatus]) -> None:
        """The agent's statuses to the Octavia plugin; a load balancer deleted
        gives its VIP port's binding back (a port the API made goes with it)."""
        gone = [s.id for s in statuses
                if s.kind == papi.LOADBALANCERS and s.provisioning_status == DELETED]
        graphs = [lb for lb in (self.reporter.graph(i) for i in gone) if lb]
        ports = [lb.vip.port_id for lb in graphs]
        with self.db.reader() as conn:
            pairs = [p.id for i in gone for p in vrrp.ports(conn, i)]
        for lb_id in {s.id for s in statuses if s.kind == papi.LOADBALANCERS} - set(gone):
            lb = self.reporter.graph(lb_id)
            if lb is not None:
                statuses = papi.unmonitored_members(lb, papi.online_when_active(lb, statuses))
        self.reporter.update_statuses(statuses)
        for port_id in ports:
            try:
                self.core.update(Context.admin(), "ports", port_id, {"binding:host_id": ""})
            except Exception:  # noqa: BLE001 - released with its load balancer
                pass
        for port_id in pairs:
            try:
                self.core.delete(Context.admin(), "ports", port_id)
            except Exception:  # noqa: BLE001 - already gone
                pass
        for lb in graphs:
            try:
                self.security.remove(lb)
            except Exception:  # noqa: BLE001 - a group left behind harms no one
                LOG.exception("load balancer %s: its security group stays", lb.id)

    # -- the RPC process ----------------------------------------------------------

    def rpc_endpoints(self) -> dict[str, list[Any]]:
        # deferred: oslo.messaging only in the RPC process (module docstring of rpc)
        from neutrino.plugins.lb_haproxy.rpc import LoadBalancerCallbacks
        return {topics.LOADBALANCER_PLUGIN: [LoadBalancerCallbacks(self)]}

    def periodic_tasks(self) -> list[papi.PeriodicTask]:
        return [(float(self.conf.agent_down_time), self.move_off_dead_agents)]

    def move_off_dead_agents(self) -> None:
        """Load balancers whose agent died go to a live one (a failover)."""
        agents, where = self._placement()
        dead = {i for i, hosts in where.items()
                if any(h in agents and not agents[h].alive for h in hosts)}
        if not dead or not any(a.usable for a in agents.values()):
            return
        for lb in self.reporter.graphs(self.name):
            if lb.id in dead:
                LOG.warning("load balancer %s: an agent of %s is dead; failing over",
                            lb.id, where[lb.id])
                self._changed(lb, "loadbalancer_failover")

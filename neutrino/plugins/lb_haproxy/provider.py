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
from neutrino.plugins.lb_haproxy import hosting
from neutrino.plugins.lb_haproxy.certificates import CertificateError, CertStore
from neutrino.plugins.octavia import faults
from neutrino.plugins.octavia import provider_api as papi
from neutrino.resources import lb_haproxy
from neutrino.resources.lb_graph import DELETED, ERROR, LoadBalancer
from neutrino.rpc import topics

LOG = logging.getLogger(__name__)


class CertificateRetrieval(faults.Fault):
    """A TLS reference the store cannot give (Octavia's 400, nothing written)."""

    code = 400
    msg = "Could not retrieve certificate: %(ref)s"


class HaproxyProvider(papi.ProviderDriver):
    name = lb_haproxy.PROVIDER
    description = "haproxy in a network namespace of a neutrino load-balancer agent's host."

    def __init__(self, conf: Any, reporter: papi.StatusReporter) -> None:
        super().__init__(conf, reporter)
        lb_conf.register(conf)
        self.certs = CertStore(conf.certificates.storage_path)

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
        for listener in lb_haproxy.live(lb.listeners):
            try:
                self.certs.for_listener(listener)
            except CertificateError as exc:
                raise CertificateRetrieval(ref=exc.refs) from None

    def flavor_capabilities(self) -> dict[str, str]:
        return {"loadbalancer_topology": "The load balancer topology. One of: SINGLE - "
                                         "One haproxy per load balancer."}

    def validate_flavor(self, data: dict[str, Any]) -> None:
        super().validate_flavor(data)
        topology = data.get("loadbalancer_topology", "SINGLE")
        if topology not in lb_haproxy.TOPOLOGIES:
            raise papi.UnsupportedOption(
                f"haproxy provider does not support the {topology} topology.")

    # -- placement --------------------------------------------------------------

    def _placement(self) -> tuple[dict[str, hosting.LbAgent], dict[str, str]]:
        """The agents, and the host of each of this provider's load balancers."""
        graphs = self.reporter.graphs(self.name)
        with self.db.reader() as conn:
            agents = hosting.agents(conn, int(self.conf.agent_down_time))
            bound = hosting.hosts_of(conn, [g.vip.port_id for g in graphs])
        return agents, {g.id: bound.get(g.vip.port_id, "") for g in graphs}

    def _bind(self, lb: LoadBalancer, host: str) -> None:
        self.core.update(Context.admin(), "ports", lb.vip.port_id, {"binding:host_id": host})

    def place(self, lb: LoadBalancer, failover: bool = False) -> str | None:
        """The host that serves ``lb`` (bound now if it was not); None when
        no load-balancer agent can. A failover keeps the host while its
        agent lives."""
        agents, where = self._placement()
        current = where.get(lb.id) or self._bound_host(lb)
        if current and current in agents and agents[current].usable:
            return current
        load = Counter(h for h in where.values() if h)
        host = hosting.choose(agents, load, avoid=current or None)
        if host is None:
            return None
        self._bind(lb, host)
        if current and current != host:
            self._cast(current, "loadbalancer_changed", lb.id)  # its agent tears down
        return host

    def _bound_host(self, lb: LoadBalancer) -> str:
        with self.db.reader() as conn:
            return hosting.hosts_of(conn, [lb.vip.port_id]).get(lb.vip.port_id, "")

    def _changed(self, lb: LoadBalancer, method: str = "loadbalancer_changed") -> None:
        host = self.place(lb, failover=method == "loadbalancer_failover")
        if host is None:
            LOG.error("load balancer %s: no load-balancer agent is alive to serve it", lb.id)
            self.reporter.update_statuses([papi.ObjectStatus(s.kind, s.id, ERROR)
                                           for s in papi.pending_statuses(lb)
                                           if s.provisioning_status != DELETED])
            return
        self._cast(host, method, lb.id)

    # -- changes ----------------------------------------------------------------

    def loadbalancer_create(self, lb: LoadBalancer) -> None:
        self._changed(lb)

    def loadbalancer_update(self, lb: LoadBalancer) -> None:
        self._changed(lb)

    def loadbalancer_delete(self, lb: LoadBalancer, cascade: bool) -> None:
        host = self._bound_host(lb)
        if host:
            self._cast(host, "loadbalancer_changed", lb.id)
        else:  # never placed: nothing to undo anywhere
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
        return sorted(i for i, h in where.items() if h and h == host)

    def describe(self, lb_id: str, host: str) -> dict[str, Any] | None:
        """``lb_id`` as the agent of ``host`` needs it; None when it is gone
        or served elsewhere."""
        lb = self.reporter.graph(lb_id)
        if lb is None or lb.provider != self.name:
            return None
        admin = Context.admin()
        try:
            port = self.core.get(admin, "ports", lb.vip.port_id)
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
        return {"loadbalancer": lb.to_dict(),
                "vip_port": {"id": port["id"], "network_id": port["network_id"],
                             "mac_address": port["mac_address"],
                             "fixed_ips": port.get("fixed_ips") or []},
                "subnets": subnets, "mtu": network.get("mtu"), "certificates": certificates}

    def report(self, statuses: list[papi.ObjectStatus]) -> None:
        """The agent's statuses to the Octavia plugin; a load balancer deleted
        gives its VIP port's binding back (a port the API made goes with it)."""
        gone = [s.id for s in statuses
                if s.kind == papi.LOADBALANCERS and s.provisioning_status == DELETED]
        ports = [lb.vip.port_id for lb in (self.reporter.graph(i) for i in gone) if lb]
        self.reporter.update_statuses(statuses)
        for port_id in ports:
            try:
                self.core.update(Context.admin(), "ports", port_id, {"binding:host_id": ""})
            except Exception:  # noqa: BLE001 - released with its load balancer
                pass

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
        dead = {i for i, h in where.items() if h and h in agents and not agents[h].alive}
        if not dead or not any(a.usable for a in agents.values()):
            return
        for lb in self.reporter.graphs(self.name):
            if lb.id in dead:
                LOG.warning("load balancer %s: its agent on %s is dead; failing over",
                            lb.id, where[lb.id])
                self._changed(lb, "loadbalancer_failover")

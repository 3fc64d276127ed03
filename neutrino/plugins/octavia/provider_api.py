"""The one interface every load-balancer provider implements.

The Octavia v2 API (``neutrino.plugins.octavia``) owns the model, the
validation, the policy, the quotas and the status lifecycle; a provider
(Octavia's "provider driver", the ``provider`` attribute of a load
balancer) realises load balancers and tells the API how they are doing.
Providers are found by name in the ``neutrino.octavia.providers`` entry
points and enabled by ``[api_settings] enabled_provider_drivers``.

How a change reaches a provider:

1. The API validates the request, then, inside the transaction that writes
   it, builds the load balancer's graph as it will be after the change
   (``neutrino.resources.lb_graph.LoadBalancer``: the VIP, listeners with
   their L7 policies and rules, pools with members and health monitor, as
   plain frozen dataclasses) and calls ``check``. A provider refuses what it
   cannot do there by raising ``UnsupportedOption`` (the API answers 501
   ``Provider '<name>' does not support a requested option: <message>`` and
   nothing is written), as Octavia's amphora driver refuses
   ``SOURCE_IP_PORT``.
2. Once committed, the changed objects are PENDING_CREATE, PENDING_UPDATE or
   PENDING_DELETE and their load balancer PENDING_UPDATE (PENDING_CREATE or
   PENDING_DELETE for the load balancer's own create and delete); the API
   calls the method named after the change (``listener_create``,
   ``member_batch_update``, ``loadbalancer_failover``, ...) with the graph as
   committed and the id of the object concerned. A deleted object is still
   in the graph, PENDING_DELETE; a cascade delete has the whole graph
   PENDING_DELETE. The call must not block on the data plane: an agent-based
   provider casts to its agent and returns.
3. When done, the provider (or its agent, through the provider's RPC
   endpoints) reports through the ``StatusReporter`` it was built with:
   ``update_statuses`` with the provisioning status of each object it
   realised (ACTIVE, ERROR, or DELETED to remove the row) and the operating
   statuses it observes (ONLINE, OFFLINE, DEGRADED, ERROR, DRAINING,
   NO_MONITOR), at any time; ``update_stats`` with per-listener counters.
   The API never moves an object out of PENDING_* by itself: the provider's
   report is the only way back to ACTIVE, so the API refuses further changes
   (409) until then, as Octavia does.

A provider may also bring RPC endpoints (by topic, served by the RPC process
as the plugins' are) and periodic tasks, and publishes the flavor and
availability-zone capabilities its profiles may use.

The in-tree ``noop`` provider (``noop_provider.py``) reports every change
done at once; it serves the API tests and the conformance suite.
"""
from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any, Callable

from neutrino.context import Context
from neutrino.resources.lb_graph import LoadBalancer

# (interval in seconds, task), as ``plugins.base.PeriodicTask``
PeriodicTask = tuple[float, Callable[[], None]]

# the kinds of object a status update names (Octavia's status-update keys)
LOADBALANCERS = "loadbalancers"
LISTENERS = "listeners"
POOLS = "pools"
MEMBERS = "members"
HEALTHMONITORS = "healthmonitors"
L7POLICIES = "l7policies"
L7RULES = "l7rules"
KINDS = (LOADBALANCERS, LISTENERS, POOLS, MEMBERS, HEALTHMONITORS, L7POLICIES, L7RULES)


class UnsupportedOption(Exception):
    """Raised by ``check``: the provider cannot realise this graph (501)."""


@dataclass(frozen=True)
class ObjectStatus:
    """One object's new statuses; ``None`` leaves that status as it is."""

    kind: str  # one of KINDS
    id: str
    provisioning_status: str | None = None
    operating_status: str | None = None


@dataclass(frozen=True)
class ListenerStats:
    """Counters of one listener since its process started (cumulative:
    the API stores the latest report, not a sum of reports)."""

    listener_id: str
    bytes_in: int = 0
    bytes_out: int = 0
    active_connections: int = 0
    total_connections: int = 0
    request_errors: int = 0


class StatusReporter(abc.ABC):
    """What a provider reports to (implemented by the Octavia plugin)."""

    @abc.abstractmethod
    def update_statuses(self, statuses: list[ObjectStatus]) -> None:
        """Write the statuses; unknown ids are ignored (an object deleted
        meanwhile). ``DELETED`` removes the object's row; a load balancer
        DELETED also releases its VIP port."""

    @abc.abstractmethod
    def update_stats(self, stats: list[ListenerStats]) -> None:
        """Store the listeners' latest counters."""

    @abc.abstractmethod
    def graph(self, loadbalancer_id: str) -> LoadBalancer | None:
        """The load balancer's graph as it stands (an agent's resync)."""

    @abc.abstractmethod
    def graphs(self, provider: str) -> list[LoadBalancer]:
        """Every load balancer of this provider (a provider's full resync)."""


class ProviderDriver(abc.ABC):
    """One provider: ``name`` as load balancers and ``/providers`` show it."""

    name: str = ""
    description: str = ""

    def __init__(self, conf: Any, reporter: StatusReporter) -> None:
        self.conf = conf
        self.reporter = reporter

    # --- refusals, inside the writing transaction ---------------------------

    def check(self, lb: LoadBalancer) -> None:
        """Raise ``UnsupportedOption`` for what this provider cannot realise
        in ``lb`` (the graph as it will be after the change)."""

    def check_tls_refs(self, ctx: Context, certificates: list[str], secrets: list[str]) -> None:
        """Raise ``faults.CertificateRetrieval`` for the TLS references of a
        request (``tls_refs``) the provider cannot read on behalf of ``ctx``;
        called before the write's transaction, since reading them may be a
        remote call. By default references are taken as given (Octavia's
        no-op certificate manager)."""

    # --- capabilities --------------------------------------------------------

    def flavor_capabilities(self) -> dict[str, str]:
        """The keys a flavor profile's ``flavor_data`` may hold: name -> description."""
        return {}

    def availability_zone_capabilities(self) -> dict[str, str]:
        """The keys an availability zone profile's data may hold."""
        return {}

    def validate_flavor(self, data: dict[str, Any]) -> None:
        """Raise ``UnsupportedOption`` for a ``flavor_data`` it cannot use;
        by default any key outside ``flavor_capabilities``."""
        unknown = sorted(set(data) - set(self.flavor_capabilities()))
        if unknown:
            raise UnsupportedOption(f"Unsupported flavor metadata: {', '.join(unknown)}")

    def validate_availability_zone(self, data: dict[str, Any]) -> None:
        unknown = sorted(set(data) - set(self.availability_zone_capabilities()))
        if unknown:
            raise UnsupportedOption(
                f"Unsupported availability zone metadata: {', '.join(unknown)}")

    # --- changes, after the commit -------------------------------------------

    @abc.abstractmethod
    def loadbalancer_create(self, lb: LoadBalancer) -> None: ...

    @abc.abstractmethod
    def loadbalancer_update(self, lb: LoadBalancer) -> None: ...

    @abc.abstractmethod
    def loadbalancer_delete(self, lb: LoadBalancer, cascade: bool) -> None:
        """``lb`` and (with ``cascade``) everything in it are PENDING_DELETE;
        report each DELETED."""

    @abc.abstractmethod
    def loadbalancer_failover(self, lb: LoadBalancer) -> None:
        """Rebuild the load balancer's data plane; it is PENDING_UPDATE."""

    @abc.abstractmethod
    def listener_create(self, lb: LoadBalancer, listener_id: str) -> None: ...

    @abc.abstractmethod
    def listener_update(self, lb: LoadBalancer, listener_id: str) -> None: ...

    @abc.abstractmethod
    def listener_delete(self, lb: LoadBalancer, listener_id: str) -> None: ...

    @abc.abstractmethod
    def pool_create(self, lb: LoadBalancer, pool_id: str) -> None: ...

    @abc.abstractmethod
    def pool_update(self, lb: LoadBalancer, pool_id: str) -> None: ...

    @abc.abstractmethod
    def pool_delete(self, lb: LoadBalancer, pool_id: str) -> None:
        """The pool, its members and health monitor are PENDING_DELETE."""

    @abc.abstractmethod
    def member_create(self, lb: LoadBalancer, member_id: str) -> None: ...

    @abc.abstractmethod
    def member_update(self, lb: LoadBalancer, member_id: str) -> None: ...

    @abc.abstractmethod
    def member_delete(self, lb: LoadBalancer, member_id: str) -> None: ...

    @abc.abstractmethod
    def member_batch_update(self, lb: LoadBalancer, pool_id: str) -> None:
        """The pool's members were replaced: each new one PENDING_CREATE,
        each changed one PENDING_UPDATE, each removed one PENDING_DELETE."""

    @abc.abstractmethod
    def health_monitor_create(self, lb: LoadBalancer, healthmonitor_id: str) -> None: ...

    @abc.abstractmethod
    def health_monitor_update(self, lb: LoadBalancer, healthmonitor_id: str) -> None: ...

    @abc.abstractmethod
    def health_monitor_delete(self, lb: LoadBalancer, healthmonitor_id: str) -> None: ...

    @abc.abstractmethod
    def l7policy_create(self, lb: LoadBalancer, l7policy_id: str) -> None: ...

    @abc.abstractmethod
    def l7policy_update(self, lb: LoadBalancer, l7policy_id: str) -> None: ...

    @abc.abstractmethod
    def l7policy_delete(self, lb: LoadBalancer, l7policy_id: str) -> None:
        """The policy and its rules are PENDING_DELETE."""

    @abc.abstractmethod
    def l7rule_create(self, lb: LoadBalancer, l7rule_id: str) -> None: ...

    @abc.abstractmethod
    def l7rule_update(self, lb: LoadBalancer, l7rule_id: str) -> None: ...

    @abc.abstractmethod
    def l7rule_delete(self, lb: LoadBalancer, l7rule_id: str) -> None: ...

    # --- the provider's own processes ----------------------------------------

    def rpc_endpoints(self) -> dict[str, list[Any]]:
        """What the provider's agents call, by topic (served by the RPC
        process; the endpoints report through ``self.reporter``)."""
        return {}

    def periodic_tasks(self) -> list[PeriodicTask]:
        """Work the RPC process repeats (e.g. rescheduling off dead agents)."""
        return []


def pending_statuses(lb: LoadBalancer) -> list[ObjectStatus]:
    """Every object of ``lb`` that is PENDING_*, reported done: PENDING_DELETE
    becomes DELETED, the others ACTIVE. A provider that realises a graph in
    one step (the noop provider, an agent after applying it) reports this."""
    out: list[ObjectStatus] = []

    def add(kind: str, obj: Any) -> None:
        status = obj.provisioning_status
        if status == "PENDING_DELETE":
            out.append(ObjectStatus(kind, obj.id, "DELETED"))
        elif status in ("PENDING_CREATE", "PENDING_UPDATE"):
            out.append(ObjectStatus(kind, obj.id, "ACTIVE"))

    for listener in lb.listeners:
        for policy in listener.l7policies:
            for rule in policy.rules:
                add(L7RULES, rule)
            add(L7POLICIES, policy)
        add(LISTENERS, listener)
    for pool in lb.pools:
        for member in pool.members:
            add(MEMBERS, member)
        if pool.healthmonitor is not None:
            add(HEALTHMONITORS, pool.healthmonitor)
        add(POOLS, pool)
    add(LOADBALANCERS, lb)
    return out


ONLINE_WHEN_ACTIVE = (HEALTHMONITORS, L7POLICIES, L7RULES)


def online_when_active(lb: LoadBalancer, statuses: list[ObjectStatus]) -> list[ObjectStatus]:
    """``statuses`` with the health monitors, L7 policies and rules made
    ACTIVE also ONLINE (OFFLINE when disabled), as Octavia's worker marks
    them: no health manager reports those."""
    enabled = {}
    for listener in lb.listeners:
        for policy in listener.l7policies:
            enabled[policy.id] = policy.admin_state_up
            enabled.update({rule.id: rule.admin_state_up for rule in policy.rules})
    for pool in lb.pools:
        if pool.healthmonitor is not None:
            enabled[pool.healthmonitor.id] = pool.healthmonitor.admin_state_up
    out = []
    for st in statuses:
        if (st.kind in ONLINE_WHEN_ACTIVE and st.provisioning_status == "ACTIVE"
                and st.operating_status is None and st.id in enabled):
            st = ObjectStatus(st.kind, st.id, "ACTIVE",
                              "ONLINE" if enabled[st.id] else "OFFLINE")
        out.append(st)
    return out


def unmonitored_members(lb: LoadBalancer, statuses: list[ObjectStatus]) -> list[ObjectStatus]:
    """``statuses`` (a report that finished a change of ``lb``) with the
    operating status of every member no health monitor watches: NO_MONITOR,
    OFFLINE when it, its pool or ``lb`` is disabled. Octavia's API shows
    exactly that once the member is ACTIVE; a provider whose health readings
    come later (an agent's next look at its data plane) would otherwise
    leave a new, disabled or no longer monitored member showing what it was
    created with until then, and that reading could only say the same."""
    if not any(st.kind == LOADBALANCERS and st.id == lb.id and st.provisioning_status
               for st in statuses):
        return statuses
    reported = {st.id: i for i, st in enumerate(statuses)}
    out = list(statuses)
    for pool in lb.pools:
        hm = pool.healthmonitor
        if pool.provisioning_status == "PENDING_DELETE" or (
                hm is not None and hm.admin_state_up and hm.provisioning_status != "PENDING_DELETE"):
            continue
        for member in pool.members:
            if member.provisioning_status == "PENDING_DELETE":
                continue
            enabled = member.admin_state_up and pool.admin_state_up and lb.admin_state_up
            status = "NO_MONITOR" if enabled else "OFFLINE"
            i = reported.get(member.id)
            if i is None:
                out.append(ObjectStatus(MEMBERS, member.id, None, status))
            elif out[i].provisioning_status != "DELETED" and out[i].operating_status is None:
                out[i] = ObjectStatus(MEMBERS, member.id, out[i].provisioning_status, status)
    return out


CERTIFICATE_REFS = ("default_tls_container_ref", "sni_container_refs", "tls_container_ref")
SECRET_REFS = ("client_ca_tls_container_ref", "client_crl_container_ref",
               "ca_tls_container_ref", "crl_container_ref")


def tls_refs(body: Any) -> tuple[list[str], list[str]]:
    """The certificate and the secret references anywhere in a request's
    body (a single-call create nests listeners, pools and redirect pools);
    only strings: the rest is the validation's to refuse."""
    certificates: list[str] = []
    secrets: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            for key, value in node.items():
                into = (certificates if key in CERTIFICATE_REFS
                        else secrets if key in SECRET_REFS else None)
                if into is None:
                    walk(value)
                    continue
                for ref in value if isinstance(value, list) else [value]:
                    if isinstance(ref, str) and ref and ref not in into:
                        into.append(ref)
    walk(body)
    return certificates, secrets

"""A load balancer's whole object graph as plain data.

This is what a load-balancer provider is handed for every change
(``neutrino.plugins.octavia.provider_api``) and what travels over RPC to a
provider's host agent: the load balancer with its VIP, listeners (each with
its L7 policies and their rules), pools (each with its members and health
monitor), every object carrying its statuses as the API shows them. It
lives in ``resources`` so that both the server's provider drivers and the
agents (which may not import the plugins) read the same shapes.

``to_dict`` gives JSON-able dicts (tuples become lists); ``from_dict``
rebuilds the graph, ignoring keys it does not know so that an older agent
reads a newer server's message.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, TypeVar

# provisioning_status values (Octavia's constants)
ACTIVE = "ACTIVE"
DELETED = "DELETED"
ERROR = "ERROR"
PENDING_CREATE = "PENDING_CREATE"
PENDING_UPDATE = "PENDING_UPDATE"
PENDING_DELETE = "PENDING_DELETE"
PENDING = (PENDING_CREATE, PENDING_UPDATE, PENDING_DELETE)

# operating_status values
ONLINE = "ONLINE"
OFFLINE = "OFFLINE"
DEGRADED = "DEGRADED"
DRAINING = "DRAINING"
NO_MONITOR = "NO_MONITOR"
OPERATING_STATUSES = (ONLINE, OFFLINE, DEGRADED, ERROR, DRAINING, NO_MONITOR)

T = TypeVar("T")


@dataclass(frozen=True)
class Statuses:
    """The two statuses every object of the graph carries, as the API shows
    them: keyword-only, so each object's own fields come first when made."""

    provisioning_status: str = field(default=PENDING_CREATE, kw_only=True)
    operating_status: str = field(default=OFFLINE, kw_only=True)


@dataclass(frozen=True)
class Member(Statuses):
    id: str
    pool_id: str
    address: str
    protocol_port: int
    name: str = ""
    subnet_id: str | None = None
    weight: int = 1
    backup: bool = False
    monitor_address: str | None = None
    monitor_port: int | None = None
    admin_state_up: bool = True
    vnic_type: str = "normal"
    # a member is NO_MONITOR until a monitor's checks say otherwise
    operating_status: str = field(default=NO_MONITOR, kw_only=True)


@dataclass(frozen=True)
class HealthMonitor(Statuses):
    id: str
    pool_id: str
    type: str
    delay: int
    timeout: int
    max_retries: int
    max_retries_down: int = 3
    name: str = ""
    http_method: str | None = None
    url_path: str | None = None
    expected_codes: str | None = None
    http_version: float | None = None
    domain_name: str | None = None
    admin_state_up: bool = True


@dataclass(frozen=True)
class Pool(Statuses):
    id: str
    loadbalancer_id: str
    protocol: str
    lb_algorithm: str
    name: str = ""
    listener_ids: tuple[str, ...] = ()
    admin_state_up: bool = True
    # {"type": SOURCE_IP|HTTP_COOKIE|APP_COOKIE, "cookie_name",
    #  "persistence_timeout", "persistence_granularity"} or None
    session_persistence: dict[str, Any] | None = None
    tls_enabled: bool = False
    tls_container_ref: str | None = None
    ca_tls_container_ref: str | None = None
    crl_container_ref: str | None = None
    tls_ciphers: str | None = None
    tls_versions: tuple[str, ...] | None = None
    alpn_protocols: tuple[str, ...] | None = None
    members: tuple[Member, ...] = ()
    healthmonitor: HealthMonitor | None = None


@dataclass(frozen=True)
class L7Rule(Statuses):
    id: str
    l7policy_id: str
    type: str
    compare_type: str
    value: str
    key: str | None = None
    invert: bool = False
    admin_state_up: bool = True


@dataclass(frozen=True)
class L7Policy(Statuses):
    id: str
    listener_id: str
    action: str
    position: int
    name: str = ""
    redirect_pool_id: str | None = None
    redirect_url: str | None = None
    redirect_prefix: str | None = None
    redirect_http_code: int | None = None
    admin_state_up: bool = True
    rules: tuple[L7Rule, ...] = ()


@dataclass(frozen=True)
class Listener(Statuses):
    id: str
    loadbalancer_id: str
    protocol: str
    protocol_port: int
    name: str = ""
    admin_state_up: bool = True
    connection_limit: int = -1
    default_pool_id: str | None = None
    insert_headers: dict[str, str] = field(default_factory=dict)
    timeout_client_data: int = 50000
    timeout_member_connect: int = 5000
    timeout_member_data: int = 50000
    timeout_tcp_inspect: int = 0
    allowed_cidrs: tuple[str, ...] | None = None
    default_tls_container_ref: str | None = None
    sni_container_refs: tuple[str, ...] = ()
    client_ca_tls_container_ref: str | None = None
    client_authentication: str = "NONE"
    client_crl_container_ref: str | None = None
    tls_ciphers: str | None = None
    tls_versions: tuple[str, ...] | None = None
    alpn_protocols: tuple[str, ...] | None = None
    hsts_max_age: int | None = None
    hsts_include_subdomains: bool = False
    hsts_preload: bool = False
    # ordered by position, as they are evaluated
    l7policies: tuple[L7Policy, ...] = ()


@dataclass(frozen=True)
class Vip:
    address: str
    port_id: str
    subnet_id: str | None
    network_id: str
    qos_policy_id: str | None = None
    sg_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class LoadBalancer(Statuses):
    id: str
    project_id: str
    provider: str
    vip: Vip
    name: str = ""
    description: str = ""
    admin_state_up: bool = True
    # additional VIPs: ({"subnet_id", "ip_address"}, ...)
    additional_vips: tuple[dict[str, str], ...] = ()
    # the flavor profile's decoded flavor_data ({} without a flavor) and the
    # availability zone profile's decoded data ({} without a zone)
    flavor: dict[str, Any] = field(default_factory=dict)
    availability_zone: dict[str, Any] = field(default_factory=dict)
    listeners: tuple[Listener, ...] = ()
    pools: tuple[Pool, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return _plain(dataclasses.asdict(self))  # type: ignore[no-any-return]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LoadBalancer:
        def listener(d: dict[str, Any]) -> Listener:
            pols = tuple(build_from(L7Policy, p, rules=tuple(
                build_from(L7Rule, r) for r in p.get("rules", ())))
                for p in d.get("l7policies", ()))
            return build_from(Listener, d, l7policies=pols)

        def pool(d: dict[str, Any]) -> Pool:
            hm = d.get("healthmonitor")
            return build_from(Pool, d,
                          members=tuple(build_from(Member, m) for m in d.get("members", ())),
                          healthmonitor=build_from(HealthMonitor, hm) if hm else None)

        return build_from(cls, data, vip=build_from(Vip, data["vip"]),
                      listeners=tuple(listener(x) for x in data.get("listeners", ())),
                      pools=tuple(pool(x) for x in data.get("pools", ())))

    # lookups a provider needs when told which object changed
    def listener(self, listener_id: str) -> Listener | None:
        return next((x for x in self.listeners if x.id == listener_id), None)

    def pool(self, pool_id: str) -> Pool | None:
        return next((x for x in self.pools if x.id == pool_id), None)


def build_from(cls: type[T], data: dict[str, Any], **nested: Any) -> T:
    names = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        if key not in names or key in nested:
            continue
        if isinstance(value, list):
            value = tuple(value)
        kwargs[key] = value
    kwargs.update(nested)
    return cls(**kwargs)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value

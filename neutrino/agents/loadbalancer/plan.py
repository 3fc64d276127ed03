"""The load-balancer agent's decisions (pure): the server's description of
each load balancer hosted here -> what the host must look like -> what to do.

A load balancer lives in namespace ``qlbaas-<id>``: its VIP port plugged
into the integration bridge like an instance's (the port's MAC, its fixed
addresses, a default route through the subnet's gateway so that replies
reach clients behind a router or a floating IP), haproxy running there
with the configuration rendered from the graph and the certificates of its
TLS listeners beside it. A change of configuration is a reload (haproxy's
master starts new workers and the old ones finish their connections); a
failover, or a VIP port that moved, rebuilds the namespace from nothing.
UDP and SCTP listeners are an nftables table in the same namespace (``nft_udp``),
replaced whole whenever it changes, with the members failing their checks
(``udp_health``) out of it.
"""
from __future__ import annotations

import dataclasses
import hashlib
import ipaddress
from typing import Any, Union

from neutrino.agents.loadbalancer import haproxy_config, keepalived, nft_udp
from neutrino.resources.lb_graph import (
    ACTIVE,
    DELETED,
    ERROR,
    PENDING_CREATE,
    PENDING_DELETE,
    PENDING_UPDATE,
    LoadBalancer,
)

NS_PREFIX = "qlbaas-"
DEVICE_PREFIX = "tap"


def namespace(lb_id: str) -> str:
    return NS_PREFIX + lb_id


def lb_of(ns: str) -> str | None:
    return ns[len(NS_PREFIX):] if ns.startswith(NS_PREFIX) else None


@dataclasses.dataclass(frozen=True)
class Deployment:
    """One load balancer as this host must realise it."""

    lb_id: str
    namespace: str
    port_id: str
    network_id: str
    device: str
    mac_address: str
    mtu: int | None
    addresses: tuple[str, ...]  # ip/prefixlen on the VIP device
    gateways: tuple[str, ...]  # default routes (one per IP version)
    config: str
    files: tuple[tuple[str, str], ...]  # relative path -> content (certificates)
    keepalived: str | None = None  # ACTIVE_STANDBY: this host's keepalived.conf
    vip: str | None = None  # ACTIVE_STANDBY: the VIP address keepalived moves
    udp: str = ""  # the UDP listeners' nftables table ("": none)


# A unix socket's path has at most 107 bytes, haproxy's at most 97: a stats
# socket whose state directory is deeper goes here, named by the load balancer.
SOCKETS_FALLBACK = "/run/neutrino-lbaas"
SOCKET_PATH_MAX = 97


def stats_socket(state_dir: str) -> str:
    path = f"{state_dir}/haproxy.sock"
    if len(path.encode()) <= SOCKET_PATH_MAX:
        return path
    return f"{SOCKETS_FALLBACK}/{state_dir.rstrip('/').rsplit('/', 1)[-1]}.sock"


def files_for(state_dir: str) -> haproxy_config.Files:
    """Where one load balancer's haproxy finds its files (under ``state_dir``,
    but for a stats socket whose path would be too long)."""
    return haproxy_config.Files(stats_socket=stats_socket(state_dir),
                                ping_script=f"{state_dir}/ping.sh",
                                certs_dir=f"{state_dir}/certs")


def deployment(payload: dict[str, Any], state_dir: str,
               down: frozenset[str] = frozenset()) -> Deployment | None:
    """What the server's description asks of this host; None when the load
    balancer is going away (or is down) and nothing of it must stay.
    ``down``: members of UDP pools failing their checks."""
    lb = LoadBalancer.from_dict(payload["loadbalancer"])
    if lb.provisioning_status == PENDING_DELETE:
        return None
    port = payload["vip_port"]
    subnets = payload.get("subnets") or {}
    addresses, gateways = [], []
    for fixed in port.get("fixed_ips") or []:
        subnet = subnets.get(fixed.get("subnet_id")) or {}
        cidr = subnet.get("cidr")
        prefix = ipaddress.ip_network(cidr).prefixlen if cidr else (
            32 if ":" not in fixed["ip_address"] else 128)
        addresses.append(f"{fixed['ip_address']}/{prefix}")
        if subnet.get("gateway_ip"):
            gateways.append(subnet["gateway_ip"])
    files = files_for(state_dir)
    # the certificates' paths relative to the state directory, as the agent writes them
    rel = dataclasses.replace(files, certs_dir=files.certs_dir[len(state_dir) + 1:])
    certs = []
    for listener_id, bundle in sorted((payload.get("certificates") or {}).items()):
        if bundle.get("default"):
            certs.append((rel.listener_file(listener_id, "default.pem"), bundle["default"]))
        for i, pem in enumerate(bundle.get("sni") or []):
            certs.append((rel.listener_file(listener_id, f"sni/{i}.pem"), pem))
        for key in ("client_ca", "client_crl"):
            if bundle.get(key):
                certs.append((rel.listener_file(listener_id, f"{key}.pem"), bundle[key]))
    for pool_id, pem in sorted((payload.get("pool_certificates") or {}).items()):
        for key in ("client", "ca", "crl"):
            if pem.get(key):
                certs.append((rel.pool_file(pool_id, key), pem[key]))
    device = (DEVICE_PREFIX + port["id"])[:14]
    vrrp_conf = None
    pair = payload.get("vrrp")
    if pair and addresses:
        prefix = addresses[0].split("/")[1]
        vrrp = keepalived.Vrrp(f"{pair['vip']}/{prefix}", int(pair["router_id"]),
                               int(pair["priority"]), tuple(pair.get("peers") or ()))
        vrrp_conf = keepalived.config(vrrp, device, addresses[0].split("/")[0],
                                      f"{state_dir}/check.sh", lb.id)
    return Deployment(
        lb_id=lb.id, namespace=namespace(lb.id), port_id=port["id"],
        network_id=port["network_id"], device=device,
        mac_address=port["mac_address"], mtu=payload.get("mtu"),
        addresses=tuple(addresses),
        gateways=tuple(dict.fromkeys(gateways)),
        config=haproxy_config.render(lb, files) + _files_digest(certs), files=tuple(certs),
        keepalived=vrrp_conf, vip=pair["vip"] if vrrp_conf else None,
        udp=nft_udp.render(lb, down))


def _files_digest(files: list[tuple[str, str]]) -> str:
    """A comment naming the certificates' digest: a certificate replaced
    under the same path (a listener given another reference) changes the
    configuration, so the plan reloads haproxy with it."""
    if not files:
        return ""
    digest = hashlib.sha256(repr(sorted(files)).encode()).hexdigest()
    return f"# certificates {digest}\n"


@dataclasses.dataclass(frozen=True)
class Observed:
    """One load balancer's traces on the host."""

    namespace: bool = False
    running: bool = False
    config: str | None = None
    device: str | None = None  # the VIP device in the namespace
    keepalived: str | None = None  # keepalived.conf, when keepalived runs
    udp: str = ""  # the UDP listeners' table as last applied


@dataclasses.dataclass(frozen=True)
class Build:
    """Plug the VIP, address it, write the files, start haproxy (from nothing)."""

    deployment: Deployment


@dataclasses.dataclass(frozen=True)
class Reload:
    """Write the new files and configuration, reload haproxy in place."""

    deployment: Deployment


@dataclasses.dataclass(frozen=True)
class Teardown:
    """Stop haproxy, unplug the VIP, remove the namespace and the files."""

    lb_id: str
    device: str | None


Action = Union[Build, Reload, Teardown]


def plan(wanted: dict[str, Deployment | None], observed: dict[str, Observed],
         rebuild: frozenset[str] = frozenset()) -> list[Action]:
    """The actions that bring each load balancer named in ``wanted`` (None:
    must go) or seen on the host to what is wanted; ``rebuild``: load
    balancers to build again from nothing (a failover). A load balancer seen
    on the host but not wanted is torn down."""
    actions: list[Action] = []
    for lb_id in sorted(set(wanted) | set(observed)):
        want = wanted.get(lb_id)
        seen = observed.get(lb_id, Observed())
        present = seen.namespace or seen.running
        if want is None:
            if present:
                actions.append(Teardown(lb_id, seen.device))
            continue
        if lb_id in rebuild or (present and seen.device not in (None, want.device)):
            actions += [Teardown(lb_id, seen.device), Build(want)]
        elif not seen.namespace or not seen.running or seen.device is None or (
                want.keepalived is not None and seen.keepalived is None):
            actions.append(Build(want))
        elif seen.config != want.config or seen.keepalived != want.keepalived or (
                seen.udp != want.udp):
            actions.append(Reload(want))
    return actions


def provisioned(lb: LoadBalancer, failed: bool = False) -> list[dict[str, str]]:
    """The provisioning statuses to report once ``lb`` was applied: each
    pending object ACTIVE (DELETED when it was being deleted), or, when the
    host could not apply it, ERROR (deletions still finish)."""
    out: list[dict[str, str]] = []

    def add(kind: str, obj: Any) -> None:
        status = obj.provisioning_status
        if status == PENDING_DELETE:
            out.append({"kind": kind, "id": obj.id, "provisioning_status": DELETED})
        elif status in (PENDING_CREATE, PENDING_UPDATE):
            out.append({"kind": kind, "id": obj.id,
                        "provisioning_status": ERROR if failed else ACTIVE})

    for listener in lb.listeners:
        for policy in listener.l7policies:
            for rule in policy.rules:
                add("l7rules", rule)
            add("l7policies", policy)
        add("listeners", listener)
    for pool in lb.pools:
        for member in pool.members:
            add("members", member)
        if pool.healthmonitor is not None:
            add("healthmonitors", pool.healthmonitor)
        add("pools", pool)
    add("loadbalancers", lb)
    return out

"""What the haproxy load-balancer provider can realise, as data both its
server side (which refuses the rest with Octavia's 501 before anything is
written) and its agent (which renders the rest) read.

haproxy carries the TCP protocols; UDP and SCTP listeners and pools are
realised by nftables in the same namespace (``agents/loadbalancer/nft_udp.py``),
their members checked by the agent itself."""
from __future__ import annotations

from typing import Iterable, TypeVar

from neutrino.resources.lb_graph import PENDING_DELETE, LoadBalancer

T = TypeVar("T")

PROVIDER = "haproxy"
HTTP_MODES = ("HTTP", "TERMINATED_HTTPS")
# listener protocols haproxy serves (PROMETHEUS through its built-in exporter)
LISTENER_PROTOCOLS = ("HTTP", "HTTPS", "TCP", "TERMINATED_HTTPS", "PROMETHEUS")
POOL_PROTOCOLS = ("HTTP", "HTTPS", "TCP", "PROXY", "PROXYV2")
MONITOR_TYPES = ("HTTP", "HTTPS", "TCP", "PING", "TLS-HELLO")
ALGORITHMS = {"ROUND_ROBIN": "roundrobin", "LEAST_CONNECTIONS": "leastconn",
              "SOURCE_IP": "source"}
# UDP and SCTP: realised by nftables (LEAST_CONNECTIONS approximated by round
# robin), members checked by the agent (UDP-CONNECT, SCTP, or PING, TCP, HTTP
# as Octavia allows on such pools)
NFT_PROTOCOLS = ("UDP", "SCTP")
NFT_ALGORITHMS = ("ROUND_ROBIN", "LEAST_CONNECTIONS", "SOURCE_IP", "SOURCE_IP_PORT")
NFT_MONITOR_TYPES = ("UDP-CONNECT", "SCTP", "PING", "TCP", "HTTP")
TOPOLOGIES = ("SINGLE", "ACTIVE_STANDBY")
ACTIVE_STANDBY = "ACTIVE_STANDBY"


def live(objects: Iterable[T]) -> list[T]:
    """What is not being deleted."""
    return [o for o in objects if getattr(o, "provisioning_status", "") != PENDING_DELETE]


def by_nftables(protocol: str) -> bool:
    """Whether a listener or pool of ``protocol`` is realised by nftables (not haproxy)."""
    return protocol in NFT_PROTOCOLS


def unsupported(lb: LoadBalancer) -> str | None:
    """Why haproxy cannot realise ``lb`` (the API's 501 message), or None."""
    for listener in live(lb.listeners):
        if listener.protocol not in LISTENER_PROTOCOLS + NFT_PROTOCOLS:
            return f"haproxy provider does not support {listener.protocol} listeners."
    for pool in live(lb.pools):
        udp = by_nftables(pool.protocol)
        if pool.protocol not in POOL_PROTOCOLS + NFT_PROTOCOLS:
            return f"haproxy provider does not support {pool.protocol} pools."
        if pool.lb_algorithm not in (NFT_ALGORITHMS if udp else ALGORITHMS):
            return f"haproxy provider does not support {pool.lb_algorithm} algorithm."
        hm = pool.healthmonitor
        if hm is not None and hm.provisioning_status != PENDING_DELETE and (
                hm.type not in (NFT_MONITOR_TYPES if udp else MONITOR_TYPES)):
            return f"haproxy provider does not support {hm.type} health monitors."
    topology = topology_of(lb)
    if topology not in TOPOLOGIES:
        return f"haproxy provider does not support the {topology} topology."
    return None


def topology_of(lb: LoadBalancer) -> str:
    """``SINGLE`` (one haproxy) or ``ACTIVE_STANDBY`` (two, keepalived between them)."""
    return str(lb.flavor.get("loadbalancer_topology", "SINGLE"))

"""Options several agents share: the state report, the L2 agents' polling,
the interface driver of the DHCP and L3 agents."""
from __future__ import annotations

from oslo_config import cfg

from neutrino.conf import metrics
from neutrino.conf.registry import register_missing

AGENT_OPTS = [
    cfg.FloatOpt("report_interval", default=30, min=0,
                 help="Seconds between state reports to the server; 0 disables them "
                      "(should be less than the server's agent_down_time)."),
]

L2_AGENT_OPTS = [
    cfg.FloatOpt("polling_interval", default=2, min=0.1,
                 help="Seconds between scans of the agent's devices (the OVS agent's "
                      "integration bridge, the Linux bridge agent's tap devices)."),
]

AVAILABILITY_ZONE_OPTS = [
    cfg.StrOpt("availability_zone", max_length=255, default="nova",
               help="Availability zone of this node (the DHCP and L3 agents report it; "
                    "/v2.0/availability_zones lists the zones so reported; the "
                    "load-balancer agent reports it for the haproxy provider's "
                    "compute_zone)."),
]

INTERFACE_OPTS = [
    cfg.StrOpt("interface_driver",
               help="The driver that plugs the agent's devices: an alias in "
                    "neutrino.interface_drivers (linuxbridge, openvswitch) or a class path."),
]


# The ``[agent] extensions`` each kind of agent loads, by upstream's names.
# One file may name several kinds' (an all-in-one's neutrino.conf holds the
# L3 and the OVS agent's together), so each agent keeps only its own.
AGENT_EXTENSIONS = {
    "ovs": frozenset({"qos", "log", "local_ip", "fwaas_v2"}),
    "l3": frozenset({"fip_qos", "gateway_ip_qos", "vpnaas", "fwaas_v2"}),
}


def extensions(conf: cfg.ConfigOpts, kind: str) -> frozenset[str]:
    """The ``[agent] extensions`` an agent of ``kind`` loads."""
    return frozenset(e.strip() for e in conf.AGENT.extensions) & AGENT_EXTENSIONS[kind]


def register(conf: cfg.ConfigOpts) -> None:
    """What every agent reads (``[AGENT]``, ``[metrics]``)."""
    conf.register_opts(AGENT_OPTS, "AGENT")
    metrics.register(conf)


def register_l2(conf: cfg.ConfigOpts) -> None:
    register_missing(conf, L2_AGENT_OPTS, "AGENT")


def register_availability_zone(conf: cfg.ConfigOpts) -> None:
    """``[AGENT] availability_zone``, for the agents that host networks or
    routers (upstream's DHCP and L3 agents) or load balancers."""
    register_missing(conf, AVAILABILITY_ZONE_OPTS, "AGENT")


def register_interface(conf: cfg.ConfigOpts) -> None:
    register_missing(conf, INTERFACE_OPTS)


def pairs(items: list[str], option: str, what: str) -> dict[str, str]:
    """``physnet1:eth1`` items as a dict; a malformed item is a config error."""
    out = {}
    for item in items:
        physnet, sep, value = item.partition(":")
        if not sep or not physnet.strip() or not value.strip():
            raise ValueError(f"{option}: {item!r} is not <physical_network>:<{what}>")
        out[physnet.strip()] = value.strip()
    return out

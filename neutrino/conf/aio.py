"""``[aio]``: where the all-in-one puts its private Open vSwitch, and how the
host reaches its external network."""
from __future__ import annotations

from oslo_config import cfg

from neutrino.conf.registry import register_missing

AIO_OPTS = [
    cfg.StrOpt("namespace", default="neutrino-aio",
               help="Network namespace the all-in-one's ovs-vswitchd runs in (its bridges "
                    "and the devices plugged into them live there, not in the host's own "
                    "namespace). Removed on stop."),
    cfg.StrOpt("ovs_rundir", default="$state_path/ovs",
               help="Run directory of the private ovsdb-server and ovs-vswitchd "
                    "(sockets, pid files, logs, conf.db); point OVS_RUNDIR here to use "
                    "ovs-vsctl on it."),
    cfg.StrOpt("external_bridge", default="br-ex",
               help="The bridge of [ovs] bridge_mappings that gets external_address."),
    cfg.StrOpt("external_address", default="172.24.4.1/24",
               help="Address (CIDR) of external_bridge inside the namespace: the "
                    "external network's gateway, as devstack's br-ex. Empty: none."),
    cfg.BoolOpt("route_from_host", default=True,
                help="Route external_address's network from the host into the namespace "
                     "(a veth pair on host_link), so that floating IPs answer the host as "
                     "on devstack. Refused, with one line, when the host already routes "
                     "that network or host_link; removed on stop."),
    cfg.StrOpt("host_link", default="169.254.172.24/30",
               help="The link network of that veth pair: its first address is the "
                    "host's end, its second the namespace's."),
]


def register(conf: cfg.ConfigOpts) -> None:
    register_missing(conf, AIO_OPTS, "aio")

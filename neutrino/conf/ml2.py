"""ML2 options (``ml2_conf.ini``), with upstream's groups, names and defaults.

Values are parsed into ranges by the type drivers at start-up, so a bad
range stops the server with a line naming the option (see
``neutrino.plugins.ml2.ranges``).
"""
from __future__ import annotations

from oslo_config import cfg

ML2_OPTS = [
    cfg.ListOpt("type_drivers", default=["local", "flat", "vlan", "gre", "vxlan", "geneve"],
                help="Network type driver entry points to load from the "
                     "neutrino.ml2.type_drivers namespace."),
    cfg.ListOpt("tenant_network_types", default=["local"],
                help="Network types to allocate as project networks, in order of "
                     "preference."),
    cfg.ListOpt("mechanism_drivers", default=[],
                help="Networking mechanism driver entry points to load from the "
                     "neutrino.ml2.mechanism_drivers namespace."),
    cfg.ListOpt("extension_drivers", default=[],
                help="Extension driver entry points to load from the "
                     "neutrino.ml2.extension_drivers namespace."),
    cfg.IntOpt("path_mtu", default=0,
               help="Maximum IP packet size of the overlay (tunnel) underlay; "
                    "0 means global_physnet_mtu."),
    cfg.ListOpt("physical_network_mtus", default=[],
                help="<physnet>:<mtu> pairs for physical networks whose MTU differs "
                     "from global_physnet_mtu (flat and VLAN networks)."),
    cfg.StrOpt("external_network_type",
               help="Network type for external networks when no provider "
                    "attributes are given; default: the first tenant network type."),
    cfg.IntOpt("overlay_ip_version", default=4, choices=[4, 6],
               help="IP version of the tunnel endpoints (sets the IP header "
                    "overhead of tunnel networks)."),
]

FLAT_OPTS = [
    cfg.ListOpt("flat_networks", default=["*"],
                help="Physical networks flat networks may be created on; '*' allows "
                     "any, an empty value disables flat networks."),
]

VLAN_OPTS = [
    cfg.ListOpt("network_vlan_ranges", default=[],
                help="<physical_network>[:<vlan_min>:<vlan_max>] entries: the "
                     "physical networks VLAN provider networks may use, and the "
                     "ranges project networks are allocated from."),
]

VXLAN_OPTS = [
    cfg.ListOpt("vni_ranges", default=[],
                help="<vni_min>:<vni_max> ranges of VXLAN VNIs for project networks."),
    cfg.StrOpt("vxlan_group",
               help="Multicast group for VXLAN; unset disables multicast mode."),
]

GRE_OPTS = [
    cfg.ListOpt("tunnel_id_ranges", default=[],
                help="<tun_min>:<tun_max> ranges of GRE tunnel ids for project networks."),
]

GENEVE_OPTS = [
    cfg.ListOpt("vni_ranges", default=[],
                help="<vni_min>:<vni_max> ranges of Geneve VNIs for project networks."),
    cfg.IntOpt("max_header_size", default=30,
               help="Geneve encapsulation header size (without the IP header) "
                    "subtracted from the underlay MTU."),
]


# Agent liveness decides where ports can be bound (neutron.conf [DEFAULT]).
AGENT_OPTS = [
    cfg.IntOpt("agent_down_time", default=75, min=1,
               help="Seconds after an agent's last heartbeat at which it is "
                    "considered down; ports are not bound on hosts whose agent is down."),
]


def register(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(AGENT_OPTS)
    conf.register_opts(ML2_OPTS, "ml2")
    conf.register_opts(FLAT_OPTS, "ml2_type_flat")
    conf.register_opts(VLAN_OPTS, "ml2_type_vlan")
    conf.register_opts(VXLAN_OPTS, "ml2_type_vxlan")
    conf.register_opts(GRE_OPTS, "ml2_type_gre")
    conf.register_opts(GENEVE_OPTS, "ml2_type_geneve")

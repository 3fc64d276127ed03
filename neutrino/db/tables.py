"""The schema, in SQLAlchemy Core.

Core rather than the ORM: requests map rows to JSON dicts directly, which is
both simpler to read and several times cheaper per row than ORM objects.
Alembic migrations (``db/migrations``) are the source of truth for deployed
schemas; this module must always equal the head migration (a test checks).
"""
from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.dialects import mysql
from sqlalchemy.schema import SchemaItem

metadata = MetaData(naming_convention={
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
})


def _named(*extra: SchemaItem) -> list[SchemaItem]:
    """A project's named resource: its id, owner, name and description."""
    return [
        Column("id", String(36), primary_key=True),
        Column("project_id", String(255), index=True),
        Column("name", String(255), nullable=False, default=""),
        Column("description", String(255), nullable=False, default=""),
        *extra,
    ]


def _standard(*extra: SchemaItem) -> list[SchemaItem]:
    """Columns that every resource with standard attributes has."""
    return _named(
        Column("created_at", DateTime, nullable=False),
        Column("updated_at", DateTime, nullable=False),
        Column("revision_number", Integer, nullable=False, default=0),
        *extra,
    )


def _fk(table: str, ondelete: str | None = "CASCADE") -> ForeignKey:
    return ForeignKey(f"{table}.id", ondelete=ondelete)


def _rbacs(name: str, shared: str) -> Table:
    """The entries that share rows of ``shared`` with other projects
    (``rbac-policies``): one shape for every object type, so that the RBAC
    plugin treats them all alike."""
    return Table(
        name, metadata,
        Column("id", String(36), primary_key=True),
        Column("project_id", String(255), index=True),
        Column("object_id", String(36), _fk(shared), nullable=False, index=True),
        Column("action", String(255), nullable=False),
        Column("target_tenant", String(255), nullable=False),
        UniqueConstraint("target_tenant", "object_id", "action"),
    )


networks = Table(
    "networks", metadata,
    *_standard(),
    Column("admin_state_up", Boolean, nullable=False),
    Column("status", String(16), nullable=False),
    Column("mtu", Integer, nullable=False),
    # ``network_availability_zone``: the hints as a JSON list, as upstream keeps them.
    Column("availability_zone_hints", String(255)),
)

subnetpools = Table(
    "subnetpools", metadata,
    *_standard(),
    Column("ip_version", Integer, nullable=False),
    Column("default_prefixlen", Integer, nullable=False),
    Column("min_prefixlen", Integer, nullable=False),
    Column("max_prefixlen", Integer, nullable=False),
    Column("default_quota", Integer),
    Column("is_default", Boolean, nullable=False, default=False),
    Column("address_scope_id", String(36), index=True),
)

subnetpool_prefixes = Table(
    "subnetpool_prefixes", metadata,
    Column("subnetpool_id", String(36), _fk("subnetpools"), nullable=False),
    Column("cidr", String(64), nullable=False),
    PrimaryKeyConstraint("subnetpool_id", "cidr"),
)

subnets = Table(
    "subnets", metadata,
    *_standard(),
    Column("network_id", String(36), _fk("networks", None), nullable=False,
           index=True),
    Column("ip_version", Integer, nullable=False),
    Column("cidr", String(64), nullable=False),
    Column("gateway_ip", String(64)),
    Column("enable_dhcp", Boolean, nullable=False),
    Column("ipv6_ra_mode", String(32)),
    Column("ipv6_address_mode", String(32)),
    Column("subnetpool_id", String(36), index=True),
    Column("segment_id", String(36)),
)

allocation_pools = Table(
    "allocation_pools", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("subnet_id", String(36), _fk("subnets"), nullable=False, index=True),
    Column("first_ip", String(64), nullable=False),
    Column("last_ip", String(64), nullable=False),
)

dns_nameservers = Table(
    "dns_nameservers", metadata,
    Column("subnet_id", String(36), _fk("subnets"), nullable=False),
    Column("address", String(128), nullable=False),
    Column("position", Integer, nullable=False),
    PrimaryKeyConstraint("subnet_id", "address"),
)

subnet_routes = Table(
    "subnet_routes", metadata,
    Column("subnet_id", String(36), _fk("subnets"), nullable=False),
    Column("destination", String(64), nullable=False),
    Column("nexthop", String(64), nullable=False),
    PrimaryKeyConstraint("subnet_id", "destination", "nexthop"),
)

ports = Table(
    "ports", metadata,
    *_standard(),
    Column("network_id", String(36), _fk("networks", None), nullable=False),
    Column("mac_address", String(32), nullable=False),
    Column("admin_state_up", Boolean, nullable=False),
    Column("status", String(16), nullable=False),
    Column("device_id", String(255), nullable=False, index=True),
    Column("device_owner", String(255), nullable=False, index=True),
    Column("ip_allocation", String(16)),
    UniqueConstraint("network_id", "mac_address"),
    Index("ix_ports_network_id_device_owner", "network_id", "device_owner"),
)

# ``subnet-service-types``: the device owners a subnet serves (none: all).
subnet_service_types = Table(
    "subnet_service_types", metadata,
    Column("subnet_id", String(36), _fk("subnets"), primary_key=True),
    Column("service_type", String(255), primary_key=True),
)

ipallocations = Table(
    "ipallocations", metadata,
    Column("port_id", String(36), _fk("ports"), nullable=False, index=True),
    Column("ip_address", String(64), nullable=False),
    Column("subnet_id", String(36), _fk("subnets"), nullable=False),
    Column("network_id", String(36), nullable=False),
    PrimaryKeyConstraint("subnet_id", "ip_address"),
)

allowed_address_pairs = Table(
    "allowed_address_pairs", metadata,
    Column("port_id", String(36), _fk("ports"), nullable=False),
    Column("mac_address", String(32), nullable=False),
    Column("ip_address", String(64), nullable=False),
    PrimaryKeyConstraint("port_id", "mac_address", "ip_address"),
)

extra_dhcp_opts = Table(
    "extra_dhcp_opts", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("port_id", String(36), _fk("ports"), nullable=False, index=True),
    Column("opt_name", String(64), nullable=False),
    Column("opt_value", String(255)),
    Column("ip_version", Integer, nullable=False),
    UniqueConstraint("port_id", "opt_name", "ip_version"),
)

# A tag is its exact text on every backend: MariaDB's default collation
# would make "a" and "A" one key (a duplicate-key crash, and filters
# matching what SQLite and PostgreSQL do not).
TAG_TEXT = String(255).with_variant(
    mysql.VARCHAR(255, charset="utf8mb4", collation="utf8mb4_bin"), "mysql", "mariadb")

tags = Table(
    "tags", metadata,
    Column("resource_id", String(36), nullable=False),
    Column("tag", TAG_TEXT, nullable=False),
    PrimaryKeyConstraint("resource_id", "tag"),
    Index("ix_tags_tag", "tag"),
)

# Per-project quota limits that differ from the ``[quotas]`` defaults.
quotas = Table(
    "quotas", metadata,
    Column("project_id", String(255), nullable=False),
    Column("resource", String(255), nullable=False),
    Column("hard_limit", Integer, nullable=False),
    PrimaryKeyConstraint("project_id", "resource"),
)

# One row per (project, resource) that creates lock while they count usage,
# so concurrent creates of one project cannot overrun its quota.
quota_locks = Table(
    "quota_locks", metadata,
    Column("project_id", String(255), nullable=False),
    Column("resource", String(255), nullable=False),
    # Bumped by every create that takes the lock: a write Galera certifies
    # (quota/engine.py).
    Column("generation", BigInteger, nullable=False, server_default="0"),
    PrimaryKeyConstraint("project_id", "resource"),
)

# -- ML2 ------------------------------------------------------------------------

# The segments a network is made of (one, or several with multi-provider);
# ``segment_index`` keeps the order the caller gave them in.
network_segments = Table(
    "network_segments", metadata,
    Column("id", String(36), primary_key=True),
    Column("network_id", String(36), _fk("networks"), nullable=False, index=True),
    Column("network_type", String(32), nullable=False),
    Column("physical_network", String(64)),
    Column("segmentation_id", BigInteger),
    Column("is_dynamic", Boolean, nullable=False, default=False),
    Column("segment_index", Integer, nullable=False, default=0),
    # ``segment`` and ``standard-attr-segment``: segments are an API resource
    # (/v2.0/segments) with a name, a description, timestamps and a revision.
    # Segments made with their network have no name or description (null).
    Column("name", String(255)),
    Column("description", String(255)),
    Column("created_at", DateTime),
    Column("updated_at", DateTime),
    # Nullable only so that rows from before the column could be filled in.
    Column("revision_number", Integer, default=0),
)

# Pools of segmentation ids. A row exists for every id in the configured
# ranges (free or not) and for every id in use outside them; allocation is a
# conditional UPDATE of ``allocated`` so concurrent servers never share one.
ml2_vlan_allocations = Table(
    "ml2_vlan_allocations", metadata,
    Column("physical_network", String(64), nullable=False),
    Column("vlan_id", Integer, nullable=False, autoincrement=False),
    Column("allocated", Boolean, nullable=False, default=False),
    PrimaryKeyConstraint("physical_network", "vlan_id"),
    Index("ix_ml2_vlan_allocations_physical_network_allocated",
          "physical_network", "allocated"),
)


def _tunnel_allocations(name: str) -> Table:
    return Table(
        name, metadata,
        Column("id", BigInteger, primary_key=True, autoincrement=False),
        Column("allocated", Boolean, nullable=False, default=False, index=True),
    )


ml2_vxlan_allocations = _tunnel_allocations("ml2_vxlan_allocations")
ml2_gre_allocations = _tunnel_allocations("ml2_gre_allocations")
ml2_geneve_allocations = _tunnel_allocations("ml2_geneve_allocations")

# ``network-segment-range``: the ranges project networks take segment ids
# from, managed at runtime. ``default`` ones are the configured ranges
# (written at start-up); a ``shared`` range has no project, a private one
# is its project's alone. Tunnel ranges have '' as physical network (not
# null) so that the unique key compares it.
network_segment_ranges = Table(
    "network_segment_ranges", metadata,
    Column("id", String(36), primary_key=True),
    Column("project_id", String(255), index=True),
    Column("name", String(255)),
    Column("description", String(255)),
    Column("created_at", DateTime, nullable=False),
    Column("updated_at", DateTime, nullable=False),
    Column("revision_number", Integer, nullable=False, default=0),
    Column("default", Boolean, nullable=False, default=False),
    Column("shared", Boolean, nullable=False, default=True),
    Column("network_type", String(32), nullable=False),
    Column("physical_network", String(64), nullable=False, default=""),
    Column("minimum", BigInteger, nullable=False),
    Column("maximum", BigInteger, nullable=False),
    UniqueConstraint("default", "network_type", "physical_network", "minimum", "maximum",
                     name="uniq_network_segment_ranges"),
    Index("ix_network_segment_ranges_network_type_physical_network",
          "network_type", "physical_network"),
)

# A flat network takes its whole physical network: one row per physnet in use.
ml2_flat_allocations = Table(
    "ml2_flat_allocations", metadata,
    Column("physical_network", String(64), primary_key=True),
)

# ``port_security`` extension driver: one row per network and per port.
network_port_security = Table(
    "network_port_security", metadata,
    Column("network_id", String(36), _fk("networks"), primary_key=True),
    Column("port_security_enabled", Boolean, nullable=False),
)

port_port_security = Table(
    "port_port_security", metadata,
    Column("port_id", String(36), _fk("ports"), primary_key=True),
    Column("port_security_enabled", Boolean, nullable=False),
)

# ``port-numa-affinity-policy`` and ``port-device-profile``: a row only for
# a port that has the attribute set.
portnumaaffinitypolicies = Table(
    "portnumaaffinitypolicies", metadata,
    Column("port_id", String(36), _fk("ports"), primary_key=True),
    Column("numa_affinity_policy", String(16), nullable=False),
)

portdeviceprofiles = Table(
    "portdeviceprofiles", metadata,
    Column("port_id", String(36), _fk("ports"), primary_key=True),
    Column("device_profile", String(255), nullable=False),
)

# -- port binding and agents ----------------------------------------------------

# How each port is bound: what the caller asked for (host, vnic_type,
# profile) and what the mechanism drivers decided (vif_type, vif_details).
# ``profile`` and ``vif_details`` are JSON text, readable on every backend.
ml2_port_bindings = Table(
    "ml2_port_bindings", metadata,
    Column("port_id", String(36), _fk("ports"), primary_key=True),
    Column("host", String(255), nullable=False, default="", index=True),
    Column("vnic_type", String(64), nullable=False, default="normal"),
    Column("profile", String(4095), nullable=False, default=""),
    Column("vif_type", String(64), nullable=False),
    Column("vif_details", String(4095), nullable=False, default=""),
)

# The drivers and segments of a binding, one row per level (hierarchical
# binding: level 0 is the top, the last level the segment the host uses).
ml2_port_binding_levels = Table(
    "ml2_port_binding_levels", metadata,
    Column("port_id", String(36), _fk("ports"), nullable=False),
    Column("host", String(255), nullable=False),
    Column("level", Integer, nullable=False, autoincrement=False),
    Column("driver", String(64)),
    Column("segment_id", String(36), _fk("network_segments", "SET NULL"), index=True),
    PrimaryKeyConstraint("port_id", "host", "level"),
)

# ``binding-extended``: a port's other bindings, made ready on a host before
# the port moves there (a live migration's destination). The active binding
# stays the ``ml2_port_bindings`` row every reader knows; an inactive one's
# levels are in ``ml2_port_binding_levels`` under its own host.
ml2_port_inactive_bindings = Table(
    "ml2_port_inactive_bindings", metadata,
    Column("port_id", String(36), _fk("ports"), nullable=False),
    Column("host", String(255), nullable=False),
    Column("vnic_type", String(64), nullable=False, default="normal"),
    Column("profile", String(4095), nullable=False, default=""),
    Column("vif_type", String(64), nullable=False),
    Column("vif_details", String(4095), nullable=False, default=""),
    PrimaryKeyConstraint("port_id", "host"),
)

# Agents as they report themselves; ``heartbeat_timestamp`` older than
# ``[DEFAULT] agent_down_time`` means the agent is dead.
agents = Table(
    "agents", metadata,
    Column("id", String(36), primary_key=True),
    Column("agent_type", String(255), nullable=False),
    Column("binary", String(255), nullable=False),
    Column("topic", String(255), nullable=False),
    Column("host", String(255), nullable=False, index=True),
    Column("admin_state_up", Boolean, nullable=False, default=True),
    Column("created_at", DateTime, nullable=False),
    Column("started_at", DateTime, nullable=False),
    Column("heartbeat_timestamp", DateTime, nullable=False),
    Column("description", String(255)),
    Column("configurations", String(4095), nullable=False, default="{}"),
    Column("resource_versions", String(8191)),
    Column("load", Integer, nullable=False, default=0),
    Column("availability_zone", String(255)),
    Column("resources_synced", Boolean),
    UniqueConstraint("agent_type", "host"),
)


# Which DHCP agents serve which networks (upstream's
# networkdhcpagentbindings). ``binding_index`` numbers a network's agents
# 1..dhcp_agents_per_network; its uniqueness per network is what stops two
# servers scheduling one network to more agents than configured.
networkdhcpagentbindings = Table(
    "networkdhcpagentbindings", metadata,
    Column("network_id", String(36), _fk("networks"), nullable=False),
    Column("dhcp_agent_id", String(36), _fk("agents"), nullable=False),
    Column("binding_index", Integer, nullable=False, server_default="1"),
    PrimaryKeyConstraint("network_id", "dhcp_agent_id"),
    UniqueConstraint("network_id", "binding_index"),
)


# -- BGP dynamic routing (``bgp``, ``bgp_dragent_scheduler``) ------------------------

# A BGP speaker: a local AS (4-byte, hence BigInteger) and an IP version.
bgp_speakers = Table(
    "bgp_speakers", metadata,
    Column("id", String(36), primary_key=True),
    Column("project_id", String(255), index=True),
    Column("name", String(255), nullable=False),
    Column("local_as", BigInteger, nullable=False),
    Column("ip_version", Integer, nullable=False),
    Column("advertise_floating_ip_host_routes", Boolean, nullable=False),
    Column("advertise_tenant_networks", Boolean, nullable=False),
)

# A BGP peer; ``password`` is for ``auth_type`` md5 and is never shown.
bgp_peers = Table(
    "bgp_peers", metadata,
    Column("id", String(36), primary_key=True),
    Column("project_id", String(255), index=True),
    Column("name", String(255), nullable=False),
    Column("peer_ip", String(64), nullable=False),
    Column("remote_as", BigInteger, nullable=False),
    Column("auth_type", String(16), nullable=False),
    Column("password", String(255)),
)

# The peers a speaker peers with; they go with either.
bgp_speaker_peer_bindings = Table(
    "bgp_speaker_peer_bindings", metadata,
    Column("bgp_speaker_id", String(36), _fk("bgp_speakers"), primary_key=True),
    Column("bgp_peer_id", String(36), _fk("bgp_peers"), primary_key=True, index=True),
)

# The gateway networks whose routes a speaker advertises (for its IP version).
bgp_speaker_network_bindings = Table(
    "bgp_speaker_network_bindings", metadata,
    Column("bgp_speaker_id", String(36), _fk("bgp_speakers"), primary_key=True),
    Column("network_id", String(36), _fk("networks"), primary_key=True, index=True),
    Column("ip_version", Integer, primary_key=True, autoincrement=False),
)

# Which BGP DR agent hosts a speaker: one speaker per agent (the primary
# key), as upstream's scheduler allows.
bgp_speaker_dragent_bindings = Table(
    "bgp_speaker_dragent_bindings", metadata,
    Column("agent_id", String(36), _fk("agents"), primary_key=True),
    Column("bgp_speaker_id", String(36), _fk("bgp_speakers"), nullable=False, index=True),
)


# What a port still waits for before it is ACTIVE (upstream's provisioning
# blocks): one row per entity (the L2 agent, the DHCP agent) that has not
# yet reported the port ready.
provisioningblocks = Table(
    "provisioningblocks", metadata,
    Column("port_id", String(36), _fk("ports"), nullable=False),
    Column("entity", String(255), nullable=False),
    PrimaryKeyConstraint("port_id", "entity"),
)


# RBAC entries on networks (``/v2.0/rbac-policies``): who may use a network
# besides its owner. ``target_tenant`` is a project id or ``*``; a network is
# shared with a caller when an ``access_as_shared`` entry names its project
# or ``*``. One row per (object, action, target), as upstream.
networkrbacs = _rbacs("networkrbacs", "networks")

# ``external-net``: the networks that are external (``router:external``),
# as upstream keeps them: a flag of its own, not read from the
# ``access_as_external`` entries, which say who may use the network. The
# two part ways once the last entry goes while a router's gateway is on the
# network: it stays external, with no entries (plugins/rbac.py).
externalnetworks = Table(
    "externalnetworks", metadata,
    Column("network_id", String(36), _fk("networks"), primary_key=True),
)


# ``dns`` extension driver: a network's dns_domain and a port's dns_name,
# one row each, only when not empty.
network_dns_domains = Table(
    "network_dns_domains", metadata,
    Column("network_id", String(36), _fk("networks"), primary_key=True),
    Column("dns_domain", String(255), nullable=False),
)

port_dns_names = Table(
    "port_dns_names", metadata,
    Column("port_id", String(36), _fk("ports"), primary_key=True),
    Column("dns_name", String(255), nullable=False, index=True),
)


# ``rbac-subnetpool``: subnet pools shared by RBAC entries, as networks are.
subnetpoolrbacs = _rbacs("subnetpoolrbacs", "subnetpools")


# ``address-scope``: a scope's subnet pools never overlap one another.
# Upstream gives address scopes no standard attributes (no description,
# timestamps or revision); ``shared`` is an RBAC entry (``rbac-address-scope``).
address_scopes = Table(
    "address_scopes", metadata,
    Column("id", String(36), primary_key=True),
    Column("project_id", String(255), index=True),
    Column("name", String(255), nullable=False, default=""),
    Column("ip_version", Integer, nullable=False),
)

addressscoperbacs = _rbacs("addressscoperbacs", "address_scopes")


# -- QoS (``qos`` service plugin and ML2 extension driver) ------------------------

qos_policies = Table(
    "qos_policies", metadata,
    *_standard(),
)

# A project's default policy (``qos-default``): given to its new networks
# that name none. One row per project, so "one default" is the primary key.
qos_policy_defaults = Table(
    "qos_policy_defaults", metadata,
    Column("project_id", String(255), primary_key=True),
    Column("qos_policy_id", String(36), _fk("qos_policies"), nullable=False, index=True),
)

# Every rule type in one table: the columns a type does not use stay NULL.
# ``direction`` is '' for types without one (DSCP marking), so the unique
# key also allows one rule per type and direction for those.
qos_rules = Table(
    "qos_rules", metadata,
    Column("id", String(36), primary_key=True),
    Column("qos_policy_id", String(36), _fk("qos_policies"), nullable=False),
    Column("rule_type", String(32), nullable=False),
    Column("direction", String(16), nullable=False, default=""),
    Column("max_kbps", BigInteger),
    Column("max_burst_kbps", BigInteger),
    Column("min_kbps", BigInteger),
    Column("dscp_mark", Integer),
    Column("max_kpps", BigInteger),
    Column("max_burst_kpps", BigInteger),
    Column("min_kpps", BigInteger),
    Column("created_at", DateTime, nullable=False),
    UniqueConstraint("qos_policy_id", "rule_type", "direction"),
)

qos_network_policy_bindings = Table(
    "qos_network_policy_bindings", metadata,
    Column("network_id", String(36), _fk("networks"), primary_key=True),
    Column("policy_id", String(36), _fk("qos_policies", None), nullable=False, index=True),
)

qos_port_policy_bindings = Table(
    "qos_port_policy_bindings", metadata,
    Column("port_id", String(36), _fk("ports"), primary_key=True),
    Column("policy_id", String(36), _fk("qos_policies", None), nullable=False, index=True),
)

# ``qos-fip`` and ``qos-gateway-ip``: a floating IP's policy, a router
# gateway's; they go with their floating IP or router, and a policy in use
# by one cannot be deleted.
qos_fip_policy_bindings = Table(
    "qos_fip_policy_bindings", metadata,
    Column("fip_id", String(36), _fk("floatingips"), primary_key=True),
    Column("policy_id", String(36), _fk("qos_policies", None), nullable=False, index=True),
)

qos_router_gw_policy_bindings = Table(
    "qos_router_gw_policy_bindings", metadata,
    Column("router_id", String(36), _fk("routers"), primary_key=True),
    Column("policy_id", String(36), _fk("qos_policies", None), nullable=False, index=True),
)

# RBAC entries on QoS policies (object type ``qos_policy``), as for networks.
qospolicyrbacs = _rbacs("qospolicyrbacs", "qos_policies")

# ``metering``: labels and the traffic rules counted under them; a label's
# rules go with it.
meteringlabels = Table(
    "meteringlabels", metadata,
    Column("id", String(36), primary_key=True),
    Column("project_id", String(255), index=True),
    Column("name", String(255), nullable=False, default=""),
    Column("description", String(1024), nullable=False, default=""),
    Column("shared", Boolean, nullable=False, default=False),
)

meteringlabelrules = Table(
    "meteringlabelrules", metadata,
    Column("id", String(36), primary_key=True),
    Column("metering_label_id", String(36), _fk("meteringlabels"), nullable=False,
           index=True),
    Column("direction", String(16), nullable=False),
    Column("remote_ip_prefix", String(64)),
    Column("source_ip_prefix", String(64)),
    Column("destination_ip_prefix", String(64)),
    Column("excluded", Boolean, nullable=False, default=False),
)


# ``trunk``: a parent port carrying subports, each on its own VLAN. A port is
# the parent of at most one trunk and the subport of at most one trunk; a
# segmentation id is used once per trunk and type.
trunks = Table(
    "trunks", metadata,
    *_standard(),
    Column("admin_state_up", Boolean, nullable=False, default=True),
    Column("status", String(16), nullable=False, default="DOWN"),
    Column("port_id", String(36), _fk("ports"), nullable=False, unique=True),
)

subports = Table(
    "subports", metadata,
    Column("port_id", String(36), _fk("ports"), primary_key=True),
    Column("trunk_id", String(36), _fk("trunks"), nullable=False, index=True),
    Column("segmentation_type", String(32), nullable=False),
    Column("segmentation_id", Integer, nullable=False, autoincrement=False),
    UniqueConstraint("trunk_id", "segmentation_type", "segmentation_id"),
)


# -- logging (``logging``) ------------------------------------------------------------

# A log goes with the security group it names and with the port it targets.
logs = Table(
    "logs", metadata,
    *_standard(),
    Column("resource_type", String(36), nullable=False),
    Column("resource_id", String(36), _fk("securitygroups"), nullable=True, index=True),
    Column("target_id", String(36), _fk("ports"), nullable=True, index=True),
    Column("event", String(255), nullable=False),
    Column("enabled", Boolean, nullable=False, default=True),
)


# -- local IPs (``local_ip``) -------------------------------------------------------

local_ips = Table(
    "local_ips", metadata,
    *_standard(),
    # the local port may not go while its local IP stays (refused by the plugin)
    Column("local_port_id", String(36), _fk("ports", None), nullable=False, index=True),
    Column("network_id", String(36), _fk("networks"), nullable=False, index=True),
    Column("local_ip_address", String(64), nullable=False),
    Column("ip_mode", String(36), nullable=False),
)

local_ip_associations = Table(
    "local_ip_associations", metadata,
    Column("local_ip_id", String(36), _fk("local_ips"), primary_key=True),
    Column("fixed_port_id", String(36), _fk("ports"), primary_key=True, index=True),
    Column("fixed_ip", String(64), nullable=False),
)


# -- FWaaS v2 (``fwaas_v2``) ---------------------------------------------------------

# A rule's ports as upstream keeps them: each range as its two ends.
firewall_rules_v2 = Table(
    "firewall_rules_v2", metadata,
    *_standard(),
    Column("shared", Boolean, nullable=False, default=False),
    Column("protocol", String(40)),
    Column("ip_version", Integer, nullable=False),
    Column("source_ip_address", String(46)),
    Column("destination_ip_address", String(46)),
    Column("source_port_range_min", Integer),
    Column("source_port_range_max", Integer),
    Column("destination_port_range_min", Integer),
    Column("destination_port_range_max", Integer),
    Column("action", String(36), nullable=False),
    Column("enabled", Boolean, nullable=False, default=True),
)

firewall_policies_v2 = Table(
    "firewall_policies_v2", metadata,
    *_standard(),
    Column("shared", Boolean, nullable=False, default=False),
    Column("audited", Boolean, nullable=False, default=False),
)

# A policy's rules in order (1-based positions); a rule in a policy stays.
firewall_policy_rule_associations_v2 = Table(
    "firewall_policy_rule_associations_v2", metadata,
    Column("firewall_policy_id", String(36), _fk("firewall_policies_v2"), primary_key=True),
    Column("firewall_rule_id", String(36), _fk("firewall_rules_v2", None), primary_key=True,
           index=True),
    Column("position", Integer, nullable=False),
)

# A policy in use by a group stays (refused by the plugin).
firewall_groups_v2 = Table(
    "firewall_groups_v2", metadata,
    *_standard(),
    Column("shared", Boolean, nullable=False, default=False),
    Column("admin_state_up", Boolean, nullable=False, default=True),
    Column("status", String(16), nullable=False),
    Column("ingress_firewall_policy_id", String(36), _fk("firewall_policies_v2", None),
           index=True),
    Column("egress_firewall_policy_id", String(36), _fk("firewall_policies_v2", None),
           index=True),
)

# A port is in one group at most; it leaves its group when it is deleted.
firewall_group_port_associations_v2 = Table(
    "firewall_group_port_associations_v2", metadata,
    Column("firewall_group_id", String(36), _fk("firewall_groups_v2"), nullable=False,
           index=True),
    Column("port_id", String(36), _fk("ports"), primary_key=True),
)

# Which group is a project's ``default``: the key on the project makes
# creating it race-free across servers, as for security groups.
default_firewall_groups = Table(
    "default_firewall_groups", metadata,
    Column("project_id", String(255), primary_key=True),
    Column("firewall_group_id", String(36), _fk("firewall_groups_v2"), nullable=False,
           unique=True),
)


# -- security groups (``security-group``, ``address-group``) ---------------------

securitygroups = Table(
    "securitygroups", metadata,
    *_standard(),
    Column("stateful", Boolean, nullable=False, default=True),
)

# Which group is a project's ``default``: the primary key on the project is
# what makes creating it race-free across servers (a concurrent creator
# fails on the key and reruns, then finds the winner's group).
default_security_group = Table(
    "default_security_group", metadata,
    Column("project_id", String(255), primary_key=True),
    Column("security_group_id", String(36), _fk("securitygroups"), nullable=False,
           unique=True),
)

address_groups = Table(
    "address_groups", metadata,
    *_standard(),
)

address_associations = Table(
    "address_associations", metadata,
    Column("address_group_id", String(36), _fk("address_groups"), nullable=False),
    Column("address", String(64), nullable=False),
    PrimaryKeyConstraint("address_group_id", "address"),
)

# Rules have no name; ``normalized_cidr`` is stored so that it can be
# filtered and sorted on like the other attributes. A rule goes with its
# group and with the group it names as remote; an address group in use by
# a rule cannot go (no cascade).
securitygrouprules = Table(
    "securitygrouprules", metadata,
    Column("id", String(36), primary_key=True),
    Column("project_id", String(255), index=True),
    Column("security_group_id", String(36), _fk("securitygroups"), nullable=False,
           index=True),
    Column("remote_group_id", String(36), _fk("securitygroups"), index=True),
    Column("remote_address_group_id", String(36), _fk("address_groups", None), index=True),
    Column("direction", String(16), nullable=False),
    Column("ethertype", String(40), nullable=False),
    Column("protocol", String(40)),
    Column("port_range_min", Integer),
    Column("port_range_max", Integer),
    Column("remote_ip_prefix", String(255)),
    Column("normalized_cidr", String(255)),
    Column("description", String(255)),
    Column("created_at", DateTime, nullable=False),
    Column("updated_at", DateTime, nullable=False),
    Column("revision_number", Integer, nullable=False, default=0),
)

# Which groups filter a port; a group in use by a port cannot be deleted.
securitygroupportbindings = Table(
    "securitygroupportbindings", metadata,
    Column("port_id", String(36), _fk("ports"), nullable=False),
    Column("security_group_id", String(36), _fk("securitygroups", None), nullable=False,
           index=True),
    PrimaryKeyConstraint("port_id", "security_group_id"),
)


# ``rbac-security-groups`` / ``rbac-address-group``: groups shared by RBAC
# entries, as networks are.
securitygrouprbacs = _rbacs("securitygrouprbacs", "securitygroups")

addressgrouprbacs = _rbacs("addressgrouprbacs", "address_groups")

# ``security-groups-default-rules``: the templates new groups get their rules
# from. ``remote_group_id`` is free text: ``PARENT`` means "the new group".
securitygroupdefaultrules = Table(
    "securitygroupdefaultrules", metadata,
    Column("id", String(36), primary_key=True),
    Column("description", String(255)),
    Column("remote_group_id", String(36)),
    Column("remote_address_group_id", String(36)),
    Column("direction", String(16), nullable=False),
    Column("ethertype", String(40)),
    Column("protocol", String(40)),
    Column("port_range_min", Integer),
    Column("port_range_max", Integer),
    Column("remote_ip_prefix", String(255)),
    Column("used_in_default_sg", Boolean, nullable=False, default=False),
    Column("used_in_non_default_sg", Boolean, nullable=False, default=True),
)

# ``security-groups-default-statefulness``: the ``stateful`` a new group gets
# when it names none; one row per project, and at most one with no project
# (the system-wide setting; NULLs do not collide in a unique key, so the
# plugin checks that one itself).
security_groups_default_statefulness = Table(
    "security_groups_default_statefulness", metadata,
    Column("id", String(36), primary_key=True),
    Column("project_id", String(255), unique=True),
    Column("stateful", Boolean, nullable=False, default=True),
)


# -- L3 (service plugin ``router``) ---------------------------------------------

# Routers. ``gw_port_id`` is the port on the external network (project '');
# ``enable_snat`` belongs to the gateway (``ext-gw-mode``).
routers = Table(
    "routers", metadata,
    *_standard(),
    Column("admin_state_up", Boolean, nullable=False),
    Column("status", String(16), nullable=False),
    Column("gw_port_id", String(36), _fk("ports", "SET NULL"), index=True),
    Column("enable_snat", Boolean, nullable=False, default=True),
    Column("distributed", Boolean, nullable=False, default=False),  # ``dvr``
    Column("ha", Boolean, nullable=False, default=False),  # ``l3-ha``
    # ``router_availability_zone``: the hints as a JSON list, as upstream keeps them.
    Column("availability_zone_hints", String(255)),
    # ``l3-flavors``: no ON DELETE, so a router keeps its flavor in use.
    Column("flavor_id", String(36), ForeignKey("flavors.id", name="fk_routers_flavor_id_flavors")),
)

# ``l3-ha``: each project's HA network (owned by project '', named after the
# project). The primary key makes a second one for a project lose its race;
# the row goes with the network.
ha_router_networks = Table(
    "ha_router_networks", metadata,
    Column("project_id", String(255), primary_key=True),
    Column("network_id", String(36), _fk("networks"), nullable=False, unique=True),
)

# ``l3-ha``: an HA router's port on its project's HA network for one L3
# agent, and the state (active/standby/unknown) that agent last reported.
ha_router_agent_port_bindings = Table(
    "ha_router_agent_port_bindings", metadata,
    Column("port_id", String(36), _fk("ports"), primary_key=True),
    Column("router_id", String(36), _fk("routers"), nullable=False, index=True),
    Column("l3_agent_id", String(36), _fk("agents"), index=True),
    Column("state", String(16), nullable=False, default="standby"),
    UniqueConstraint("router_id", "l3_agent_id"),
)

# ``l3-ha``: each HA router's VRRP router id, unique on its HA network (the
# primary key makes a second claim of an id lose its race).
ha_router_vrid_allocations = Table(
    "ha_router_vrid_allocations", metadata,
    Column("network_id", String(36), _fk("networks"), primary_key=True),
    Column("vr_id", Integer, primary_key=True, autoincrement=False),
    Column("router_id", String(36), _fk("routers"), nullable=False, unique=True),
)

# The ports a router owns: its gateway and its interfaces. A port is
# attached to at most one router; while the row exists the port cannot be
# deleted through the ports API.
routerports = Table(
    "routerports", metadata,
    Column("router_id", String(36), _fk("routers"), nullable=False),
    Column("port_id", String(36), _fk("ports"), nullable=False),
    Column("port_type", String(255), nullable=False),
    PrimaryKeyConstraint("router_id", "port_id"),
    UniqueConstraint("port_id"),
)

# ``extraroute``: static routes of a router.
routerroutes = Table(
    "routerroutes", metadata,
    Column("router_id", String(36), _fk("routers"), nullable=False),
    Column("destination", String(64), nullable=False),
    Column("nexthop", String(64), nullable=False),
    PrimaryKeyConstraint("router_id", "destination", "nexthop"),
)

# ``l3_agent_scheduler``: which L3 agent hosts a router. A legacy router
# has one binding (index 1, the unique key keeps a second from racing in);
# bindings go with the router or the agent.
routerl3agentbindings = Table(
    "routerl3agentbindings", metadata,
    Column("router_id", String(36), _fk("routers"), nullable=False),
    Column("l3_agent_id", String(36), _fk("agents"), nullable=False, index=True),
    Column("binding_index", Integer, nullable=False, default=1),
    PrimaryKeyConstraint("router_id", "l3_agent_id"),
    UniqueConstraint("router_id", "binding_index"),
)

# Floating IPs: an address of an external network (held by the port
# ``floating_port_id``), optionally mapped to a fixed IP of an internal port
# through ``router_id``. One floating IP per fixed IP and external network
# (the unique key; NULLs, i.e. unassociated ones, never collide).
floatingips = Table(
    "floatingips", metadata,
    *_standard(),
    Column("floating_ip_address", String(64), nullable=False),
    Column("floating_network_id", String(36), _fk("networks", None), nullable=False,
           index=True),
    Column("floating_port_id", String(36), _fk("ports"), nullable=False, index=True),
    Column("fixed_port_id", String(36), _fk("ports", "SET NULL"), index=True),
    Column("fixed_ip_address", String(64)),
    Column("router_id", String(36), _fk("routers", "SET NULL"), index=True),
    Column("status", String(16), nullable=False),
    UniqueConstraint("floating_network_id", "fixed_port_id", "fixed_ip_address",
                     name="uq_floatingips_fixed_ip_per_network"),
)

# ``floating-ip-port-forwarding``: a protocol and external port range of a
# floating IP forwarded to an internal port's fixed IP and port range. A
# single port is stored as a range of one (``external_port`` = start = end).
portforwardings = Table(
    "portforwardings", metadata,
    Column("id", String(36), primary_key=True),
    Column("floatingip_id", String(36), _fk("floatingips"), nullable=False, index=True),
    Column("internal_port_id", String(36), _fk("ports"), nullable=False, index=True),
    Column("internal_ip_address", String(64), nullable=False),
    Column("protocol", String(40), nullable=False),
    Column("internal_port_start", Integer, nullable=False),
    Column("internal_port_end", Integer, nullable=False),
    Column("external_port_start", Integer, nullable=False),
    Column("external_port_end", Integer, nullable=False),
    Column("description", String(255), nullable=False, default=""),
    Column("created_at", DateTime, nullable=False),
    UniqueConstraint("floatingip_id", "protocol", "external_port_start",
                     "external_port_end", name="uq_portforwardings_external"),
    UniqueConstraint("internal_port_id", "internal_ip_address", "protocol",
                     "internal_port_start", "internal_port_end",
                     name="uq_portforwardings_internal"),
)


# ``l3-conntrack-helper``: helpers a router attaches to a protocol and port;
# the same quadruple twice is a duplicate (upstream's unique constraint).
conntrack_helpers = Table(
    "conntrack_helpers", metadata,
    Column("id", String(36), primary_key=True),
    Column("router_id", String(36), _fk("routers"), nullable=False, index=True),
    Column("protocol", String(40), nullable=False),
    Column("port", Integer, nullable=False),
    Column("helper", String(64), nullable=False),
    Column("created_at", DateTime, nullable=False),
    UniqueConstraint("router_id", "protocol", "port", "helper",
                     name="uq_conntrack_helpers0router_id0protocol0port0helper"),
)

# ``l3-ndp-proxy``: a router answers neighbour solicitations on its gateway
# for one IPv6 address of a port behind it; one proxy per address and
# router (the unique key decides a race between two creates).
ndp_proxies = Table(
    "ndp_proxies", metadata,
    *_standard(),
    Column("router_id", String(36), _fk("routers"), nullable=False, index=True),
    Column("port_id", String(36), _fk("ports"), nullable=False, index=True),
    Column("ip_address", String(64), nullable=False),
    UniqueConstraint("router_id", "ip_address", name="uq_ndp_proxies_router_id_ip_address"),
)

# ``l3-ext-ndp-proxy``: a router's ``enable_ndp_proxy`` once decided (no row:
# not decided yet, shown false); it goes with the router and with its gateway.
router_ndp_proxy_state = Table(
    "router_ndp_proxy_state", metadata,
    Column("router_id", String(36), _fk("routers"), primary_key=True),
    Column("enable_ndp_proxy", Boolean, nullable=False),
)

# ``auto-allocated-topology``: the one default external network (``is_default``;
# the constant key makes a second one a conflict, even in a race) and each
# project's allocated network and router.
default_external_network = Table(
    "default_external_network", metadata,
    Column("singleton", Integer, primary_key=True, autoincrement=False),
    Column("network_id", String(36), _fk("networks"), nullable=False, unique=True),
)

auto_allocated_topologies = Table(
    "auto_allocated_topologies", metadata,
    Column("project_id", String(255), primary_key=True),
    Column("network_id", String(36), _fk("networks"), nullable=False, unique=True),
    Column("router_id", String(36), _fk("routers", "SET NULL")),
)


# ``flavors``: flavors of advanced services, the service profiles (a
# provider's driver, or metainfo) behind them, and which profiles a flavor
# offers. A table that names a flavor without ON DELETE makes the flavor in
# use (routers' ``flavor_id``, with ``l3-flavors``).
flavors = Table(
    "flavors", metadata,
    Column("id", String(36), primary_key=True),
    Column("name", String(255)),
    Column("description", String(1024)),
    Column("enabled", Boolean, nullable=False, default=True),
    Column("service_type", String(36)),
)

serviceprofiles = Table(
    "serviceprofiles", metadata,
    Column("id", String(36), primary_key=True),
    Column("description", String(1024)),
    Column("driver", String(1024), nullable=False),
    Column("enabled", Boolean, nullable=False, default=True),
    Column("metainfo", String(4096)),
)

flavorserviceprofilebindings = Table(
    "flavorserviceprofilebindings", metadata,
    Column("flavor_id", String(36), _fk("flavors"), primary_key=True),
    # Named here: the conventional name is longer than MySQL allows.
    Column("service_profile_id", String(36),
           ForeignKey("serviceprofiles.id", ondelete="CASCADE",
                      name="fk_flavorserviceprofilebindings_service_profile_id"),
           primary_key=True, index=True),
)

# ``dvr``: each host's own MAC, the source distributed routers' packets carry
# once they leave that host (upstream's ``dvr_host_macs``).
dvr_host_macs = Table(
    "dvr_host_macs", metadata,
    Column("host", String(255), primary_key=True),
    Column("mac_address", String(32), nullable=False, unique=True),
)

# -- VPN as a service (``vpnaas``, ``vpn-endpoint-groups``) -------------------------
# No standard attributes: upstream's VPN resources carry none. A router or
# subnet in use by a VPN service is refused by the plugin before its row
# goes; policies and groups in use by a connection likewise.

vpn_ikepolicies = Table(
    "vpn_ikepolicies", metadata,
    *_named(
        Column("auth_algorithm", String(16), nullable=False),
        Column("encryption_algorithm", String(20), nullable=False),
        Column("phase1_negotiation_mode", String(16), nullable=False),
        Column("lifetime_units", String(16), nullable=False),
        Column("lifetime_value", Integer, nullable=False),
        Column("ike_version", String(8), nullable=False),
        Column("pfs", String(8), nullable=False),
    ),
)

vpn_ipsecpolicies = Table(
    "vpn_ipsecpolicies", metadata,
    *_named(
        Column("transform_protocol", String(16), nullable=False),
        Column("auth_algorithm", String(16), nullable=False),
        Column("encryption_algorithm", String(20), nullable=False),
        Column("encapsulation_mode", String(16), nullable=False),
        Column("lifetime_units", String(16), nullable=False),
        Column("lifetime_value", Integer, nullable=False),
        Column("pfs", String(8), nullable=False),
    ),
)

vpn_endpoint_groups = Table(
    "vpn_endpoint_groups", metadata,
    *_named(
        Column("endpoint_type", String(16), nullable=False),
    ),
)

vpn_endpoints = Table(
    "vpn_endpoints", metadata,
    Column("endpoint_group_id", String(36), _fk("vpn_endpoint_groups"), primary_key=True),
    Column("endpoint", String(255), primary_key=True, index=True),
    Column("position", Integer, nullable=False, default=0),
)

vpnservices = Table(
    "vpnservices", metadata,
    *_named(
        Column("status", String(16), nullable=False),
        Column("admin_state_up", Boolean, nullable=False),
        Column("external_v4_ip", String(16)),
        Column("external_v6_ip", String(64)),
        Column("router_id", String(36), _fk("routers", None), nullable=False, index=True),
        Column("subnet_id", String(36), _fk("subnets", None), index=True),
        Column("flavor_id", String(36), _fk("flavors", None)),
    ),
)

ipsec_site_connections = Table(
    "ipsec_site_connections", metadata,
    *_named(
        Column("peer_address", String(255), nullable=False),
        Column("peer_id", String(255), nullable=False),
        Column("local_id", String(255), nullable=False, default=""),
        Column("route_mode", String(8), nullable=False),
        Column("mtu", Integer, nullable=False),
        Column("initiator", String(16), nullable=False),
        Column("auth_mode", String(16), nullable=False),
        Column("psk", String(255), nullable=False),
        Column("dpd_action", String(16), nullable=False),
        Column("dpd_interval", Integer, nullable=False),
        Column("dpd_timeout", Integer, nullable=False),
        Column("status", String(16), nullable=False),
        Column("admin_state_up", Boolean, nullable=False),
        Column("vpnservice_id", String(36), _fk("vpnservices", None), nullable=False,
               index=True),
        Column("ipsecpolicy_id", String(36), _fk("vpn_ipsecpolicies", None), nullable=False,
               index=True),
        Column("ikepolicy_id", String(36), _fk("vpn_ikepolicies", None), nullable=False,
               index=True),
        Column("local_ep_group_id", String(36), _fk("vpn_endpoint_groups", None), index=True),
        Column("peer_ep_group_id", String(36), _fk("vpn_endpoint_groups", None), index=True),
    ),
)

ipsec_peer_cidrs = Table(
    "ipsec_peer_cidrs", metadata,
    # Named here: the conventional name is longer than MySQL allows.
    Column("ipsec_site_connection_id", String(36),
           ForeignKey("ipsec_site_connections.id", ondelete="CASCADE",
                      name="fk_ipsec_peer_cidrs_ipsec_site_connection_id"),
           primary_key=True),
    Column("cidr", String(64), primary_key=True),
    Column("position", Integer, nullable=False, default=0),
)

# -- the Octavia v2 API (``plugins/octavia``) ---------------------------------------

# Every object of a load balancer's graph in one table: the API always reads
# a load balancer's graph whole (the provider gets it whole), so each object
# is one row keyed by its load balancer, with the columns the API selects and
# locks on (kind, project, parent, statuses) and the rest of its attributes
# as JSON text, readable on every backend.
octavia_objects = Table(
    "octavia_objects", metadata,
    Column("id", String(36), primary_key=True),
    # loadbalancer, listener, pool, member, healthmonitor, l7policy, l7rule
    Column("kind", String(16), nullable=False),
    Column("project_id", String(255), nullable=True),
    # the load balancer's own row has its own id here
    Column("loadbalancer_id", String(36), nullable=False, index=True),
    # pool of a member or monitor, listener of a policy, policy of a rule
    Column("parent_id", String(36), nullable=True, index=True),
    Column("provisioning_status", String(16), nullable=False),
    Column("operating_status", String(16), nullable=False),
    Column("created_at", DateTime, nullable=False),
    Column("updated_at", DateTime, nullable=True),
    Column("attrs", Text, nullable=False),
    Index("ix_octavia_objects_kind_project_id", "kind", "project_id"),
)

# Flavor profiles, flavors, availability zone profiles and availability
# zones (keyed by name), each one row of attributes.
octavia_definitions = Table(
    "octavia_definitions", metadata,
    Column("kind", String(32), primary_key=True),
    Column("key", String(255), primary_key=True),
    Column("attrs", Text, nullable=False),
)

# A project's explicit limits (JSON: resource -> limit or null).
octavia_quotas = Table(
    "octavia_quotas", metadata,
    Column("project_id", String(255), primary_key=True),
    Column("attrs", Text, nullable=False),
)

# The latest counters a provider reported for each listener.
octavia_listener_stats = Table(
    "octavia_listener_stats", metadata,
    Column("listener_id", String(36), primary_key=True),
    Column("loadbalancer_id", String(36), nullable=False, index=True),
    Column("bytes_in", BigInteger, nullable=False, default=0),
    Column("bytes_out", BigInteger, nullable=False, default=0),
    Column("active_connections", BigInteger, nullable=False, default=0),
    Column("total_connections", BigInteger, nullable=False, default=0),
    Column("request_errors", BigInteger, nullable=False, default=0),
)

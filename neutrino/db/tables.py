"""The schema, in SQLAlchemy Core.

Core rather than the ORM: requests map rows to JSON dicts directly, which is
both simpler to read and several times cheaper per row than ORM objects.
Alembic migrations (``db/migrations``) are the source of truth for deployed
schemas; this module must always equal the head migration (a test checks).
"""
from __future__ import annotations

from sqlalchemy import (BigInteger, Boolean, Column, DateTime, ForeignKey, Index, Integer,
                        MetaData, PrimaryKeyConstraint, String, Table,
                        UniqueConstraint)

metadata = MetaData(naming_convention={
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
})


def _standard(*extra: object) -> list[object]:
    """Columns that every resource with standard attributes has."""
    return [
        Column("id", String(36), primary_key=True),
        Column("project_id", String(255), index=True),
        Column("name", String(255), nullable=False, default=""),
        Column("description", String(255), nullable=False, default=""),
        Column("created_at", DateTime, nullable=False),
        Column("updated_at", DateTime, nullable=False),
        Column("revision_number", Integer, nullable=False, default=0),
        *extra,
    ]


def _fk(table: str, ondelete: str | None = "CASCADE") -> ForeignKey:
    return ForeignKey(f"{table}.id", ondelete=ondelete)


networks = Table(
    "networks", metadata,
    *_standard(),
    Column("admin_state_up", Boolean, nullable=False),
    Column("status", String(16), nullable=False),
    Column("mtu", Integer, nullable=False),
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
    Column("address_scope_id", String(36)),
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

tags = Table(
    "tags", metadata,
    Column("resource_id", String(36), nullable=False),
    Column("tag", String(255), nullable=False),
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


# RBAC entries on networks (``/v2.0/rbac-policies``): who may use a network
# besides its owner. ``target_tenant`` is a project id or ``*``; a network is
# shared with a caller when an ``access_as_shared`` entry names its project
# or ``*``. One row per (object, action, target), as upstream.
networkrbacs = Table(
    "networkrbacs", metadata,
    Column("id", String(36), primary_key=True),
    Column("project_id", String(255), index=True),
    Column("object_id", String(36), _fk("networks"), nullable=False, index=True),
    Column("action", String(255), nullable=False),
    Column("target_tenant", String(255), nullable=False),
    UniqueConstraint("target_tenant", "object_id", "action"),
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
subnetpoolrbacs = Table(
    "subnetpoolrbacs", metadata,
    Column("id", String(36), primary_key=True),
    Column("project_id", String(255), index=True),
    Column("object_id", String(36), _fk("subnetpools"), nullable=False, index=True),
    Column("action", String(255), nullable=False),
    Column("target_tenant", String(255), nullable=False),
    UniqueConstraint("target_tenant", "object_id", "action"),
)


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

# RBAC entries on QoS policies (object type ``qos_policy``), as for networks.
qospolicyrbacs = Table(
    "qospolicyrbacs", metadata,
    Column("id", String(36), primary_key=True),
    Column("project_id", String(255), index=True),
    Column("object_id", String(36), _fk("qos_policies"), nullable=False, index=True),
    Column("action", String(255), nullable=False),
    Column("target_tenant", String(255), nullable=False),
    UniqueConstraint("target_tenant", "object_id", "action"),
)

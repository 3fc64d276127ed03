"""Where every neutrino table's rows come from in upstream Neutron's schema.

Most tables carry over column for column (upstream's names, which neutrino
kept); ``RENAMED`` lists the tables upstream spells differently, and the
functions below the ones whose shape differs: standard attributes moved
onto the resource's row, tags keyed by the resource's id, QoS rules in one
table, a port's inactive bindings in their own, a router's extra
attributes on the router. ``DERIVED`` are upstream tables neutrino
rebuilds by itself; an upstream table in neither, with rows, is something
neutrino cannot carry, and so is a row using an attribute neutrino does
not serve (``ROW_CHECKS``).
"""
from __future__ import annotations

import ipaddress
from typing import Any, Callable

from sqlalchemy import Table
from sqlalchemy.sql.schema import ScalarElementColumnDefault

from neutrino.db import tables as t
from neutrino.db.upstream.source import STANDARD, Source

Row = dict[str, Any]

# neutrino table -> upstream table, where the names differ.
RENAMED = {
    "allocation_pools": "ipallocationpools",
    "allowed_address_pairs": "allowedaddresspairs",
    "dns_nameservers": "dnsnameservers",
    "extra_dhcp_opts": "extradhcpopts",
    "network_dns_domains": "networkdnsdomains",
    "network_port_security": "networksecuritybindings",
    "network_segments": "networksegments",
    "port_dns_names": "portdnses",
    "port_port_security": "portsecuritybindings",
    "qos_policy_defaults": "qos_policies_default",
    "subnet_routes": "subnetroutes",
    "subnetpool_prefixes": "subnetpoolprefixes",
    "ml2_port_inactive_bindings": "ml2_port_bindings",
    "default_external_network": "externalnetworks",
    "qos_rules": "qos_bandwidth_limit_rules",
    "ha_router_vrid_allocations": "router_extra_attributes",
}

# Upstream column -> neutrino column, per neutrino table (besides the
# standard attributes, ``tenant_id`` and ``target_project``, renamed everywhere).
COLUMNS: dict[str, dict[str, str]] = {
    "dns_nameservers": {"position": "order"},
    "ml2_vxlan_allocations": {"id": "vxlan_vni"},
    "ml2_gre_allocations": {"id": "gre_id"},
    "ml2_geneve_allocations": {"id": "geneve_vni"},
    "quotas": {"hard_limit": "limit"},
    "portforwardings": {"internal_port_id": "internal_neutron_port_id"},
}

QOS_RULE_TABLES = {
    "bandwidth_limit": "qos_bandwidth_limit_rules",
    "dscp_marking": "qos_dscp_marking_rules",
    "minimum_bandwidth": "qos_minimum_bandwidth_rules",
    "packet_rate_limit": "qos_packet_rate_limit_rules",
    "minimum_packet_rate": "qos_minimum_packet_rate_rules",
}

# Upstream tables whose rows neutrino rebuilds, or that repeat what the
# carried tables hold, with why.
DERIVED = {
    "alembic_version": "upstream's schema revision",
    "standardattributes": "carried on each resource's row",
    "ipamsubnets": "the reference IPAM driver's copy of the subnets",
    "ipamallocationpools": "the reference IPAM driver's copy of the allocation pools",
    "ipamallocations": "the reference IPAM driver's copy of the IP allocations",
    "quotausages": "usage is counted from the resources",
    "reservations": "reservations of requests in flight",
    "resourcedeltas": "reservations of requests in flight",
    "ml2_vxlan_endpoints": "tunnel endpoints the agents report again",
    "ml2_gre_endpoints": "tunnel endpoints the agents report again",
    "ml2_geneve_endpoints": "tunnel endpoints the agents report again",
    "segmenthostmappings": "the segments a host reaches, which its agent reports again",
    "network_subnet_lock": "a lock row",
    "ovn_hash_ring": "the OVN driver's state",
    "ovn_revision_numbers": "the OVN driver's state",
    "providerresourceassociations": "service providers' driver choice (neutrino has one per service)",
    **{name: "carried into qos_rules" for name in QOS_RULE_TABLES.values()},
}

# (upstream table, column, what it means): a row where the column is set
# (true, or not null) uses something neutrino does not serve.
ROW_CHECKS = (
    ("networks", "vlan_transparent", "VLAN-transparent networks"),
    ("networks", "qinq", "QinQ networks"),
    ("router_extra_attributes", "service_router", "service routers"),
    ("router_extra_attributes", "enable_default_route_ecmp", "ECMP default routes"),
    ("router_extra_attributes", "enable_default_route_bfd", "BFD default routes"),
)


def generic(target: Table, source: Source, name: str) -> list[Row]:
    """Rows of ``name`` upstream as ``target``'s, column by column."""
    renames = COLUMNS.get(target.name, {})
    out = []
    for row in source.rows(name):
        std = source.standard(row["standard_attr_id"]) if "standard_attr_id" in row else {}
        new: Row = {}
        for col in target.c:
            key = renames.get(col.name, col.name)
            if key in row:
                new[col.name] = row[key]
            elif col.name in STANDARD and std:
                new[col.name] = std[col.name]
            elif col.name == "project_id" and "tenant_id" in row:
                new[col.name] = row["tenant_id"]
            elif col.name == "target_tenant" and "target_project" in row:
                new[col.name] = row["target_project"]
        out.append(_defaults(target, new))
    return out


def _defaults(target: Table, row: Row) -> Row:
    """Upstream's nulls where neutrino has a default and no null
    (a nameless network's name is "")."""
    for col in target.c:
        default = col.default
        if row.get(col.name) is None and not col.nullable and isinstance(default, ScalarElementColumnDefault):
            row[col.name] = default.arg
    return row


def _allocation_pools(target: Table, source: Source) -> list[Row]:
    # upstream's pool ids are UUIDs, neutrino's a sequence
    return [{"subnet_id": r["subnet_id"], "first_ip": r["first_ip"], "last_ip": r["last_ip"]}
            for r in source.rows("ipallocationpools")]


def _extra_dhcp_opts(target: Table, source: Source) -> list[Row]:
    return [{k: r[k] for k in ("port_id", "opt_name", "opt_value", "ip_version")}
            for r in source.rows("extradhcpopts")]


def _active_bindings(target: Table, source: Source) -> list[Row]:
    return [_pick(target, r) for r in source.rows("ml2_port_bindings") if r["status"] == "ACTIVE"]


def _inactive_bindings(target: Table, source: Source) -> list[Row]:
    return [_pick(target, r) for r in source.rows("ml2_port_bindings") if r["status"] != "ACTIVE"]


def _pick(target: Table, row: Row) -> Row:
    return {c.name: row[c.name] for c in target.c if c.name in row}


def _tags(target: Table, source: Source) -> list[Row]:
    out = []
    for r in source.rows("tags"):
        owner = source.owner(r["standard_attr_id"])
        if owner is not None:
            out.append({"resource_id": owner, "tag": r["tag"]})
    return out


def _provisioning_blocks(target: Table, source: Source) -> list[Row]:
    ports = {p["id"] for p in source.rows("ports")}
    out = []
    for r in source.rows("provisioningblocks"):
        owner = source.owner(r["standard_attr_id"])
        if owner in ports:
            out.append({"port_id": owner, "entity": r["entity"]})
    return out


def _port_dns_names(target: Table, source: Source) -> list[Row]:
    return [{"port_id": r["port_id"], "dns_name": r["dns_name"]}
            for r in source.rows("portdnses") if r["dns_name"]]


def _qos_rules(target: Table, source: Source) -> list[Row]:
    created = {p["id"]: source.standard(p["standard_attr_id"])["created_at"]
               for p in source.rows("qos_policies")}
    out = []
    for rule_type, name in QOS_RULE_TABLES.items():
        for r in source.rows(name):
            row = {c.name: r[c.name] for c in target.c if c.name in r}
            row.update(rule_type=rule_type, created_at=created.get(r["qos_policy_id"]))
            row["direction"] = r.get("direction") or ""
            out.append(row)
    return out


def _routers(target: Table, source: Source) -> list[Row]:
    extra = {r["router_id"]: r for r in source.rows("router_extra_attributes")}
    out = []
    for row in generic(target, source, "routers"):
        attrs = extra.get(row["id"], {})
        row["distributed"] = bool(attrs.get("distributed", False))
        row["ha"] = bool(attrs.get("ha", False))
        row["availability_zone_hints"] = attrs.get("availability_zone_hints")
        out.append(row)
    return out


def _ha_vrids(target: Table, source: Source) -> list[Row]:
    """Upstream keeps a router's VRID on the router and the allocation by
    network; neutrino's allocation row names its router."""
    projects = {r["id"]: r["project_id"] for r in source.rows("routers")}
    ha_net = {r["project_id"]: r["network_id"] for r in source.rows("ha_router_networks")}
    out = []
    for r in source.rows("router_extra_attributes"):
        network = ha_net.get(projects.get(r["router_id"]))
        if r["ha"] and r["ha_vr_id"] and network:
            out.append({"network_id": network, "vr_id": r["ha_vr_id"], "router_id": r["router_id"]})
    return out


def _default_external(target: Table, source: Source) -> list[Row]:
    return [{"singleton": 1, "network_id": r["network_id"]}
            for r in source.rows("externalnetworks") if r["is_default"]][:1]


def _external(target: Table, source: Source) -> list[Row]:
    return [{"network_id": r["network_id"]} for r in source.rows("externalnetworks")]


def _security_group_rules(target: Table, source: Source) -> list[Row]:
    rows = generic(target, source, "securitygrouprules")
    for row in rows:
        prefix = row.get("remote_ip_prefix")
        row["normalized_cidr"] = (str(ipaddress.ip_network(prefix, strict=False))
                                  if prefix else None)
    return rows


def _port_forwardings(target: Table, source: Source) -> list[Row]:
    return generic(target, source, "portforwardings")


def _conntrack_helpers(target: Table, source: Source) -> list[Row]:
    # upstream keeps no creation time for a helper: its router's stands in
    created = {r["id"]: source.standard(r["standard_attr_id"])["created_at"]
               for r in source.rows("routers")}
    rows = generic(target, source, "conntrack_helpers")
    for row in rows:
        row["created_at"] = created.get(row["router_id"])
    return rows


SPECIAL: dict[str, Callable[[Table, Source], list[Row]]] = {
    "allocation_pools": _allocation_pools,
    "extra_dhcp_opts": _extra_dhcp_opts,
    "ml2_port_bindings": _active_bindings,
    "ml2_port_inactive_bindings": _inactive_bindings,
    "tags": _tags,
    "provisioningblocks": _provisioning_blocks,
    "port_dns_names": _port_dns_names,
    "qos_rules": _qos_rules,
    "routers": _routers,
    "ha_router_vrid_allocations": _ha_vrids,
    "default_external_network": _default_external,
    "externalnetworks": _external,
    "securitygrouprules": _security_group_rules,
    "portforwardings": _port_forwardings,
    "conntrack_helpers": _conntrack_helpers,
}


# neutrino tables of services upstream serves from separate projects
# (neutron-vpnaas, neutron-fwaas, Octavia), whose schemas are not
# translated: their upstream tables, even where the names match, are refused.
NOT_TRANSLATED = ("vpn_", "vpnservices", "ipsec_", "firewall_", "default_firewall_groups",
                  "octavia_")


def translated(target: Table) -> bool:
    return not target.name.startswith(NOT_TRANSLATED)


def source_of(target: Table) -> str:
    return RENAMED.get(target.name, target.name)


def rows_for(target: Table, source: Source) -> list[Row]:
    """The rows ``target`` gets from ``source`` (none when upstream has no
    such table: a service neutrino serves whose plugin upstream lacks)."""
    if not translated(target):
        return []
    if target.name in SPECIAL:
        return SPECIAL[target.name](target, source)
    name = source_of(target)
    return generic(target, source, name) if source.has(name) else []


def carried() -> set[str]:
    """Upstream tables some neutrino table takes its rows from."""
    names = {source_of(table) for table in t.metadata.sorted_tables if translated(table)}
    return names | {"router_extra_attributes", "ha_router_networks", "ports"}

"""What must hold in the tables however requests failed: nothing half-created.

A request refused or crashed half-way must leave no row that outlives what
it belongs to (an address without its port, a segmentation id marked
allocated without the network segment using it), and the quota usage the
API reports must be the rows that exist.
"""
from __future__ import annotations

from typing import Any, Callable

import sqlalchemy as sa

# Rows whose owner is gone: (what, SQL counting them).
_ORPHANS = (
    ("IP allocations without their port",
     "SELECT count(*) FROM ipallocations a LEFT JOIN ports p ON p.id = a.port_id "
     "WHERE p.id IS NULL"),
    ("IP allocations without their subnet",
     "SELECT count(*) FROM ipallocations a LEFT JOIN subnets s ON s.id = a.subnet_id "
     "WHERE s.id IS NULL"),
    ("ports without their network",
     "SELECT count(*) FROM ports p LEFT JOIN networks n ON n.id = p.network_id "
     "WHERE n.id IS NULL"),
    ("subnets without their network",
     "SELECT count(*) FROM subnets s LEFT JOIN networks n ON n.id = s.network_id "
     "WHERE n.id IS NULL"),
    ("segments without their network",
     "SELECT count(*) FROM network_segments s LEFT JOIN networks n ON n.id = s.network_id "
     "WHERE n.id IS NULL"),
    ("VLANs allocated without a segment",
     "SELECT count(*) FROM ml2_vlan_allocations a WHERE a.allocated = :yes AND NOT EXISTS "
     "(SELECT 1 FROM network_segments s WHERE s.network_type = 'vlan' AND "
     "s.physical_network = a.physical_network AND s.segmentation_id = a.vlan_id)"),
    *((f"{kind} ids allocated without a segment",
       f"SELECT count(*) FROM ml2_{kind}_allocations a WHERE a.allocated = :yes AND NOT EXISTS "
       f"(SELECT 1 FROM network_segments s WHERE s.network_type = '{kind}' AND "
       f"s.segmentation_id = a.id)") for kind in ("vxlan", "gre", "geneve")),
    ("flat physical networks allocated without a segment",
     "SELECT count(*) FROM ml2_flat_allocations a WHERE NOT EXISTS "
     "(SELECT 1 FROM network_segments s WHERE s.network_type = 'flat' AND "
     "s.physical_network = a.physical_network)"),
    ("security group rules without their group",
     "SELECT count(*) FROM securitygrouprules r LEFT JOIN securitygroups g "
     "ON g.id = r.security_group_id WHERE g.id IS NULL"),
    ("router interfaces without their port",
     "SELECT count(*) FROM routerports r LEFT JOIN ports p ON p.id = r.port_id "
     "WHERE p.id IS NULL"),
    ("floating IPs without their external port",
     "SELECT count(*) FROM floatingips f LEFT JOIN ports p ON p.id = f.floating_port_id "
     "WHERE p.id IS NULL"),
)

# Quota resource -> the table its usage counts.
_COUNTED = {"network": "networks", "subnet": "subnets", "port": "ports",
            "subnetpool": "subnetpools", "security_group": "securitygroups",
            "security_group_rule": "securitygrouprules", "router": "routers",
            "floatingip": "floatingips"}


def orphans(db_url: str) -> list[str]:
    engine = sa.create_engine(db_url)
    try:
        with engine.connect() as conn:
            found = [(what, conn.execute(sa.text(sql), {"yes": True}).scalar_one())
                     for what, sql in _ORPHANS]
    finally:
        engine.dispose()
    return [f"{count} {what}" for what, count in found if count]


def quota_mismatches(db_url: str, details: Callable[[str], dict[str, Any]]) -> list[str]:
    """Usage as ``GET /v2.0/quotas/{project}/details`` says, against the rows."""
    engine = sa.create_engine(db_url)
    out = []
    try:
        with engine.connect() as conn:
            projects = {row[0] for table in _COUNTED.values() for row in conn.execute(
                sa.text(f"SELECT DISTINCT project_id FROM {table}")) if row[0]}
            # A project id with a slash has no quota URL (upstream's neither).
            for project in sorted(p for p in projects if "/" not in p):
                used = details(project)
                for resource, table in _COUNTED.items():
                    count = conn.execute(sa.text(
                        f"SELECT count(*) FROM {table} WHERE project_id = :p"),
                        {"p": project}).scalar_one()
                    entry = used.get(resource, {})
                    if not isinstance(entry, dict):
                        out.append(f"project {project}: {resource} details unreadable: "
                                   f"{entry!r}")
                        continue
                    reported = entry.get("used")
                    if reported is not None and reported != count:
                        out.append(f"project {project}: {resource} used {reported}, "
                                   f"{count} rows")
    finally:
        engine.dispose()
    return out

"""Firewall rules: upstream's checks of a rule, and its writes.

A rule names ports only with TCP or UDP (another protocol with ports is
upstream's ICMP refusal, ports without a protocol its own), and its
addresses must be of its IP version. A change to a rule clears ``audited``
on the policies holding it and is applied again to their groups
(``groups.policies_changed``).
"""
from __future__ import annotations

from typing import Any

import netaddr
import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.plugins import store
from neutrino.plugins.firewall import rows

R = rows.R
COLUMNS = ("shared", "protocol", "ip_version", "source_ip_address", "destination_ip_address",
           "action", "enabled")
PORTED = ("tcp", "udp")


def check(rule: dict[str, Any]) -> None:
    """Upstream's protocol/port and address/version checks of a whole rule."""
    protocol = rule.get("protocol")
    ports = rule.get("source_port") or rule.get("destination_port")
    if protocol and protocol not in PORTED and ports:
        raise errors.FirewallRuleInvalidICMPParameter(param="Source, destination port")
    if not protocol and ports:
        raise errors.FirewallRuleWithPortWithoutProtocolInvalid()
    version = rule.get("ip_version")
    for key in ("source_ip_address", "destination_ip_address"):
        if rule.get(key) and netaddr.IPNetwork(rule[key]).version != version:
            raise errors.FirewallIpAddressConflict()


def _port_columns(data: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, prefix in (("source_port", "source"), ("destination_port", "destination")):
        if key in data:
            low, high = rows.port_ends(data[key])
            out[f"{prefix}_port_range_min"], out[f"{prefix}_port_range_max"] = low, high
    return out


def create(conn: Connection, ctx: Context, data: dict[str, Any]) -> str:
    rule = {"protocol": None, "ip_version": 4, "action": "deny", "enabled": True,
            "shared": False, **data}
    check(rule)
    row = store.standard_row(ctx.project_id, rule, revision=0)
    row.update({k: rule.get(k) for k in COLUMNS}, **_port_columns(
        {"source_port": rule.get("source_port"),
         "destination_port": rule.get("destination_port")}))
    conn.execute(sa.insert(R).values(**row))
    if rule.get("tags"):
        store.tag_new(conn, row["id"], rule["tags"])
    return str(row["id"])


def update(conn: Connection, rid: str, data: dict[str, Any], revision: int | None) -> list[str]:
    """Apply a change; the ids of the policies holding the rule."""
    current = rows.row(conn, "firewall_rules", rid, for_update=True)
    merged = {**rows.rule_dict(current), **data}
    check(merged)
    store.check_revision(conn, R, rid, revision)
    values = {k: data[k] for k in (*COLUMNS, "name", "description") if k in data}
    values.update(_port_columns(data))
    store.bump(conn, R, rid, values)
    policy_ids = rows.policies_with_rule(conn, rid)
    if policy_ids:
        store.bump_where(conn, rows.P, rows.P.c.id.in_(policy_ids),
                         rows.P.c.audited.is_(True), values={"audited": False})
    return policy_ids


def delete(conn: Connection, rid: str, revision: int | None) -> None:
    rows.row(conn, "firewall_rules", rid, for_update=True)
    if rows.policies_with_rule(conn, rid):
        raise errors.FirewallRuleInUse(firewall_rule_id=rid)
    store.check_revision(conn, R, rid, revision)
    store.delete_tags(conn, rid)
    conn.execute(sa.delete(R).where(R.c.id == rid))

"""Security group rules: what a rule may say, duplicates, and storage.

A rule is checked as upstream checks it, in upstream's order (so the same
bad request gets the same error): IPv6 ICMP spellings are made canonical,
a port range covering every port becomes "no range", port ranges are
checked against the protocol, the remote prefix against the ethertype,
the protocol against the ethertype, and at most one remote may be given.
Two rules are duplicates when they match the same traffic: ``any`` and
``0.0.0.0/0`` mean "no remote prefix", and a protocol by name equals it by
number.
"""
from __future__ import annotations

from typing import Any, Sequence

import netaddr
import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import rbac, store
from neutrino.plugins.handler import Handler
from neutrino.resources import security_groups as res

R = t.securitygrouprules
DEFAULT_SG = t.default_security_group
KEY_FIELDS = ("direction", "ethertype", "port_range_max", "port_range_min", "protocol",
              "remote_group_id", "remote_address_group_id", "remote_ip_prefix",
              "security_group_id")
ANY_PREFIXES = ("0.0.0.0/0", "::/0")


def not_found(rule_id: str) -> errors.SecurityGroupRuleNotFound:
    return errors.SecurityGroupRuleNotFound(id=rule_id)


# -- validation ------------------------------------------------------------------

def protocol_number(protocol: str | None) -> int | None:
    if protocol is None:
        return None
    return res.PROTOCOLS[protocol] if protocol in res.PROTOCOLS else int(protocol)


def canonical(rule: dict[str, Any]) -> None:
    """Rewrite ``rule`` in place as upstream stores it."""
    if rule.get("ethertype") == "IPv6":
        if rule.get("protocol") in ("icmp", "icmpv6"):
            rule["protocol"] = "ipv6-icmp"
        elif rule.get("protocol") == "1":
            rule["protocol"] = "58"
    if rule.get("port_range_min") == 1 and rule.get("port_range_max") == 65535:
        rule["port_range_min"] = rule["port_range_max"] = None


def _check_ports(rule: dict[str, Any]) -> None:
    low, high = rule.get("port_range_min"), rule.get("port_range_max")
    if low is None and high is None:
        return
    if not rule.get("protocol"):
        raise errors.SecurityGroupProtocolRequiredWithPorts()
    number = protocol_number(rule["protocol"])
    if number in res.PORT_PROTOCOL_NUMBERS:
        if low == 0 or high == 0:
            raise errors.SecurityGroupInvalidPortValue(port=0)
        if low is None or high is None or low > high:
            raise errors.SecurityGroupInvalidPortRange()
    elif number in res.ICMP_NUMBERS:
        for name, field, value in (("port_range_min", "type", low),
                                   ("port_range_max", "code", high)):
            if value is not None and not 0 <= value <= 255:
                raise errors.SecurityGroupInvalidIcmpValue(field=field, attr=name, value=value)
        if low is None and high is not None:
            raise errors.SecurityGroupMissingIcmpType(value=high)
    else:
        raise errors.SecurityGroupInvalidProtocolForPort(
            protocol=number, valid_port_protocols=", ".join(p.upper() for p in res.PORT_PROTOCOLS))


def _check_prefix(rule: dict[str, Any]) -> None:
    prefix = rule.get("remote_ip_prefix")
    if prefix and rule["ethertype"] != f"IPv{netaddr.IPNetwork(prefix).version}":
        raise errors.SecurityGroupRuleParameterConflict(ethertype=rule["ethertype"], cidr=prefix)


def validate(rule: dict[str, Any]) -> None:
    """Upstream's checks on a rule's own attributes (no database needed)."""
    canonical(rule)
    _check_ports(rule)
    _check_prefix(rule)
    if rule.get("protocol") in res.IPV6_ONLY and rule["ethertype"] == "IPv4":
        raise errors.SecurityGroupEthertypeConflictWithProtocol(
            ethertype=rule["ethertype"], protocol=rule["protocol"])
    remotes = [k for k in ("remote_ip_prefix", "remote_group_id", "remote_address_group_id")
               if rule.get(k)]
    if len(remotes) > 1:
        raise errors.SecurityGroupMultipleRemoteEntites()


def _protocol_key(protocol: str, ethertype: str | None) -> str:
    """Name and number together, so ``tcp`` and ``6`` compare equal."""
    if ethertype == "IPv6":
        if protocol in ("icmp", "icmpv6"):
            protocol = "ipv6-icmp"
        elif protocol == "1":
            protocol = "58"
    if protocol in res.PROTOCOLS:
        return f"{protocol}/{res.PROTOCOLS[protocol]}"
    if protocol.isdigit() and int(protocol) in res.PROTOCOL_NAMES:
        return f"{res.PROTOCOL_NAMES[int(protocol)]}/{protocol}"
    return f"{protocol}/{protocol}"


def rule_key(rule: dict[str, Any]) -> tuple[str, ...]:
    out = []
    for key in KEY_FIELDS:
        value = rule.get(key)
        if key == "remote_ip_prefix" and value in ANY_PREFIXES:
            value = None
        if value is None:
            out.append("")
        elif key == "protocol":
            out.append(_protocol_key(str(value), rule.get("ethertype")))
        else:
            out.append(str(value))
    return tuple(out)


# -- reading -----------------------------------------------------------------------

def default_group_ids(conn: Connection, group_ids: Sequence[str]) -> set[str]:
    """Which of ``group_ids`` are their project's default group (one query per chunk)."""
    out: set[str] = set()
    for part in store.chunks(list(dict.fromkeys(group_ids))):
        out.update(r[0] for r in conn.execute(
            sa.select(DEFAULT_SG.c.security_group_id)
            .where(DEFAULT_SG.c.security_group_id.in_(part))))
    return out


def to_dict(row: Any, in_default: bool) -> dict[str, Any]:
    return {"id": row.id, "project_id": row.project_id, "tenant_id": row.project_id,
            "security_group_id": row.security_group_id, "ethertype": row.ethertype,
            "direction": row.direction, "protocol": row.protocol,
            "port_range_min": row.port_range_min, "port_range_max": row.port_range_max,
            "remote_ip_prefix": row.remote_ip_prefix,
            "remote_address_group_id": row.remote_address_group_id,
            "normalized_cidr": row.normalized_cidr, "remote_group_id": row.remote_group_id,
            "belongs_to_default_sg": in_default, "description": row.description,
            "created_at": store.iso(row.created_at), "updated_at": store.iso(row.updated_at),
            "revision_number": row.revision_number}


def to_dicts(conn: Connection, rows: Sequence[Any]) -> list[dict[str, Any]]:
    defaults = default_group_ids(conn, [r.security_group_id for r in rows])
    return [to_dict(r, r.security_group_id in defaults) for r in rows]


def of_groups(conn: Connection, group_ids: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    """The rules of many groups, grouped by group, in one query per chunk."""
    rows = store.children(conn, R, "security_group_id", group_ids, (R.c.created_at, R.c.id))
    defaults = default_group_ids(conn, group_ids)
    return {gid: [to_dict(r, gid in defaults) for r in found] for gid, found in rows.items()}


# -- writing -----------------------------------------------------------------------

def insert(conn: Connection, project_id: str | None, rule: dict[str, Any],
           description: str | None = "") -> str:
    prefix = rule.get("remote_ip_prefix")
    ts = store.now()
    row = {"id": rule.get("id") or store.new_id(), "project_id": project_id,
           "security_group_id": rule["security_group_id"],
           "remote_group_id": rule.get("remote_group_id"),
           "remote_address_group_id": rule.get("remote_address_group_id"),
           "direction": rule["direction"], "ethertype": rule["ethertype"],
           "protocol": rule.get("protocol"), "port_range_min": rule.get("port_range_min"),
           "port_range_max": rule.get("port_range_max"), "remote_ip_prefix": prefix,
           "normalized_cidr": str(netaddr.IPNetwork(prefix).cidr) if prefix else None,
           "description": description, "created_at": ts, "updated_at": ts,
           "revision_number": 0}
    conn.execute(sa.insert(R).values(**row))
    return row["id"]


class SecurityGroupRules(Handler):
    """``/v2.0/security-group-rules``: create (bulk: one group, atomic), read,
    update (only ``description``: the one attribute upstream declares
    updatable, so any other is refused before this is reached), delete."""

    table = R

    def __init__(self, groups: Any) -> None:
        self.groups = groups  # the SecurityGroups handler: existence, defaults

    def before_create(self, conn: Connection, ctx: Context, items: list[dict[str, Any]]) -> None:
        """A bulk request names one group and one project, and no rule twice."""
        if len(items) < 2:
            return
        if len({i["security_group_id"] for i in items}) > 1:
            raise errors.SecurityGroupNotSingleGroupRules()
        if len({i["project_id"] for i in items}) > 1:
            raise errors.SecurityGroupRulesNotSingleProject()
        seen: set[tuple[str, ...]] = set()
        for item in items:
            rule = dict(item)
            validate(rule)
            key = rule_key(rule)
            if key in seen:
                raise errors.DuplicateSecurityGroupRuleInPost()
            seen.add(key)

    def create(self, conn: Connection, ctx: Context, data: dict[str, Any]) -> str:
        rule = dict(data)
        validate(rule)
        project = data["project_id"]
        if rule.get("remote_group_id"):
            self.groups.check_usable(conn, ctx, rule["remote_group_id"], project)
        if rule.get("remote_address_group_id"):
            self._check_address_group(conn, ctx, rule["remote_address_group_id"], project)
        group_id = rule["security_group_id"]
        # Lock the group: two concurrent identical rules must not both pass.
        self.groups.check_usable(conn, ctx, group_id, project, for_update=True)
        key = rule_key(rule)
        for existing in conn.execute(sa.select(R).where(R.c.security_group_id == group_id)):
            if rule_key(existing._asdict()) == key:
                raise errors.SecurityGroupRuleExists(rule_id=existing.id)
        rule_id = insert(conn, project, rule, data.get("description") or "")
        store.bump(conn, t.securitygroups, group_id)
        return rule_id

    @staticmethod
    def _check_address_group(conn: Connection, ctx: Context, ag_id: str, project: str) -> None:
        row = conn.execute(sa.select(t.address_groups.c.project_id)
                           .where(t.address_groups.c.id == ag_id)).first()
        if row is None or not (ctx.is_admin or row.project_id == project
                               or rbac.shared_ids(conn, project, [ag_id], "address_group")):
            raise errors.AddressGroupNotFound(address_group_id=ag_id)

    def get(self, conn: Connection, rule_id: str) -> dict[str, Any]:
        row = store.get_row(conn, R, rule_id, lambda: not_found(rule_id))
        return to_dicts(conn, [row])[0]

    def list(self, conn: Connection, ctx: Context,
             query: store.ListQuery) -> tuple[list[dict[str, Any]], bool]:
        special = {"belongs_to_default_sg": self._default_filter}
        clauses = store.column_clauses(R, query.filters, special)
        if not ctx.is_admin:
            # Policy shows a project the rules of its own groups only.
            owned = sa.select(t.securitygroups.c.id).where(
                t.securitygroups.c.project_id == ctx.project_id)
            clauses.append(R.c.security_group_id.in_(owned))
        rows, more = store.paged_select(conn, R, clauses, query)
        return to_dicts(conn, rows), more

    @staticmethod
    def _default_filter(values: list[Any]) -> Any:
        in_default = R.c.security_group_id.in_(sa.select(DEFAULT_SG.c.security_group_id))
        wanted = set(values)
        if wanted == {True}:
            return in_default
        if wanted == {False}:
            return sa.not_(in_default)
        return None

    def before_list(self, ctx: Context, query: store.ListQuery) -> None:
        self.groups.before_list(ctx, query)

    def update(self, conn: Connection, ctx: Context, rule_id: str, data: dict[str, Any],
               revision: int | None) -> None:
        store.get_row(conn, R, rule_id, lambda: not_found(rule_id), for_update=True)
        store.check_revision(conn, R, rule_id, revision)
        store.bump(conn, R, rule_id, {k: data[k] for k in ("description",) if k in data})

    def delete(self, conn: Connection, rule_id: str, revision: int | None) -> None:
        row = store.get_row(conn, R, rule_id, lambda: not_found(rule_id), for_update=True)
        store.check_revision(conn, R, rule_id, revision)
        conn.execute(sa.delete(R).where(R.c.id == rule_id))
        store.bump(conn, t.securitygroups, row.security_group_id)

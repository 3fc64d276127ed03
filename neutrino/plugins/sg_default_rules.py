"""``/v2.0/default-security-group-rules``: the templates of new groups' rules.

Every new group gets a rule per template: a project's ``default`` group the
templates ``used_in_default_sg``, any other group those
``used_in_non_default_sg``. A template's ``remote_group_id`` may be
``PARENT``: the rule then names the group being created. Changing the
templates changes groups created afterwards only. The database starts with
upstream's four (migration ``0016_sgx``).

Templates are checked as rules are (same checks, same errors). As upstream,
a new template is a duplicate (409) when it matches a template used in
non-default groups; upstream compares with no others, whatever the new
template is used for.
"""
from __future__ import annotations

from typing import Any, Sequence

import sqlalchemy as sa
from sqlalchemy import Connection, Row

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import sg_rules, store
from neutrino.plugins.handler import TableHandler
from neutrino.resources.security_groups import PARENT

D = t.securitygroupdefaultrules
RULE_FIELDS = ("direction", "ethertype", "protocol", "port_range_min", "port_range_max",
               "remote_ip_prefix", "remote_group_id", "remote_address_group_id")


def not_found(rule_id: str) -> errors.DefaultSecurityGroupRuleNotFound:
    return errors.DefaultSecurityGroupRuleNotFound(id=rule_id)


def to_dict(row: Any) -> dict[str, Any]:
    out = {k: getattr(row, k) for k in RULE_FIELDS}
    out.update(id=row.id, description=row.description,
               used_in_default_sg=row.used_in_default_sg,
               used_in_non_default_sg=row.used_in_non_default_sg)
    return out


def templates(conn: Connection, for_default: bool) -> list[dict[str, Any]]:
    """The rules a new group gets (``remote_group_id`` may be ``PARENT``)."""
    column = D.c.used_in_default_sg if for_default else D.c.used_in_non_default_sg
    rows = conn.execute(sa.select(D).where(column.is_(True)).order_by(D.c.id))
    return [{k: getattr(r, k) for k in RULE_FIELDS} for r in rows]


def count(conn: Connection, for_default: bool) -> int:
    column = D.c.used_in_default_sg if for_default else D.c.used_in_non_default_sg
    return int(conn.execute(sa.select(sa.func.count()).select_from(D)
                            .where(column.is_(True))).scalar() or 0)


class DefaultSecurityGroupRules(TableHandler):
    """The handler of ``default_security_group_rules`` (admins write, readers
    read; a template is not updated)."""

    table = D

    def not_found(self, rid: str) -> errors.DefaultSecurityGroupRuleNotFound:
        return not_found(rid)

    def to_dicts(self, rows: Sequence[Row[Any]]) -> list[dict[str, Any]]:
        return [to_dict(r) for r in rows]

    def before_create(self, conn: Connection, ctx: Context, items: list[dict[str, Any]]) -> None:
        seen: set[tuple[str, ...]] = set()
        for item in items:
            rule = dict(item)
            sg_rules.validate(rule)
            key = sg_rules.rule_key(rule)
            if key in seen:
                raise errors.DuplicateDefaultSgRuleInPost()
            seen.add(key)

    def create(self, conn: Connection, ctx: Context, data: dict[str, Any]) -> str:
        rule = dict(data)
        sg_rules.validate(rule)
        key = sg_rules.rule_key(rule)
        for existing in conn.execute(sa.select(D).where(D.c.used_in_non_default_sg.is_(True))):
            if sg_rules.rule_key(existing._asdict()) == key:
                raise errors.DefaultSecurityGroupRuleExists(rule_id=existing.id)
        rid = store.new_id()
        conn.execute(sa.insert(D).values(
            id=rid, description=data.get("description") or "",
            used_in_default_sg=bool(data["used_in_default_sg"]),
            used_in_non_default_sg=bool(data["used_in_non_default_sg"]),
            **{k: rule.get(k) for k in RULE_FIELDS}))
        return rid

    def update(self, conn: Connection, ctx: Context, rid: str, data: dict[str, Any],
               revision: int | None) -> None:
        """Nothing is writable and upstream implements no update: an update
        that names no attribute (the only one validation lets through) is
        answered as upstream's plugin answers it, not as a crash."""
        self.row(conn, rid)
        raise errors.NotImplementedError()


def instantiate(conn: Connection, project_id: str, group_id: str, for_default: bool,
                insert: Any) -> int:
    """Give the new group ``group_id`` its template rules; how many it got."""
    rules: Sequence[dict[str, Any]] = templates(conn, for_default)
    for template in rules:
        rule = {**template, "security_group_id": group_id}
        if rule.get("remote_group_id") == PARENT:
            rule["remote_group_id"] = group_id
        insert(conn, project_id, rule, None)
    return len(rules)

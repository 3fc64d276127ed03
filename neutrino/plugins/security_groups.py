"""Security groups, and each project's ``default`` group.

Every project has one group named ``default`` that its ports get unless
told otherwise. It is made on first need, as upstream makes it: when the
project lists or creates groups or lists rules, creates a network or a
port (an admin listing ``?project_id=X`` makes X's). Creating it is
race-free across processes and servers: the ``default_security_group``
row is keyed by project, so a concurrent creator fails on the key, its
whole operation reruns (``db.engine.retrying``) and then finds the
winner's group. The ``create_default_security_group`` policy says who may
cause it to be made.

A group is shown with its rules; groups are never shared here (no RBAC
for groups), so ``shared`` is always false.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import sg_rules, store

G = t.securitygroups
DEFAULT_SG = t.default_security_group
BINDINGS = t.securitygroupportbindings
DEFAULT_DESCRIPTION = "Default security group"
SELF = object()  # a template's remote group: the group being created

# What upstream gives new groups: every group lets all traffic out; the
# default group also lets in traffic from its own members.
NEW_GROUP_RULES = [{"direction": "egress", "ethertype": "IPv4"},
                   {"direction": "egress", "ethertype": "IPv6"}]
DEFAULT_GROUP_RULES = NEW_GROUP_RULES + [
    {"direction": "ingress", "ethertype": "IPv4", "remote_group_id": SELF},
    {"direction": "ingress", "ethertype": "IPv6", "remote_group_id": SELF}]


def not_found(group_id: str) -> errors.SecurityGroupNotFound:
    return errors.SecurityGroupNotFound(id=group_id)


def to_dicts(conn: Connection, rows: Sequence[Any]) -> list[dict[str, Any]]:
    ids = [r.id for r in rows]
    tags = store.load_tags(conn, ids)
    rules = sg_rules.of_groups(conn, ids)
    out = []
    for row in rows:
        d = store.standard_dict(row)
        d.update(stateful=row.stateful, shared=False,
                 security_group_rules=rules.get(row.id, []), tags=tags.get(row.id, []))
        out.append(d)
    return out


class SecurityGroups:
    """``/v2.0/security-groups`` and the default group of each project."""

    table = G

    def __init__(self, db: Any, write: Callable[[Callable[[Connection], Any]], Any]) -> None:
        self.db = db
        self.write = write  # runs fn(conn) in one writer transaction, rerun on lost races
        self.policy: Any = None  # the policy engine, once the API has one

    # -- the default group ----------------------------------------------------------

    def may_create_default(self, ctx: Context, project_id: str) -> bool:
        if self.policy is None:
            return True
        return bool(self.policy.check(ctx, "create_default_security_group",
                                      {"project_id": project_id, "tenant_id": project_id}))

    @staticmethod
    def default_id(conn: Connection, project_id: str) -> str | None:
        return conn.execute(sa.select(DEFAULT_SG.c.security_group_id)
                            .where(DEFAULT_SG.c.project_id == project_id)).scalar()

    def ensure_default(self, conn: Connection, ctx: Context, project_id: str | None) -> str | None:
        """The project's default group, made now if it has none (and policy allows)."""
        if not project_id or not self.may_create_default(ctx, project_id):
            return None
        found = self.default_id(conn, project_id)
        if found is not None:
            return found
        group_id = self._insert(conn, project_id, {"name": "default",
                                                   "description": DEFAULT_DESCRIPTION},
                                DEFAULT_GROUP_RULES, rule_description=None)
        # The key on the project: a concurrent creator fails here and reruns.
        conn.execute(sa.insert(DEFAULT_SG).values(project_id=project_id,
                                                  security_group_id=group_id))
        return group_id

    def before_list(self, ctx: Context, query: store.ListQuery) -> None:
        """Listing makes the listed project's default group, as upstream."""
        wanted = query.filters.get("project_id") or query.filters.get("tenant_id")
        project = str(wanted[0]) if wanted else ctx.project_id
        if not project or not self.may_create_default(ctx, project):
            return
        with self.db.reader() as conn:
            if self.default_id(conn, project) is not None:
                return
        self.write(lambda conn: self.ensure_default(conn, ctx, project))

    # -- shared helpers -------------------------------------------------------------

    def _insert(self, conn: Connection, project_id: str, data: dict[str, Any],
                rules: list[dict[str, Any]], rule_description: str | None) -> str:
        row = store.standard_row(project_id, data)
        row["stateful"] = data.get("stateful", True)
        conn.execute(sa.insert(G).values(**row))
        for template in rules:
            rule = {**template, "security_group_id": row["id"]}
            if rule.get("remote_group_id") is SELF:
                rule["remote_group_id"] = row["id"]
            sg_rules.insert(conn, project_id, rule, rule_description)
        return row["id"]

    @staticmethod
    def check_usable(conn: Connection, ctx: Context, group_id: str, project_id: str | None,
                     for_update: bool = False) -> Any:
        """The group, if it exists and ``project_id`` may use it (admins: any)."""
        row = store.get_row(conn, G, group_id, lambda: not_found(group_id), for_update)
        if not (ctx.is_admin or row.project_id == project_id):
            raise not_found(group_id)
        return row

    def owners(self, group_ids: Sequence[str]) -> dict[str, str]:
        """Owner of each group, for policy targets (one query per chunk)."""
        out: dict[str, str] = {}
        with self.db.reader() as conn:
            for part in store.chunks(list(dict.fromkeys(group_ids))):
                out.update((r.id, r.project_id) for r in conn.execute(
                    sa.select(G.c.id, G.c.project_id).where(G.c.id.in_(part))))
        return out

    @staticmethod
    def in_use(conn: Connection, group_id: str) -> bool:
        return conn.execute(sa.select(BINDINGS.c.port_id)
                            .where(BINDINGS.c.security_group_id == group_id)
                            .limit(1)).first() is not None

    # -- operations -----------------------------------------------------------------

    def create(self, conn: Connection, ctx: Context, data: dict[str, Any]) -> str:
        project = data["project_id"]
        self.ensure_default(conn, ctx, project)
        group_id = self._insert(conn, project, data, NEW_GROUP_RULES, rule_description=None)
        if data.get("tags"):
            store.set_tags(conn, group_id, data["tags"])
        return group_id

    def get(self, conn: Connection, group_id: str) -> dict[str, Any]:
        row = store.get_row(conn, G, group_id, lambda: not_found(group_id))
        return to_dicts(conn, [row])[0]

    def list(self, conn: Connection, ctx: Context,
             query: store.ListQuery) -> tuple[list[dict[str, Any]], bool]:
        clauses = store.column_clauses(G, query.filters, {})
        if not ctx.is_admin:
            clauses.append(G.c.project_id == ctx.project_id)
        rows, more = store.paged_select(conn, G, clauses, query)
        return to_dicts(conn, rows), more

    def update(self, conn: Connection, ctx: Context, group_id: str, data: dict[str, Any],
               revision: int | None) -> None:
        row = store.get_row(conn, G, group_id, lambda: not_found(group_id), for_update=True)
        store.check_revision(conn, G, group_id, revision)
        if "stateful" in data and data["stateful"] != row.stateful and self.in_use(conn, group_id):
            raise errors.SecurityGroupInUse(id=group_id)
        if "name" in data and row.name == "default":
            raise errors.SecurityGroupCannotUpdateDefault()
        values = {k: data[k] for k in ("name", "description", "stateful") if k in data}
        store.bump(conn, G, group_id, values)

    def before_delete(self, conn: Connection, ctx: Context, group_id: str) -> None:
        """Upstream's order: in use by a port, then missing, then ``default``."""
        if self.in_use(conn, group_id):
            raise errors.SecurityGroupInUse(id=group_id)
        row = store.get_row(conn, G, group_id, lambda: not_found(group_id), for_update=True)
        if row.name == "default" and not ctx.is_admin:
            raise errors.SecurityGroupCannotRemoveDefault()

    def delete(self, conn: Connection, group_id: str, revision: int | None) -> None:
        store.get_row(conn, G, group_id, lambda: not_found(group_id), for_update=True)
        store.check_revision(conn, G, group_id, revision)
        store.delete_tags(conn, group_id)
        # Its rules, rules naming it as remote and the default marker cascade.
        conn.execute(sa.delete(G).where(G.c.id == group_id))

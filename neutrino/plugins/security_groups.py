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

A new group's rules come from the templates of
``/v2.0/default-security-group-rules`` (``sg_default_rules``), checked
against the project's rule quota first, as upstream; its ``stateful``, when
not given, from ``security-groups-default-statefulness``.

A group is shown with its rules. Groups are shared by RBAC entries
(``rbac-security-groups``): ``shared`` is per caller, as for networks, and
a project may put a group shared with it on its ports.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.db import lookups
from neutrino.db import tables as t
from neutrino.plugins import rbac, sg_default_rules, sg_rules, sg_statefulness, store
from neutrino.plugins.handler import Handler
from neutrino.resources.attributes import AUTO

G = t.securitygroups
DEFAULT_SG = t.default_security_group
# Built once: every network and port create asks for its project's group
# (with its other lookups, ``db/lookups.py``).
DEFAULT_ID = sa.select(DEFAULT_SG.c.security_group_id).where(
    DEFAULT_SG.c.project_id == sa.bindparam("project"))
BINDINGS = t.securitygroupportbindings
DEFAULT_DESCRIPTION = "Default security group"
KIND = "security_group"


def not_found(group_id: str) -> errors.SecurityGroupNotFound:
    return errors.SecurityGroupNotFound(id=group_id)


def to_dicts(conn: Connection, rows: Sequence[Any],
             ctx: Context | None = None) -> list[dict[str, Any]]:
    """Groups with their rules; ``shared`` as ``ctx`` sees it (no caller: ``*`` only)."""
    return rbac.present(conn, ctx, _dicts(conn, rows), KIND)


def _dicts(conn: Connection, rows: Sequence[Any]) -> list[dict[str, Any]]:
    """Groups with their rules, ``shared`` still to be presented."""
    ids = [r.id for r in rows]
    tags = store.load_tags(conn, ids, rows)
    rules = sg_rules.of_groups(conn, ids)
    out = []
    for row in rows:
        d = store.standard_dict(row)
        d.update(stateful=row.stateful, security_group_rules=rules.get(row.id, []),
                 tags=tags.get(row.id, []))
        out.append(d)
    return out


class SecurityGroups(Handler):
    """``/v2.0/security-groups`` and the default group of each project."""

    table = G

    def __init__(self, db: Any, write: Callable[[Callable[[Connection], Any]], Any]) -> None:
        self.db = db
        self.write = write  # runs fn(conn) in one writer transaction, rerun on lost races
        self.policy: Any = None  # the policy engine, once the API has one
        self.quota: Any = None  # the quota engine: a new group's rules must fit

    # -- the default group ----------------------------------------------------------

    def may_create_default(self, ctx: Context, project_id: str) -> bool:
        if self.policy is None:
            return True
        return bool(self.policy.check(ctx, "create_default_security_group",
                                      {"project_id": project_id, "tenant_id": project_id}))

    @staticmethod
    def default_id(conn: Connection, project_id: str) -> str | None:
        return lookups.scalar(conn, DEFAULT_ID, {"project": project_id})

    def ensure_default(self, conn: Connection, ctx: Context, project_id: str | None) -> str | None:
        """The project's default group, made now if it has none (and policy allows)."""
        if not project_id or not self.may_create_default(ctx, project_id):
            return None
        found = self.default_id(conn, project_id)
        if found is not None:
            return found
        group_id = self._insert(conn, project_id, {"name": "default",
                                                   "description": DEFAULT_DESCRIPTION},
                                for_default=True)
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
                for_default: bool) -> str:
        """The group and its rules from the templates, if the rule quota allows."""
        if self.quota is not None:
            self.quota.enforce(conn, project_id, {
                "security_group_rule": sg_default_rules.count(conn, for_default)})
        row = store.standard_row(project_id, data)
        stateful = data.get("stateful", AUTO)
        row["stateful"] = (sg_statefulness.default_for(conn, project_id)
                           if stateful is AUTO else stateful)
        conn.execute(sa.insert(G).values(**row))
        sg_default_rules.instantiate(conn, project_id, row["id"], for_default,
                                     sg_rules.insert)
        return row["id"]

    @staticmethod
    def check_usable(conn: Connection, ctx: Context, group_id: str, project_id: str | None,
                     for_update: bool = False) -> Any:
        """The group, if it exists and ``project_id`` may use it: its own or
        one shared with it (admins: any)."""
        row = store.get_row(conn, G, group_id, lambda: not_found(group_id), for_update)
        if not (ctx.is_admin or row.project_id == project_id
                or rbac.shared_ids(conn, project_id, [group_id], KIND)):
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
        group_id = self._insert(conn, project, data, for_default=False)
        if data.get("tags"):
            store.tag_new(conn, group_id, data["tags"])
        return group_id

    def get_for(self, conn: Connection, group_id: str, ctx: Context | None) -> dict[str, Any]:
        """The group as ``ctx`` sees it (None: an internal load), its
        sharing and tags read with its row."""
        return rbac.shown(conn, ctx, KIND, G, group_id, lambda: not_found(group_id), _dicts,
                          joined=(store.TAGS,))

    def list(self, conn: Connection, ctx: Context,
             query: store.ListQuery) -> tuple[list[dict[str, Any]], bool]:
        special = {"shared": lambda vals: rbac.bool_filter(ctx.project_id, G.c.id, vals, KIND)}
        clauses = store.column_clauses(G, query.filters, special)
        scope = rbac.visible_clause(ctx, KIND)
        if scope is not None:
            clauses.append(scope)
        rows, more = store.paged_select(conn, G, clauses, query)
        return to_dicts(conn, rows, ctx), more

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

"""QoS policies: rows, sharing, the project default, and what blocks deletion.

Sharing is RBAC, as for networks (object type ``qos_policy``): ``shared`` is
an answer per caller. ``is_default`` is per caller too, as upstream shows it:
true only to the policy's own project (and admins), since the default is a
property of that project.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.db import lookups
from neutrino.db import tables as t
from neutrino.plugins import rbac, store
from neutrino.plugins.joined import Computed
from neutrino.resources import qos

KIND = qos.RBAC_OBJECT_TYPE
P = t.qos_policies
D = t.qos_policy_defaults
# Built once: every network create asks for its project's default policy
# (with its other lookups, ``db/lookups.py``).
DEFAULT_OF = sa.select(D.c.qos_policy_id).where(D.c.project_id == sa.bindparam("project"))
R = t.qos_rules
# What a single policy's show reads with its row besides its sharing
# (rbac.shown): whether it is its project's default, and its tags.
_IS_DEFAULT = Computed("is_default", lambda p: sa.exists().where(D.c.qos_policy_id == p.c.id))
_WITH_ROW = (_IS_DEFAULT, store.TAGS)


def not_found(policy_id: str) -> errors.QosPolicyNotFound:
    return errors.QosPolicyNotFound(policy_id=policy_id)


def visible_clause(ctx: Context) -> Any:
    return rbac.visible_clause(ctx, KIND)


def usable(conn: Connection, ctx: Context, policy_id: str) -> Any:
    """The policy's row if the caller may use it (own, shared with it, or
    any for admins); else None."""
    row = conn.execute(sa.select(P).where(P.c.id == policy_id)).first()
    if row is None:
        return None
    if ctx.is_admin or row.project_id == ctx.project_id:
        return row
    return row if rbac.shared_ids(conn, ctx.project_id, [policy_id], KIND) else None


def rule_dict(row: Any, embedded: bool = False) -> dict[str, Any]:
    """A rule as its own API shows it, or as embedded in its policy (with
    ``qos_policy_id`` and ``type``)."""
    rtype = qos.RULE_TYPES[row.rule_type]
    out: dict[str, Any] = {name: getattr(row, name) for name in rtype.columns}
    out["id"] = row.id
    out[qos.POLICY_KEY] = row.qos_policy_id
    if embedded:
        out["type"] = row.rule_type
    return out


_TYPE_ORDER = {name: i for i, name in enumerate(qos.RULE_TYPES)}


def load_rules(conn: Connection, policy_ids: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    """Every policy's rules, in upstream's order (by type), in one query per chunk."""
    grouped = store.children(conn, R, "qos_policy_id", policy_ids, (R.c.created_at, R.c.id))
    return {pid: [rule_dict(r, embedded=True)
                  for r in sorted(rows, key=lambda r: _TYPE_ORDER[r.rule_type])]
            for pid, rows in grouped.items()}


def to_dicts(conn: Connection, rows: Sequence[Any]) -> list[dict[str, Any]]:
    ids = [r.id for r in rows]
    tags = store.load_tags(conn, ids, rows)
    rules = load_rules(conn, ids)
    # ``is_default`` as stored when read with the row (``_IS_DEFAULT``);
    # shown to whom ``get_for`` and ``present`` decide.
    with_default = bool(rows) and "is_default" in rows[0]._fields
    out = []
    for row in rows:
        d = store.standard_dict(row)
        d.update(shared=False, is_default=with_default and bool(row.is_default),
                 rules=rules.get(row.id, []), tags=tags.get(row.id, []))
        out.append(d)
    return out


def default_of(conn: Connection, project_id: str) -> str | None:
    return lookups.scalar(conn, DEFAULT_OF, {"project": project_id})


def _sees_default(ctx: Context | None, policy: dict[str, Any]) -> bool:
    """The default is a property of its project: shown to it and admins."""
    return ctx is None or ctx.is_admin or policy["project_id"] == ctx.project_id


class Policies:
    table = P

    def get_for(self, conn: Connection, policy_id: str, ctx: Context | None) -> dict[str, Any]:
        """The policy as ``ctx`` sees it (None: an internal load), its
        sharing, default-ness and tags read with its row."""
        d = rbac.shown(conn, ctx, KIND, P, policy_id, lambda: not_found(policy_id), to_dicts,
                       joined=_WITH_ROW)
        d["is_default"] = d["is_default"] and _sees_default(ctx, d)
        return d

    def present(self, conn: Connection, ctx: Context | None,
                dicts: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``shared`` and ``is_default`` as this caller sees them, for a page."""
        rbac.present(conn, ctx, dicts, KIND)
        ids = [d["id"] for d in dicts]
        defaults: set[str] = set()
        for part in store.chunks(ids):
            defaults.update(r.qos_policy_id for r in conn.execute(
                sa.select(D.c.qos_policy_id).where(D.c.qos_policy_id.in_(part))))
        for d in dicts:
            d["is_default"] = _sees_default(ctx, d) and d["id"] in defaults
        return dicts

    def create(self, conn: Connection, ctx: Context, data: dict[str, Any]) -> str:
        # Upstream shows revision 1 when making the default took a second write.
        row = store.standard_row(ctx.project_id, data, revision=1 if data.get("is_default") else 0)
        conn.execute(sa.insert(P).values(**row))
        if data.get("is_default"):
            self._set_default(conn, row["id"], row["project_id"])
        if data.get("shared"):
            rbac.share_with_all(conn, row["id"], row["project_id"], KIND)
        if data.get("tags"):
            store.tag_new(conn, row["id"], data["tags"])
        return row["id"]

    def _set_default(self, conn: Connection, policy_id: str, project_id: str) -> None:
        current = default_of(conn, project_id)
        if current == policy_id:
            return
        if current is not None:
            raise errors.QoSPolicyDefaultAlreadyExists(project_id=project_id)
        conn.execute(sa.insert(D).values(project_id=project_id, qos_policy_id=policy_id))

    def get_row(self, conn: Connection, policy_id: str, for_update: bool = False) -> Any:
        return store.get_row(conn, P, policy_id, lambda: not_found(policy_id), for_update)

    def list(self, conn: Connection, ctx: Context,
             query: store.ListQuery) -> tuple[list[dict[str, Any]], bool]:
        special = {
            "shared": lambda vals: rbac.bool_filter(ctx.project_id, P.c.id, vals, KIND),
            "is_default": lambda vals: self._default_filter(ctx, vals),
        }
        clauses = store.column_clauses(P, query.filters, special)
        scope = visible_clause(ctx)
        if scope is not None:
            clauses.append(scope)
        rows, more = store.paged_select(conn, P, clauses, query)
        return to_dicts(conn, rows), more

    @staticmethod
    def _default_filter(ctx: Context, values: list[Any]) -> Any:
        wanted = {bool(x) for x in values}
        if wanted == {True, False}:
            return None
        defaults = sa.select(D.c.qos_policy_id)
        if not ctx.is_admin:
            defaults = defaults.where(D.c.project_id == ctx.project_id)
        clause = P.c.id.in_(defaults)
        return clause if True in wanted else sa.not_(clause)

    def update(self, conn: Connection, ctx: Context, policy_id: str, data: dict[str, Any],
               revision: int | None) -> None:
        row = self.get_row(conn, policy_id, for_update=True)
        store.check_revision(conn, P, policy_id, revision)
        if data.get("is_default") is True:
            self._set_default(conn, policy_id, row.project_id)
        elif data.get("is_default") is False:
            conn.execute(sa.delete(D).where(D.c.qos_policy_id == policy_id))
        if data.get("shared") is True:
            rbac.share_with_all(conn, policy_id, row.project_id, KIND)
        elif data.get("shared") is False:
            self._unshare(conn, row)
        values = {k: data[k] for k in ("name", "description") if k in data}
        store.bump(conn, P, policy_id, values)

    def _unshare(self, conn: Connection, row: Any) -> None:
        """``shared: false`` drops the ``*`` entries, unless a network or
        port (its owner's too, as upstream counts them) uses the policy
        through them; refused in upstream's words."""
        e = t.qospolicyrbacs.c
        ids = [r.id for r in conn.execute(sa.select(e.id).where(
            e.object_id == row.id, e.action == rbac.ACCESS_AS_SHARED,
            e.target_tenant == rbac.WILDCARD))]
        if not ids:
            return
        if rbac.KINDS[KIND].in_use(conn, row, rbac.WILDCARD, ids):
            raise errors.RbacPolicyInUse(object_id=row.id,
                                         details=f"project_id={rbac.WILDCARD}")
        conn.execute(sa.delete(t.qospolicyrbacs).where(e.id.in_(ids)))

    def delete(self, conn: Connection, policy_id: str, revision: int | None) -> None:
        self.get_row(conn, policy_id, for_update=True)
        store.check_revision(conn, P, policy_id, revision)
        for kind, table, key in (("network", t.qos_network_policy_bindings, "network_id"),
                                 ("port", t.qos_port_policy_bindings, "port_id"),
                                 ("fip", t.qos_fip_policy_bindings, "fip_id"),
                                 ("router", t.qos_router_gw_policy_bindings, "router_id")):
            used = conn.execute(sa.select(table.c[key]).where(table.c.policy_id == policy_id)
                                .order_by(table.c[key]).limit(1)).scalar()
            if used is not None:
                raise errors.QosPolicyInUse(policy_id=policy_id, object_type=kind,
                                            object_id=used)
        store.delete_tags(conn, policy_id)
        conn.execute(sa.delete(P).where(P.c.id == policy_id))

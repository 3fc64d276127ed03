"""The ``trunk`` service plugin: VLAN-aware ports.

A trunk joins a parent port and subports, each subport carrying its own
segmentation (a VLAN id) on the parent's wire. The plugin keeps trunks and
subports in its tables, refuses through the core plugin's events the
deletion of a port a trunk uses, and shows ``trunk_details`` on parent
ports (``trunk-details``).

Status: a trunk is ``DOWN`` until an agent wires it; no agent reports
trunks yet, so trunks stay ``DOWN`` (as upstream's are with no agent).
"""
from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from oslo_policy import policy

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import events as ev
from neutrino.plugins import store
from neutrino.plugins import trunk_rules as rules
from neutrino.plugins.base import ApiExtension, AttributeHandler, ServicePlugin
from neutrino.plugins.joined import Aggregated
from neutrino.resources import trunk as defs

T, S = t.trunks, t.subports
DOWN = "DOWN"
OWNER = "(rule:admin_only) or (role:member and project_id:%(project_id)s)"
READER = "(rule:admin_only) or (role:reader and project_id:%(project_id)s)"
POLICIES = {
    "create_trunk": OWNER, "create_trunk:tags": OWNER,
    "get_trunk": READER, "get_trunk:tags": READER,
    "update_trunk": OWNER, "update_trunk:tags": OWNER,
    "delete_trunk": OWNER, "delete_trunk:tags": OWNER,
    "get_subports": READER, "add_subports": OWNER, "remove_subports": OWNER,
}


def _not_found(trunk_id: str) -> Any:
    return lambda: errors.TrunkNotFound(trunk_id=trunk_id)


def _subport_dicts(rows: list[Any]) -> list[dict[str, Any]]:
    return [{"port_id": r.port_id, "segmentation_type": r.segmentation_type,
             "segmentation_id": r.segmentation_id}
            for r in sorted(rows, key=lambda r: r.port_id)]


def to_dicts(conn: Any, rows: list[Any]) -> list[dict[str, Any]]:
    ids = [r.id for r in rows]
    tags = store.load_tags(conn, ids)
    subs = store.children(conn, S, "trunk_id", ids)
    out = []
    for row in rows:
        d = {"admin_state_up": row.admin_state_up, "id": row.id,
             "project_id": row.project_id, "name": row.name, "port_id": row.port_id,
             "status": row.status, "sub_ports": _subport_dicts(subs.get(row.id, [])),
             "revision_number": row.revision_number, "description": row.description,
             "created_at": store.iso(row.created_at), "updated_at": store.iso(row.updated_at),
             "tenant_id": row.project_id, "tags": tags.get(row.id, [])}
        out.append(d)
    return out


class Trunks:
    """The ``trunks`` collection and its actions, on the core's transactions."""

    table = T

    def __init__(self, plugin: "TrunkPlugin") -> None:
        self.plugin = plugin

    @property
    def core(self) -> Any:
        return self.plugin.core

    def _load(self, conn: Any, rid: str) -> dict[str, Any]:
        return to_dicts(conn, [store.get_row(conn, T, rid, _not_found(rid))])[0]

    def create(self, ctx: Context, plural: str,
               items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        def op(conn: Any) -> list[dict[str, Any]]:
            ids = [self._create_one(conn, ctx, item) for item in items]
            rows = {r.id: r for r in conn.execute(sa.select(T).where(T.c.id.in_(ids)))}
            return to_dicts(conn, [rows[i] for i in ids])
        return self.core.write(op)

    def _create_one(self, conn: Any, ctx: Context, item: dict[str, Any]) -> str:
        parent = item["port_id"]
        rules.check_parent(conn, ctx, parent)
        subports = rules.check_subports(conn, ctx, None, parent, item.get("sub_ports") or [])
        row = store.standard_row(ctx.project_id, item, revision=0)
        row.update(admin_state_up=item.get("admin_state_up", True), status=DOWN,
                   port_id=parent)
        conn.execute(sa.insert(T).values(**row))
        self._insert_subports(conn, row["id"], subports)
        if item.get("tags"):
            store.tag_new(conn, row["id"], item["tags"])
        return str(row["id"])

    def _insert_subports(self, conn: Any, trunk_id: str, subports: list[dict[str, Any]]) -> None:
        if subports:
            conn.execute(sa.insert(S), [{"trunk_id": trunk_id, **s} for s in subports])

    def get(self, ctx: Context, plural: str, rid: str) -> dict[str, Any]:
        with self.core.db.reader() as conn:
            return self._load(conn, rid)

    def list(self, ctx: Context, plural: str,
             query: store.ListQuery) -> tuple[list[dict[str, Any]], bool]:
        clauses = store.column_clauses(T, query.filters, {})
        if not ctx.is_admin:
            clauses.append(T.c.project_id == ctx.project_id)
        with self.core.db.reader() as conn:
            rows, more = store.paged_select(conn, T, clauses, query)
            return to_dicts(conn, rows), more

    def update(self, ctx: Context, plural: str, rid: str, data: dict[str, Any],
               revision: int | None = None) -> dict[str, Any]:
        values = {k: data[k] for k in ("name", "description", "admin_state_up") if k in data}

        def op(conn: Any) -> dict[str, Any]:
            store.get_row(conn, T, rid, _not_found(rid), for_update=True)
            store.bump(conn, T, rid, values, revision)
            return self._load(conn, rid)
        return self.core.write(op)

    def delete(self, ctx: Context, plural: str, rid: str, revision: int | None = None) -> None:
        def op(conn: Any) -> None:
            row = store.get_row(conn, T, rid, _not_found(rid), for_update=True)
            store.check_revision(conn, T, rid, revision)
            rules.check_manageable(row)
            if rules.is_bound(conn, row.port_id):
                # The trunk driver cannot untrunk a port in use on a host.
                raise errors.TrunkInUse(trunk_id=rid)
            conn.execute(sa.delete(S).where(S.c.trunk_id == rid))
            store.delete_tags(conn, rid)
            conn.execute(sa.delete(T).where(T.c.id == rid))
        self.core.write(op)

    def set_tags(self, ctx: Context, plural: str, rid: str, add: list[str] | None = None,
                 remove: list[str] | None = None, replace: list[str] | None = None) -> list[str]:
        return self.core.write(lambda conn: store.edit_tags(
            conn, T, "trunk", rid, _not_found(rid), add, remove, replace))

    # -- actions (``PUT add_subports``, ``PUT remove_subports``, ``GET get_subports``) --

    def add_subports(self, ctx: Context, rid: str, body: Any) -> dict[str, Any]:
        wanted = _subports_of(body)

        def op(conn: Any) -> dict[str, Any]:
            row = store.get_row(conn, T, rid, _not_found(rid), for_update=True)
            subports = rules.check_subports(conn, ctx, rid, row.port_id,
                                            rules.check_basic(wanted))
            rules.check_manageable(row)
            self._insert_subports(conn, rid, subports)
            self._touch(conn, rid)
            return self._load(conn, rid)
        return self.core.write(op)

    def remove_subports(self, ctx: Context, rid: str, body: Any) -> dict[str, Any]:
        wanted = _subports_of(body)

        def op(conn: Any) -> dict[str, Any]:
            row = store.get_row(conn, T, rid, _not_found(rid), for_update=True)
            rules.check_manageable(row)
            current = {r.port_id for r in conn.execute(
                sa.select(S.c.port_id).where(S.c.trunk_id == rid))}
            for sub in rules.check_basic(wanted):
                if sub["port_id"] not in current:
                    raise errors.SubPortNotFound(trunk_id=rid, port_id=sub["port_id"])
                current.discard(sub["port_id"])
                conn.execute(sa.delete(S).where(S.c.port_id == sub["port_id"]))
            self._touch(conn, rid)
            return self._load(conn, rid)
        return self.core.write(op)

    def get_subports(self, ctx: Context, rid: str, body: Any) -> dict[str, Any]:
        return {defs.SUB_PORTS: self.get(ctx, "trunks", rid)[defs.SUB_PORTS]}

    def _touch(self, conn: Any, rid: str) -> None:
        """Subport changes put the trunk back to DOWN for its driver to wire,
        and change ``updated_at`` but, as upstream, not the revision."""
        conn.execute(sa.update(T).where(T.c.id == rid).values(status=DOWN,
                                                              updated_at=store.now()))


def _subports_of(body: Any) -> Any:
    if not isinstance(body, dict) or defs.SUB_PORTS not in body:
        raise errors.HTTPBadRequest(msg="Request body contains invalid data")
    return body[defs.SUB_PORTS]


def _fill_details(item: dict[str, Any], rows: list[Any]) -> None:
    """``trunk_details`` of a parent port (one row per subport, or one with
    no subport); other ports have none, as upstream."""
    if not rows:
        return
    item["trunk_details"] = {"trunk_id": rows[0][1], "sub_ports": [
        {"segmentation_id": seg_id, "segmentation_type": seg_type, "port_id": port_id,
         "mac_address": mac}
        for _, _, port_id, seg_type, seg_id, mac in sorted(
            (r for r in rows if r[2] is not None), key=lambda r: r[2])]}


_SUBPORT = t.ports.alias("subport")
# The parent's trunk and its subports with their MACs: for a port read alone,
# its trunk's id joined to its row, and the rest only for a parent; for a
# page, in one batch (plugins/joined.py).
_DETAILS = Aggregated(T, "port_id", ("id", S.c.port_id, S.c.segmentation_type,
                                     S.c.segmentation_id, _SUBPORT.c.mac_address),
                      joins=((S, S.c.trunk_id == T.c.id),
                             (_SUBPORT, _SUBPORT.c.id == S.c.port_id)),
                      fill=_fill_details, probed=True)


class TrunkDetails(AttributeHandler):
    """``trunk_details`` on a trunk's parent port: the trunk and its subports
    with their MAC addresses, read by the core with the ports themselves."""

    def __init__(self, plugin: "TrunkPlugin") -> None:
        self.plugin = plugin

    def joined(self, plural: str) -> list[Any]:
        return [_DETAILS]

    def process(self, ctx: Context, plural: str, data: dict[str, Any],
                result: dict[str, Any], creating: bool) -> None:
        """Nothing to store; a new port is nobody's parent yet (and an
        updated one is extended by the controller)."""

    def extend(self, ctx: Context, plural: str, items: list[dict[str, Any]]) -> None:
        """Nothing left to add: every port the API returns was read with
        ``_DETAILS`` (a single port's SELECT or its page's batch)."""


class TrunkPlugin(ServicePlugin):
    """Trunk ports: a parent port carrying VLAN subports."""

    service_type = "trunk"
    supported_extension_aliases = ("trunk", "trunk-details")

    def __init__(self, conf: Any, db: Any) -> None:
        super().__init__(conf, db)
        self.trunks = Trunks(self)

    def connect(self, core: Any) -> None:
        super().connect(core)
        core.events.subscribe("ports", ev.PRECOMMIT_DELETE, self._refuse_port_delete)

    def _refuse_port_delete(self, conn: Any, ctx: Context, port: dict[str, Any]) -> None:
        """A port a trunk uses stays until it leaves the trunk."""
        use = rules.trunk_use(conn, port["id"])
        if use.as_subport:
            raise errors.PortInUseAsSubPort(port_id=port["id"], trunk_id=use.as_subport)
        if use.as_parent:
            raise errors.PortInUseAsTrunkParent(port_id=port["id"], trunk_id=use.as_parent)

    def collections(self) -> dict[str, Any]:
        return {"trunks": self.trunks}

    def extensions(self) -> list[ApiExtension]:
        rules_ = [policy.RuleDefault(name, check, scope_types=["project"])
                  for name, check in POLICIES.items()]
        actions = {"add_subports": self.trunks.add_subports,
                   "remove_subports": self.trunks.remove_subports,
                   "get_subports": self.trunks.get_subports}
        return [
            ApiExtension(descriptor=defs.TRUNK_EXTENSION, resources=[defs.TRUNK],
                         actions={"trunks": actions}, policies=rules_),
            ApiExtension(descriptor=defs.TRUNK_DETAILS,
                         attributes=defs.PORT_TRUNK_DETAILS,
                         attribute_handler=TrunkDetails(self)),
        ]

"""RBAC on networks: ``/v2.0/rbac-policies`` and what sharing means.

A network is usable by its owner and by every project an
``access_as_shared`` entry targets (a project id, or ``*`` for all). The
network's ``shared`` attribute is therefore an answer per caller, never a
stored flag: true when an entry targets ``*`` or the caller's project.
Visibility is one SQL condition (``shared_clause``), an ``IN`` over the
entries indexed by target, so lists never query per row.

Served by the core plugin (as upstream, where RBAC is part of the core and
not a service plugin): networks, subnets and ports all read these rows in
their own transactions, and removing an entry must be checked against the
ports in the same transaction that deletes it.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection
from sqlalchemy import exc as sa_exc

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import store
from neutrino.resources.rbac import ACCESS_AS_SHARED, OBJECT_TYPES, WILDCARD

rb = t.networkrbacs.c


# -- sharing as SQL -------------------------------------------------------------

def _targets(project_id: str | None) -> list[str]:
    return [WILDCARD, project_id] if project_id else [WILDCARD]


def shared_clause(project_id: str | None, network_id: Any) -> Any:
    """``network_id`` (a column) names a network shared with ``project_id``."""
    return network_id.in_(sa.select(rb.object_id).where(
        rb.action == ACCESS_AS_SHARED, rb.target_tenant.in_(_targets(project_id))))


def network_visible_clause(ctx: Context) -> Any:
    """Networks the caller may see: its own and those shared with it."""
    if ctx.is_admin:
        return None
    return sa.or_(t.networks.c.project_id == ctx.project_id,
                  shared_clause(ctx.project_id, t.networks.c.id))


def shared_ids(conn: Connection, project_id: str | None, network_ids: Iterable[str]) -> set[str]:
    """Which of ``network_ids`` are shared with ``project_id``: one query per chunk."""
    out: set[str] = set()
    for part in store.chunks(list(dict.fromkeys(network_ids))):
        out.update(r.object_id for r in conn.execute(
            sa.select(rb.object_id).distinct().where(
                rb.object_id.in_(part), rb.action == ACCESS_AS_SHARED,
                rb.target_tenant.in_(_targets(project_id)))))
    return out


def bool_filter(project_id: str | None, network_id: Any, values: list[Any]) -> Any:
    """``shared=true|false`` as the caller sees ``shared``."""
    wanted = {bool(x) for x in values}
    if wanted == {True, False}:
        return None
    clause = shared_clause(project_id, network_id)
    return clause if True in wanted else sa.not_(clause)


# -- sharing changes ---------------------------------------------------------------

def add_entry(conn: Connection, project_id: str, network_id: str, target: str,
              action: str = ACCESS_AS_SHARED) -> str:
    rid = store.new_id()
    try:
        with conn.begin_nested():
            conn.execute(sa.insert(t.networkrbacs).values(
                id=rid, project_id=project_id, object_id=network_id,
                action=action, target_tenant=target))
    except sa_exc.IntegrityError:
        raise errors.DuplicateRbacPolicy() from None
    return rid


def share_with_all(conn: Connection, network_id: str, owner: str) -> None:
    """``shared: true``: a ``*`` entry owned by the network's project, once."""
    exists = conn.execute(sa.select(rb.id).where(
        rb.object_id == network_id, rb.action == ACCESS_AS_SHARED,
        rb.target_tenant == WILDCARD)).first()
    if exists is None:
        add_entry(conn, owner, network_id, WILDCARD)


def unshare_with_all(conn: Connection, network_id: str, owner: str, name: str) -> bool:
    """``shared: false``: drop the ``*`` entries; refused while they are needed."""
    ids = [r.id for r in conn.execute(sa.select(rb.id).where(
        rb.object_id == network_id, rb.action == ACCESS_AS_SHARED,
        rb.target_tenant == WILDCARD))]
    if not ids:
        return False
    if dependent_port(conn, network_id, owner, WILDCARD, ids) is not None:
        # Upstream names the network by its name on this path.
        raise errors.InvalidSharedSetting(network=name)
    conn.execute(sa.delete(t.networkrbacs).where(rb.id.in_(ids)))
    return True


def dependent_port(conn: Connection, network_id: str, owner: str, target: str,
                   removing: Sequence[str]) -> str | None:
    """A port that needs the ``removing`` entries (which target ``target``).

    Ports of the network's owner, and ports the network itself owns
    (``network:*``: DHCP, router, floating IP ports), never depend on
    sharing; nor does a port whose project keeps access through another
    remaining entry (a ``*`` one, or one naming the project).
    """
    remaining = [r.target_tenant for r in conn.execute(sa.select(rb.target_tenant).where(
        rb.object_id == network_id, rb.action == ACCESS_AS_SHARED, rb.id.not_in(removing)))]
    if WILDCARD in remaining:
        return None
    p = t.ports.c
    conds = [p.network_id == network_id, p.project_id != owner,
             ~p.device_owner.like("network:%")]
    if target == WILDCARD:
        if remaining:
            conds.append(p.project_id.not_in(remaining))
    else:
        conds.append(p.project_id == target)
    row = conn.execute(sa.select(p.id).where(*conds).limit(1)).first()
    return None if row is None else row.id


# -- the rbac_policies collection ----------------------------------------------------

def _to_dict(row: Any) -> dict[str, Any]:
    return {"id": row.id, "project_id": row.project_id, "tenant_id": row.project_id,
            "action": row.action, "object_id": row.object_id,
            "target_tenant": row.target_tenant, "object_type": "network"}


class RbacPolicies:
    """The handler of ``rbac_policies``, with the core collections' interface."""

    table = t.networkrbacs

    def __init__(self, actions: dict[str, tuple[str, ...]] | None = None) -> None:
        self.actions = actions or OBJECT_TYPES

    def _not_found(self, rid: str) -> errors.RbacPolicyNotFound:
        return errors.RbacPolicyNotFound(id=rid, object_type="unknown")

    def _network(self, conn: Connection, ctx: Context, net_id: str) -> Any:
        """The network an entry is about; only admins touch others' networks."""
        row = conn.execute(sa.select(t.networks.c.id, t.networks.c.project_id,
                                     t.networks.c.name)
                           .where(t.networks.c.id == net_id)).first()
        visible = row is not None and (ctx.is_admin or row.project_id == ctx.project_id
                                       or bool(shared_ids(conn, ctx.project_id, [net_id])))
        if not visible:
            raise errors.InvalidInput(error_message=f"Network {net_id} could not be found")
        if not ctx.is_admin and row.project_id != ctx.project_id:
            raise errors.InvalidInput(error_message="Only admins can manipulate policies "
                                                    "on networks they do not own")
        return row

    def _check_action(self, object_type: str, action: str) -> None:
        valid = self.actions.get(object_type, ())
        if action not in valid:
            raise errors.InvalidActionForType(action=action, object_type=object_type,
                                       valid_actions=repr(tuple(valid)))

    def create(self, conn: Connection, ctx: Context, data: dict[str, Any]) -> str:
        self._check_action(data["object_type"], data["action"])
        self._network(conn, ctx, data["object_id"])
        rid = add_entry(conn, data["project_id"], data["object_id"], data["target_tenant"],
                        data["action"])
        store.bump(conn, t.networks, data["object_id"])
        return rid

    def get(self, conn: Connection, rid: str) -> dict[str, Any]:
        return _to_dict(store.get_row(conn, t.networkrbacs, rid, lambda: self._not_found(rid)))

    def list(self, conn: Connection, ctx: Context,
             query: store.ListQuery) -> tuple[list[dict[str, Any]], bool]:
        special = {"object_type": lambda vals: None if "network" in vals else sa.false()}
        clauses = store.column_clauses(t.networkrbacs, query.filters, special)
        if not ctx.is_admin:
            clauses.append(rb.project_id == ctx.project_id)
        rows, more = store.paged_select(conn, t.networkrbacs, clauses, query)
        return [_to_dict(r) for r in rows], more

    def update(self, conn: Connection, ctx: Context, rid: str, data: dict[str, Any],
               revision: int | None) -> None:
        row = store.get_row(conn, t.networkrbacs, rid, lambda: self._not_found(rid),
                            for_update=True)
        new = data.get("target_tenant", row.target_tenant)
        if new == row.target_tenant:
            return
        self._check_removal(conn, row)
        try:
            with conn.begin_nested():
                conn.execute(sa.update(t.networkrbacs).where(rb.id == rid)
                             .values(target_tenant=new))
        except sa_exc.IntegrityError:
            raise errors.DuplicateRbacPolicy() from None
        store.bump(conn, t.networks, row.object_id)

    def delete(self, conn: Connection, rid: str, revision: int | None) -> None:
        row = store.get_row(conn, t.networkrbacs, rid, lambda: self._not_found(rid),
                            for_update=True)
        self._check_removal(conn, row)
        conn.execute(sa.delete(t.networkrbacs).where(rb.id == rid))
        store.bump(conn, t.networks, row.object_id)

    def _check_removal(self, conn: Connection, row: Any) -> None:
        if row.action != ACCESS_AS_SHARED:
            return
        # Lock the network: a port created meanwhile would escape the check.
        net = store.get_row(conn, t.networks, row.object_id,
                            lambda: self._not_found(row.id), for_update=True)
        if dependent_port(conn, net.id, net.project_id, row.target_tenant, [row.id]):
            raise errors.RbacPolicyInUse(
                object_id=net.id,
                details=f"Unable to reconfigure sharing settings for network {net.id}. "
                        f"Multiple projects are using it.")

"""Address scopes, and the rules they impose on subnet pools and subnets.

A scope is a set of subnet pools of one IP version whose prefixes never
overlap. A pool joins a scope its caller can use (its own, or one shared
with it) when the versions match and no other pool of the scope holds any
of its prefixes. Subnets of one IP version on one network all live in one
scope; a network shows that scope as ``ipv4_address_scope`` /
``ipv6_address_scope``. All of it as upstream, in set operations and one
query per question.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import netaddr
import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import rbac, store
from neutrino.plugins.handler import Handler

KIND = "address_scope"
sc = t.address_scopes.c
sp = t.subnetpools.c
sn = t.subnets.c


def not_found(scope_id: str) -> errors.AddressScopeNotFound:
    return errors.AddressScopeNotFound(address_scope_id=scope_id)


def _to_dict(row: Any) -> dict[str, Any]:
    return {"id": row.id, "name": row.name, "project_id": row.project_id,
            "tenant_id": row.project_id, "ip_version": row.ip_version, "shared": False}


def _shared_with_all(conn: Connection, scope_id: str) -> bool:
    e = t.addressscoperbacs.c
    return conn.execute(sa.select(e.id).where(
        e.object_id == scope_id, e.action == rbac.ACCESS_AS_SHARED,
        e.target_tenant == rbac.WILDCARD).limit(1)).first() is not None


class AddressScopes(Handler):
    """The ``address_scopes`` collection, with the core collections' interface."""

    table = t.address_scopes

    def create(self, conn: Connection, ctx: Context, data: dict[str, Any]) -> str:
        rid = data.get("id") or store.new_id()
        project = data.get("project_id") or ctx.project_id
        conn.execute(sa.insert(t.address_scopes).values(
            id=rid, project_id=project, name=data.get("name") or "",
            ip_version=data["ip_version"]))
        if data.get("shared"):
            rbac.share_with_all(conn, rid, project, KIND)
        return rid

    def get_for(self, conn: Connection, scope_id: str, ctx: Context | None) -> dict[str, Any]:
        """The scope as ``ctx`` sees it (None: an internal load), its
        sharing read with its row."""
        return rbac.shown(conn, ctx, KIND, t.address_scopes, scope_id,
                          lambda: not_found(scope_id),
                          lambda conn, rows: [_to_dict(r) for r in rows])

    def list(self, conn: Connection, ctx: Context,
             query: store.ListQuery) -> tuple[list[dict[str, Any]], bool]:
        special = {"shared": lambda vals: rbac.bool_filter(ctx.project_id, sc.id, vals, KIND)}
        clauses = store.column_clauses(t.address_scopes, query.filters, special)
        scope = rbac.visible_clause(ctx, KIND)
        if scope is not None:
            clauses.append(scope)
        rows, more = store.paged_select(conn, t.address_scopes, clauses, query)
        return self.present(conn, ctx, [_to_dict(r) for r in rows]), more

    def present(self, conn: Connection, ctx: Context | None,
                dicts: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``shared`` as this caller sees it."""
        return rbac.present(conn, ctx, dicts, KIND)

    def update(self, conn: Connection, ctx: Context, scope_id: str, data: dict[str, Any],
               revision: int | None) -> None:
        row = store.get_row(conn, t.address_scopes, scope_id, lambda: not_found(scope_id),
                            for_update=True)
        if data.get("shared") is False and _shared_with_all(conn, scope_id):
            raise errors.AddressScopeUpdateError(
                address_scope_id=scope_id, reason="Shared address scope can't be unshared")
        if data.get("shared"):
            rbac.share_with_all(conn, scope_id, row.project_id, KIND)
        if "name" in data:
            conn.execute(sa.update(t.address_scopes).where(sc.id == scope_id)
                         .values(name=data["name"] or ""))

    def delete(self, conn: Connection, scope_id: str, revision: int | None) -> None:
        store.get_row(conn, t.address_scopes, scope_id, lambda: not_found(scope_id),
                      for_update=True)
        if conn.execute(sa.select(sp.id).where(sp.address_scope_id == scope_id)
                        .limit(1)).first() is not None:
            raise errors.AddressScopeInUse(address_scope_id=scope_id)
        conn.execute(sa.delete(t.addressscoperbacs)
                     .where(t.addressscoperbacs.c.object_id == scope_id))
        conn.execute(sa.delete(t.address_scopes).where(sc.id == scope_id))


# -- subnet pools in scopes ----------------------------------------------------------

def _usable(conn: Connection, ctx: Context, row: Any) -> bool:
    return bool(ctx.is_admin or row.project_id == ctx.project_id
                or rbac.shared_ids(conn, ctx.project_id, [row.id], KIND))


def check_association(conn: Connection, ctx: Context, scope_id: str | None, pool_id: str,
                      prefixes: Sequence[str], version: int) -> None:
    """May pool ``pool_id`` (with ``prefixes``) be in scope ``scope_id``?

    A scope the caller cannot see does not exist for it (404); a version
    mismatch, networks left with subnets in two scopes, and overlapping
    prefixes are refused.
    """
    if scope_id is None:
        return
    row = store.get_row(conn, t.address_scopes, scope_id, lambda: not_found(scope_id))
    if not _usable(conn, ctx, row):
        # What callers may use is what they may see; upstream's
        # ``IllegalSubnetPoolAssociationToAddressScope`` never shows.
        raise not_found(scope_id)
    if row.ip_version != version:
        raise errors.IllegalSubnetPoolIpVersionAssociationToAddressScope(
            subnetpool_id=pool_id, address_scope_id=scope_id, ip_version=row.ip_version)
    _check_network_affinity(conn, pool_id, version)
    check_prefixes(conn, scope_id, pool_id, prefixes)


def check_prefixes(conn: Connection, scope_id: str | None, pool_id: str,
                   prefixes: Sequence[str]) -> None:
    """No other pool of the scope may hold any of ``prefixes``."""
    if scope_id is None:
        return
    theirs = [r.cidr for r in conn.execute(
        sa.select(t.subnetpool_prefixes.c.cidr)
        .join(t.subnetpools, sp.id == t.subnetpool_prefixes.c.subnetpool_id)
        .where(sp.address_scope_id == scope_id, sp.id != pool_id))]
    if theirs and netaddr.IPSet(theirs) & netaddr.IPSet(prefixes):
        raise errors.AddressScopePrefixConflict()


def _check_network_affinity(conn: Connection, pool_id: str, version: int) -> None:
    """Rescoping a pool must not split a network's subnets across scopes:
    no network with a subnet from this pool may have another subnet of the
    version that does not come from it."""
    networks = sa.select(sn.network_id).where(sn.subnetpool_id == pool_id)
    other = conn.execute(sa.select(sn.id).where(
        sn.network_id.in_(networks), sn.ip_version == version,
        sa.or_(sn.subnetpool_id.is_(None), sn.subnetpool_id != pool_id)).limit(1)).first()
    if other is not None:
        raise errors.NetworkAddressScopeAffinityError()


def check_pool_update_allowed(conn: Connection, ctx: Context, pool_id: str,
                              scope_id: str | None) -> None:
    """A pool in another project's (shared) scope is only changed by admins."""
    if scope_id is None or ctx.is_admin:
        return
    owner = conn.execute(sa.select(sc.project_id).where(sc.id == scope_id)).first()
    if owner is not None and owner.project_id != ctx.project_id:
        raise errors.IllegalSubnetPoolUpdate(
            reason=f"subnetpool {pool_id} cannot be updated when associated with shared "
                   f"address scope {scope_id}")


# -- networks and their subnets ---------------------------------------------------------

def check_network_subnetpools(conn: Connection, network_id: str, version: int,
                              pool_id: str | None, siblings: Sequence[Any] | None = None) -> None:
    """A new subnet of ``version`` from ``pool_id`` (None: an explicit CIDR)
    keeps the network's subnets of a version in one pool, or in one scope.

    ``siblings``: the network's subnets (``subnetpool_id``, ``ip_version``)
    when the caller has read them already; their pools and the new one are
    then one query, none when no pool is involved."""
    if siblings is None:
        siblings = conn.execute(sa.select(sn.subnetpool_id, sn.ip_version)
                                .where(sn.network_id == network_id)).all()
    wanted = {s.subnetpool_id for s in siblings if s.subnetpool_id}
    if pool_id is not None:
        wanted.add(pool_id)
    pools = {r.id: r for r in conn.execute(
        sa.select(sp.id, sp.ip_version, sp.address_scope_id).where(sp.id.in_(wanted)))} \
        if wanted else {}
    scopes: dict[int, str] = {}
    for sibling in siblings:
        found = pools.get(sibling.subnetpool_id)
        if found is not None and found.address_scope_id is not None:
            scopes[found.ip_version] = found.address_scope_id
    network_scope = scopes.get(version)
    pool = pools.get(pool_id) if pool_id is not None else None
    if network_scope and pool is not None and pool.address_scope_id != network_scope:
        raise errors.NetworkAddressScopeAffinityError()
    for row in siblings:
        if pool is not None:
            if (row.subnetpool_id != pool.id and row.ip_version == pool.ip_version
                    and not network_scope):
                raise errors.NetworkSubnetPoolAffinityError()
        elif row.subnetpool_id and row.ip_version == version:
            raise errors.NetworkSubnetPoolAffinityError()

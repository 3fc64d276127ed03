"""Address groups: named sets of CIDRs that rules use as their remote.

Addresses are normalised to their network (``10.0.0.1/24`` is
``10.0.0.0/24``) and change only through the ``add_addresses`` and
``remove_addresses`` actions: adding one already there, or removing one
that is not, changes nothing and says which. A group that a rule names
cannot be deleted. Groups are shared by RBAC entries (``rbac-address-group``):
``shared`` is per caller and hidden, read by policy only; a project may name
a group shared with it as a rule's remote.
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
from neutrino.plugins.handler import ActionWork, Handler

AG = t.address_groups
KIND = "address_group"
ADDR = t.address_associations


def not_found(ag_id: str) -> errors.AddressGroupNotFound:
    return errors.AddressGroupNotFound(address_group_id=ag_id)


def _ordered(addresses: list[str]) -> list[str]:
    return sorted(addresses, key=lambda a: (netaddr.IPNetwork(a).version, netaddr.IPNetwork(a)))


def to_dicts(conn: Connection, rows: Sequence[Any],
             ctx: Context | None = None) -> list[dict[str, Any]]:
    """Groups with ``shared`` as ``ctx`` sees it (no caller: ``*`` only)."""
    return rbac.present(conn, ctx, _dicts(conn, rows), KIND)


def _dicts(conn: Connection, rows: Sequence[Any]) -> list[dict[str, Any]]:
    addrs = store.children(conn, ADDR, "address_group_id", [r.id for r in rows])
    out = []
    for row in rows:
        d = store.standard_dict(row)
        d["addresses"] = _ordered([a.address for a in addrs.get(row.id, [])])
        out.append(d)
    return out


class AddressGroups(Handler):
    table = AG

    def create(self, conn: Connection, ctx: Context, data: dict[str, Any]) -> str:
        row = store.standard_row(ctx.project_id, data)
        conn.execute(sa.insert(AG).values(**row))
        given = data.get("addresses")
        if isinstance(given, list) and given:
            self._add(conn, row["id"], given)
        return row["id"]

    def get_for(self, conn: Connection, ag_id: str, ctx: Context | None) -> dict[str, Any]:
        """The group as ``ctx`` sees it (None: an internal load), its
        sharing read with its row."""
        return rbac.shown(conn, ctx, KIND, AG, ag_id, lambda: not_found(ag_id), _dicts)

    def list(self, conn: Connection, ctx: Context,
             query: store.ListQuery) -> tuple[list[dict[str, Any]], bool]:
        clauses = store.column_clauses(AG, query.filters, {})
        scope = rbac.visible_clause(ctx, KIND)
        if scope is not None:
            clauses.append(scope)
        rows, more = store.paged_select(conn, AG, clauses, query)
        return to_dicts(conn, rows, ctx), more

    def update(self, conn: Connection, ctx: Context, ag_id: str, data: dict[str, Any],
               revision: int | None) -> None:
        store.get_row(conn, AG, ag_id, lambda: not_found(ag_id), for_update=True)
        store.check_revision(conn, AG, ag_id, revision)
        store.bump(conn, AG, ag_id, {k: data[k] for k in ("name", "description") if k in data})

    def delete(self, conn: Connection, ag_id: str, revision: int | None) -> None:
        used = conn.execute(sa.select(t.securitygrouprules.c.id).where(
            t.securitygrouprules.c.remote_address_group_id == ag_id).limit(1)).first()
        if used is not None:
            raise errors.AddressGroupInUse(address_group_id=ag_id)
        store.get_row(conn, AG, ag_id, lambda: not_found(ag_id), for_update=True)
        store.check_revision(conn, AG, ag_id, revision)
        conn.execute(sa.delete(AG).where(AG.c.id == ag_id))

    # -- actions ----------------------------------------------------------------------

    def action(self, ctx: Context, rid: str, name: str, body: Any) -> ActionWork:
        """``add_addresses`` / ``remove_addresses``: the body is checked in the
        transaction, with the group's row."""
        return lambda conn: self._change_addresses(conn, ctx, rid, name, body)

    def _change_addresses(self, conn: Connection, ctx: Context, ag_id: str, name: str,
                          body: Any) -> dict[str, Any]:
        """``add_addresses`` / ``remove_addresses`` with ``{"addresses": [...]}``."""
        wanted = body.get("addresses") if isinstance(body, dict) else None
        if not isinstance(wanted, list):
            raise errors.HTTPBadRequest(msg="Request body contains invalid data")
        cidrs = []
        for item in wanted:
            try:
                cidrs.append(str(netaddr.IPNetwork(str(item)).cidr))
            except (netaddr.AddrFormatError, ValueError, TypeError):
                raise errors.HTTPBadRequest(msg=f"invalid IPNetwork {item}") from None
        store.get_row(conn, AG, ag_id, lambda: not_found(ag_id), for_update=True)
        if name == "add_addresses":
            self._add(conn, ag_id, cidrs)
        else:
            self._remove(conn, ag_id, cidrs)
        row = store.get_row(conn, AG, ag_id, lambda: not_found(ag_id))
        return {"address_group": to_dicts(conn, [row], ctx)[0]}

    def _current(self, conn: Connection, ag_id: str) -> set[str]:
        return {r.address for r in conn.execute(
            sa.select(ADDR.c.address).where(ADDR.c.address_group_id == ag_id))}

    def _add(self, conn: Connection, ag_id: str, cidrs: list[str]) -> None:
        wanted = set(cidrs)
        present = sorted(wanted & self._current(conn, ag_id))
        if present:
            raise errors.AddressesAlreadyExist(addresses=present, address_group_id=ag_id)
        conn.execute(sa.insert(ADDR), [{"address_group_id": ag_id, "address": a}
                                       for a in sorted(wanted)])
        store.bump(conn, AG, ag_id)

    def _remove(self, conn: Connection, ag_id: str, cidrs: list[str]) -> None:
        wanted = set(cidrs)
        missing = sorted(wanted - self._current(conn, ag_id))
        if missing:
            raise errors.AddressesNotFound(addresses=missing, address_group_id=ag_id)
        conn.execute(sa.delete(ADDR).where(ADDR.c.address_group_id == ag_id,
                                           ADDR.c.address.in_(sorted(wanted))))
        store.bump(conn, AG, ag_id)

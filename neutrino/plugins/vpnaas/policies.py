"""``ikepolicies`` and ``ipsecpolicies``: the two phases' algorithms.

A policy named by a site connection cannot change or go (upstream refuses
even a rename then: the agents would have to renegotiate). ``lifetime`` is
stored as its two columns; an update changes only the keys it gives.
"""
from __future__ import annotations

import abc
from typing import Any, Sequence

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins.table_collection import TableCollection
from neutrino.plugins.vpnaas import exceptions as exc
from neutrino.plugins.vpnaas import rows
from neutrino.resources import vpnaas as res

C = t.ipsec_site_connections


def _lifetime(row: Any) -> dict[str, Any]:
    return {"units": row.lifetime_units, "value": row.lifetime_value}


def _as_given(shown: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """A create's or update's answer shows the lifetime value as the request
    spelled it (``"2000"``), as upstream's does; reads show the integer."""
    given = (data.get("lifetime") or {}).get("value")
    if given:
        shown["lifetime"]["value"] = given
    return shown


class _Policies(TableCollection):
    """One policy collection: ``table``, its columns, its errors."""

    columns: tuple[str, ...]
    used_by: Any  # the connections' column naming the policy

    @abc.abstractmethod
    def in_use(self, rid: str) -> Exception:
        """The collection's 409 while a connection names the policy."""

    def check(self, data: dict[str, Any]) -> None:
        """What the driver refuses (nothing, unless a subclass says)."""

    def to_dict(self, row: Any) -> dict[str, Any]:
        return {**rows.named(row), **{c: getattr(row, c) for c in self.columns},
                "lifetime": _lifetime(row)}

    def to_dicts(self, conn: Connection, found: Sequence[Any]) -> list[dict[str, Any]]:
        return [self.to_dict(r) for r in found]

    def create(self, ctx: Context, plural: str,
               items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for item in items:
            self.check(item)

        def op(conn: Connection) -> list[dict[str, Any]]:
            out = []
            for item in items:
                life = {**res.LIFETIME_DEFAULT, **(item.get("lifetime") or {})}
                row = {**rows.new_row(ctx, item), **{c: item[c] for c in self.columns},
                       "lifetime_units": life["units"], "lifetime_value": int(life["value"])}
                conn.execute(sa.insert(self.table).values(**row))
                out.append(_as_given(self.to_dict(self.row(conn, Context.admin(), row["id"])),
                                     item))
            return out
        return self.plugin.core.write(op)  # type: ignore[no-any-return]

    def update(self, ctx: Context, plural: str, rid: str, data: dict[str, Any],
               revision: int | None = None) -> dict[str, Any]:
        self.check(data)

        def op(conn: Connection) -> dict[str, Any]:
            self._refuse_in_use(conn, rid)
            self.row(conn, ctx, rid, for_update=True)
            values = {k: data[k] for k in ("name", "description", *self.columns) if k in data}
            life = data.get("lifetime") or {}
            if life.get("units"):
                values["lifetime_units"] = life["units"]
            if life.get("value"):
                values["lifetime_value"] = int(life["value"])
            if values:
                conn.execute(sa.update(self.table).where(self.table.c.id == rid).values(**values))
            return _as_given(self.to_dict(self.row(conn, ctx, rid)), data)
        return self.plugin.core.write(op)  # type: ignore[no-any-return]

    def delete(self, ctx: Context, plural: str, rid: str, revision: int | None = None) -> None:
        def op(conn: Connection) -> None:
            self._refuse_in_use(conn, rid)
            self.row(conn, ctx, rid, for_update=True)
            conn.execute(sa.delete(self.table).where(self.table.c.id == rid))
        self.plugin.core.write(op)

    def _refuse_in_use(self, conn: Connection, rid: str) -> None:
        if conn.execute(sa.select(C.c.id).where(self.used_by == rid).limit(1)).first():
            raise self.in_use(rid)


class IkePolicies(_Policies):
    table = t.vpn_ikepolicies
    columns = ("auth_algorithm", "encryption_algorithm", "phase1_negotiation_mode",
               "ike_version", "pfs")
    used_by = C.c.ikepolicy_id

    def not_found(self, rid: str) -> Exception:
        return exc.IKEPolicyNotFound(ikepolicy_id=rid)

    def in_use(self, rid: str) -> Exception:
        return exc.IKEPolicyInUse(ikepolicy_id=rid)


class IpsecPolicies(_Policies):
    table = t.vpn_ipsecpolicies
    columns = ("transform_protocol", "auth_algorithm", "encryption_algorithm",
               "encapsulation_mode", "pfs")
    used_by = C.c.ipsecpolicy_id

    def not_found(self, rid: str) -> Exception:
        return exc.IPsecPolicyNotFound(ipsecpolicy_id=rid)

    def in_use(self, rid: str) -> Exception:
        return exc.IPsecPolicyInUse(ipsecpolicy_id=rid)

    def check(self, data: dict[str, Any]) -> None:
        """strongSwan (upstream's IPsec drivers too) cannot bundle AH and ESP."""
        if data.get("transform_protocol") == "ah-esp":
            raise exc.IpsecValidationFailure(resource="IPsec Policy", key="transform_protocol",
                                             value="ah-esp")

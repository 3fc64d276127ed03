"""``local_ips``: a local IP and the port holding its address.

Given only a network, the local IP gets a port of its own (device owner
``network:local_ip``, no port security, the local IP's project), made
before the local IP and deleted after it; a given port is used as it is and
stays. Neither port may be deleted through the ports API while its local
IP exists (``plugin``).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import netaddr
import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import rbac, store
from neutrino.plugins.local_ip import associations as assoc
from neutrino.plugins.table_collection import TableCollection
from neutrino.resources import local_ip as res

L = t.local_ips
UPDATABLE = ("name", "description")


def _not_found(lip_id: str) -> Callable[[], Exception]:
    return lambda: errors.LocalIPNotFound(id=lip_id)


def to_dict(row: Any) -> dict[str, Any]:
    return {**store.standard_dict(row), "local_port_id": row.local_port_id,
            "network_id": row.network_id, "local_ip_address": row.local_ip_address,
            "ip_mode": row.ip_mode}


class LocalIps(TableCollection):
    """The ``local_ips`` collection."""

    table = L

    @property
    def core(self) -> Any:
        return self.plugin.core

    # -- reading -------------------------------------------------------------------

    def not_found(self, rid: str) -> Exception:
        return _not_found(rid)()

    def to_dicts(self, conn: Connection, rows: Sequence[Any]) -> list[dict[str, Any]]:
        return [to_dict(r) for r in rows]

    # -- writing -------------------------------------------------------------------

    def create(self, ctx: Context, plural: str,
               items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [self._create_one(ctx, item) for item in items]

    def _create_one(self, ctx: Context, item: dict[str, Any]) -> dict[str, Any]:
        row = store.standard_row(ctx.project_id, item, revision=0)
        row["ip_mode"] = item.get("ip_mode") or res.TRANSLATE
        made_port = None
        if item.get("local_port_id"):
            port_id = item["local_port_id"]
            with self.plugin.db.reader() as conn:
                port = assoc.own_port(conn, ctx, port_id, "local_ip")
                address = assoc.chosen_ip(port_id, assoc.port_ips(conn, port_id),
                                          item.get("local_ip_address"))
            row.update(local_port_id=port_id, network_id=port.network_id,
                       local_ip_address=address)
        elif item.get("network_id"):
            made_port = self._local_port(ctx, row, item["network_id"],
                                         item.get("local_ip_address"))
            v4 = [i["ip_address"] for i in made_port["fixed_ips"]
                  if netaddr.IPAddress(i["ip_address"]).version == 4]
            row.update(local_port_id=made_port["id"], network_id=made_port["network_id"],
                       local_ip_address=(v4 or [made_port["fixed_ips"][0]["ip_address"]])[0])
        else:
            raise errors.LocalIPPortOrNetworkRequired()
        try:
            return self.core.write(lambda conn: self._insert(conn, ctx, row))  # type: ignore[no-any-return]
        except Exception:
            if made_port is not None:
                self.core.delete(Context.admin(), "ports", made_port["id"])
            raise

    def _insert(self, conn: Connection, ctx: Context, row: dict[str, Any]) -> dict[str, Any]:
        conn.execute(sa.insert(L).values(**row))
        return to_dict(self.row(conn, Context.admin(), row["id"]))

    def _local_port(self, ctx: Context, row: dict[str, Any], network_id: str,
                    address: str | None) -> dict[str, Any]:
        """The local IP's own port, on a network the caller sees with an IPv4
        subnet (upstream's checks), its address the one asked for if any."""
        with self.plugin.db.reader() as conn:
            seen = rbac.network_visible_clause(ctx)
            found = conn.execute(sa.select(t.networks.c.id).where(
                t.networks.c.id == network_id, *([] if seen is None else [seen]))).first()
            if found is None:
                raise errors.NetworkNotFound(net_id=network_id)
            versions = {r.ip_version for r in conn.execute(
                sa.select(t.subnets.c.ip_version).where(t.subnets.c.network_id == network_id))}
        if 4 not in versions:
            raise errors.BadRequest(resource="local_ip",
                                    msg=f"Network {network_id} does not contain any IPv4 subnet")
        port: dict[str, Any] = self.core.create(Context.admin(), "ports", [{
            "project_id": row["project_id"], "network_id": network_id, "name": "",
            "admin_state_up": True, "device_id": row["id"],
            "device_owner": res.DEVICE_OWNER, "port_security_enabled": False,
            "fixed_ips": [{"ip_address": address}] if address else None}])[0]
        return port

    def update(self, ctx: Context, plural: str, rid: str, data: dict[str, Any],
               revision: int | None = None) -> dict[str, Any]:
        values = {k: data[k] for k in UPDATABLE if k in data}

        def op(conn: Connection) -> dict[str, Any]:
            self.row(conn, ctx, rid, for_update=True)
            store.bump(conn, L, rid, values, revision)
            return to_dict(self.row(conn, ctx, rid))
        return self.core.write(op)  # type: ignore[no-any-return]

    def delete(self, ctx: Context, plural: str, rid: str, revision: int | None = None) -> None:
        def op(conn: Connection) -> Any:
            row = self.row(conn, ctx, rid, for_update=True)
            used = conn.execute(sa.select(t.local_ip_associations.c.fixed_port_id).where(
                t.local_ip_associations.c.local_ip_id == rid).limit(1)).first()
            if used is not None:
                raise errors.LocalIPInUse(id=rid)
            store.check_revision(conn, L, rid, revision)
            conn.execute(sa.delete(L).where(L.c.id == rid))
            owner = conn.execute(sa.select(t.ports.c.device_owner).where(
                t.ports.c.id == row.local_port_id)).scalar()
            return row.local_port_id if owner == res.DEVICE_OWNER else None
        own_port = self.core.write(op)
        if own_port is not None:
            self.core.delete(Context.admin(), "ports", own_port)

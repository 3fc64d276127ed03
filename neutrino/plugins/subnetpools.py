"""Subnet pools: prefixes, prefix-length bounds, and carving subnets out."""
from __future__ import annotations

from typing import Any, Sequence

import netaddr
import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import address_scopes, networks, rbac, store
from neutrino.plugins.handler import ActionWork, Handler
from neutrino.resources import validators as v

DEFAULT_MIN = {4: 8, 6: 64}
MAX_LEN = {4: 32, 6: 128}


def not_found(pool_id: str) -> errors.SubnetPoolNotFound:
    return errors.SubnetPoolNotFound(subnetpool_id=pool_id)


def visible_clause(ctx: Context) -> Any:
    """Pools the caller may see: its own and those shared with it by RBAC."""
    return rbac.visible_clause(ctx, "subnetpool")


def visible_to(conn: Connection, ctx: Context, row: Any) -> bool:
    return bool(ctx.is_admin or row.project_id == ctx.project_id
                or rbac.shared_ids(conn, ctx.project_id, [row.id], "subnetpool"))


def compact(prefixes: Sequence[str]) -> list[str]:
    return [str(c) for c in netaddr.cidr_merge([netaddr.IPNetwork(p) for p in prefixes])]


def _version(prefixes: Sequence[str]) -> int:
    versions = {netaddr.IPNetwork(p).version for p in prefixes}
    if len(versions) != 1:
        raise errors.PrefixVersionMismatch()
    return versions.pop()


def _check_bounds(version: int, min_len: int, default_len: int, max_len: int) -> None:
    top = MAX_LEN[version]
    for name, value in (("min_prefixlen", min_len), ("default_prefixlen", default_len),
                        ("max_prefixlen", max_len)):
        if value > top:
            raise errors.IllegalSubnetPoolPrefixBounds(
                prefix_type=name, prefixlen=value, base_prefix_type="max_prefixlen",
                base_prefixlen=top)
    if min_len > max_len:
        raise errors.IllegalSubnetPoolPrefixBounds(
            prefix_type="min_prefixlen", prefixlen=min_len,
            base_prefix_type="max_prefixlen", base_prefixlen=max_len)
    if default_len < min_len:
        raise errors.IllegalSubnetPoolPrefixBounds(
            prefix_type="default_prefixlen", prefixlen=default_len,
            base_prefix_type="min_prefixlen", base_prefixlen=min_len)
    if default_len > max_len:
        raise errors.IllegalSubnetPoolPrefixBounds(
            prefix_type="default_prefixlen", prefixlen=default_len,
            base_prefix_type="max_prefixlen", base_prefixlen=max_len)


PREFIXLENS = ("default_prefixlen", "min_prefixlen", "max_prefixlen")


def as_shown(dicts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The prefix lengths as upstream shows them to a caller: text (``"24"``)
    in a create's, show's and list's answer, where upstream reads its row
    back; an update answers with integers (upstream echoes the updated
    object), and internal loads keep the integers the rules compare."""
    for d in dicts:
        for key in PREFIXLENS:
            if d.get(key) is not None:
                d[key] = str(d[key])
    return dicts


def to_dicts(conn: Connection, rows: Sequence[Any]) -> list[dict[str, Any]]:
    ids = [r.id for r in rows]
    tags = store.load_tags(conn, ids)
    prefixes = store.children(conn, t.subnetpool_prefixes, "subnetpool_id", ids)
    out = []
    for row in rows:
        d = store.standard_dict(row)
        d.update(ip_version=row.ip_version, default_prefixlen=row.default_prefixlen,
                 min_prefixlen=row.min_prefixlen, max_prefixlen=row.max_prefixlen,
                 default_quota=row.default_quota, shared=False,
                 is_default=row.is_default, address_scope_id=row.address_scope_id,
                 prefixes=sorted((p.cidr for p in prefixes.get(row.id, [])),
                                 key=lambda c: netaddr.IPNetwork(c)),
                 tags=tags.get(row.id, []))
        out.append(d)
    return out


class SubnetPools(Handler):
    table = t.subnetpools

    def create(self, conn: Connection, ctx: Context, data: dict[str, Any]) -> str:
        prefixes = compact(data["prefixes"]) if data.get("prefixes") else []
        if not prefixes:
            raise errors.InvalidInput(error_message="Invalid input for prefixes. "
                                      "Reason: a subnet pool needs at least one prefix.")
        version = _version(prefixes)
        min_len = data.get("min_prefixlen")
        min_len = DEFAULT_MIN[version] if min_len is None else min_len
        max_len = data.get("max_prefixlen")
        max_len = MAX_LEN[version] if max_len is None else max_len
        default_len = data.get("default_prefixlen")
        default_len = min_len if default_len is None else default_len
        _check_bounds(version, min_len, default_len, max_len)
        if data.get("is_default"):
            self._check_single_default(conn, version, None)
        row = store.standard_row(ctx.project_id, data, revision=0)
        scope_id = data.get("address_scope_id")
        address_scopes.check_association(conn, ctx, scope_id, row["id"], prefixes, version)
        row.update(ip_version=version, default_prefixlen=default_len, min_prefixlen=min_len,
                   max_prefixlen=max_len, default_quota=data.get("default_quota"),
                   is_default=bool(data.get("is_default")), address_scope_id=scope_id)
        conn.execute(sa.insert(t.subnetpools).values(**row))
        if data.get("shared"):
            rbac.share_with_all(conn, row["id"], row["project_id"], "subnetpool")
        conn.execute(sa.insert(t.subnetpool_prefixes),
                     [{"subnetpool_id": row["id"], "cidr": c} for c in prefixes])
        if data.get("tags"):
            store.tag_new(conn, row["id"], data["tags"])
        return row["id"]

    def _check_single_default(self, conn: Connection, version: int, pool_id: str | None) -> None:
        stmt = sa.select(t.subnetpools.c.id).where(t.subnetpools.c.is_default.is_(True),
                                                   t.subnetpools.c.ip_version == version)
        if pool_id:
            stmt = stmt.where(t.subnetpools.c.id != pool_id)
        if conn.execute(stmt.limit(1)).first() is not None:
            raise errors.InvalidInput(error_message="A default subnetpool for this IP "
                                                    "family has already been set. Only one "
                                                    "default may exist per IP family")

    def get(self, conn: Connection, pool_id: str) -> dict[str, Any]:
        """Without ``shared`` (the pool's own rules need none)."""
        row = store.get_row(conn, t.subnetpools, pool_id, lambda: not_found(pool_id))
        return to_dicts(conn, [row])[0]

    def get_for(self, conn: Connection, pool_id: str, ctx: Context | None) -> dict[str, Any]:
        """The pool as ``ctx`` sees it (None: an internal load), its sharing
        read with its row."""
        shown = rbac.shown(conn, ctx, "subnetpool", t.subnetpools, pool_id,
                           lambda: not_found(pool_id), to_dicts)
        return shown if ctx is None else as_shown([shown])[0]

    def list(self, conn: Connection, ctx: Context, query: store.ListQuery) -> tuple[list[dict[str, Any]], bool]:
        special = {"shared": lambda vals: rbac.bool_filter(
            ctx.project_id, t.subnetpools.c.id, vals, "subnetpool")}
        clauses = store.column_clauses(t.subnetpools, query.filters, special)
        scope = visible_clause(ctx)
        if scope is not None:
            clauses.append(scope)
        rows, more = store.paged_select(conn, t.subnetpools, clauses, query)
        return as_shown(self.present(conn, ctx, to_dicts(conn, rows))), more

    def present(self, conn: Connection, ctx: Context | None,
                dicts: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``shared`` as this caller sees it, as for networks."""
        return rbac.present(conn, ctx, dicts, "subnetpool")

    def update(self, conn: Connection, ctx: Context, pool_id: str, data: dict[str, Any],
               revision: int | None) -> None:
        current = self.get(conn, pool_id)
        version = current["ip_version"]
        address_scopes.check_pool_update_allowed(conn, ctx, pool_id, current["address_scope_id"])
        values = {k: data[k] for k in ("name", "description", "default_quota", "is_default",
                                       "address_scope_id") if k in data}
        bounds = {k: (data[k] if data.get(k) is not None else current[k])
                  for k in ("min_prefixlen", "default_prefixlen", "max_prefixlen")}
        _check_bounds(version, bounds["min_prefixlen"], bounds["default_prefixlen"],
                      bounds["max_prefixlen"])
        values.update({k: v for k, v in bounds.items() if k in data})
        if data.get("is_default"):
            self._check_single_default(conn, version, pool_id)
        new = current["prefixes"]
        if "prefixes" in data:
            new = compact(data["prefixes"])
            if _version(new) != version:
                raise errors.PrefixVersionMismatch()
            old = netaddr.IPSet(current["prefixes"])
            if not old.issubset(netaddr.IPSet(new)):
                raise errors.IllegalSubnetPoolPrefixUpdate(
                    msg="Existing prefixes must be a subset of the new prefixes")
        address_scopes.check_association(
            conn, ctx, data.get("address_scope_id", current["address_scope_id"]), pool_id,
            new, version)
        if "prefixes" in data:
            self._replace_prefixes(conn, pool_id, new)
        store.bump(conn, t.subnetpools, pool_id, values, revision)

    def _replace_prefixes(self, conn: Connection, pool_id: str, prefixes: list[str]) -> None:
        conn.execute(sa.delete(t.subnetpool_prefixes)
                     .where(t.subnetpool_prefixes.c.subnetpool_id == pool_id))
        if prefixes:  # upstream lets the last prefix go
            conn.execute(sa.insert(t.subnetpool_prefixes),
                         [{"subnetpool_id": pool_id, "cidr": c} for c in prefixes])

    def action(self, ctx: Context, rid: str, name: str, body: Any) -> ActionWork:
        """``add_prefixes`` / ``remove_prefixes`` with ``{"prefixes": [...]}``,
        the body checked before the transaction opens."""
        if name == "onboard_network_subnets":
            return self._onboard_request(ctx, rid, body)
        change = {"add_prefixes": self.add_prefixes,
                  "remove_prefixes": self.remove_prefixes}.get(name)
        if change is None:
            raise errors.ResourceNotFound()
        prefixes = body.get("prefixes") if isinstance(body, dict) else None
        if not isinstance(prefixes, list):
            raise errors.HTTPBadRequest(msg="Request body contains invalid data")
        try:
            cidrs = v.prefixes(prefixes)
        except v.Invalid as exc:
            raise errors.InvalidInput(error_message=str(exc)) from None
        return lambda conn: {"prefixes": change(conn, rid, cidrs)}

    def add_prefixes(self, conn: Connection, pool_id: str, prefixes: list[str]) -> list[str]:
        current = self.get(conn, pool_id)
        new = compact(current["prefixes"] + list(prefixes))
        if _version(new) != current["ip_version"]:
            raise errors.PrefixVersionMismatch()
        address_scopes.check_prefixes(conn, current["address_scope_id"], pool_id, new)
        self._replace_prefixes(conn, pool_id, new)
        store.bump(conn, t.subnetpools, pool_id)
        return new

    def remove_prefixes(self, conn: Connection, pool_id: str, prefixes: list[str]) -> list[str]:
        current = self.get(conn, pool_id)
        removed = netaddr.IPSet(prefixes)
        used = netaddr.IPSet(r.cidr for r in conn.execute(
            sa.select(t.subnets.c.cidr).where(t.subnets.c.subnetpool_id == pool_id)))
        if used & removed:
            raise errors.IllegalSubnetPoolPrefixUpdate(
                msg="One or more the prefixes to be removed is in use by a subnet.")
        remaining = netaddr.IPSet(current["prefixes"]) - removed
        new = [str(c) for c in remaining.iter_cidrs()]
        self._replace_prefixes(conn, pool_id, new)
        store.bump(conn, t.subnetpools, pool_id)
        return new

    # -- subnet_onboard ----------------------------------------------------------

    def _onboard_request(self, ctx: Context, pool_id: str, body: Any) -> ActionWork:
        network_id = body.get("network_id") if isinstance(body, dict) else None
        if network_id is None:
            raise errors.InvalidInput(error_message="network_id must be specified.")
        return lambda conn: self.onboard(conn, ctx, pool_id, network_id)

    def onboard(self, conn: Connection, ctx: Context, pool_id: str,
                network_id: str) -> list[dict[str, str]]:
        """``subnet_onboard``: a network's subnets of the pool's IP version
        join the pool, their CIDRs added to its prefixes; only the network's
        owner (or an admin) may move its subnets, and none may overlap what
        the pool has handed out already."""
        stmt = sa.select(t.networks.c.project_id).where(t.networks.c.id == network_id)
        scope = networks.visible_clause(ctx)
        owner = conn.execute(stmt if scope is None else stmt.where(scope)).first()
        if owner is None:
            raise errors.NetworkNotFound(net_id=network_id)
        if not ctx.is_admin and owner.project_id != ctx.project_id:
            raise errors.NotAuthorized()
        store.get_row(conn, t.subnetpools, pool_id, lambda: not_found(pool_id),
                      for_update=True)
        pool = self.get(conn, pool_id)
        joining = conn.execute(sa.select(t.subnets.c.id, t.subnets.c.cidr).where(
            t.subnets.c.network_id == network_id,
            t.subnets.c.ip_version == pool["ip_version"])).all()
        allocated = netaddr.IPSet(r.cidr for r in conn.execute(
            sa.select(t.subnets.c.cidr).where(t.subnets.c.subnetpool_id == pool_id)))
        for subnet in joining:
            if netaddr.IPSet([subnet.cidr]) & allocated:
                raise errors.IllegalSubnetPoolUpdate(
                    reason=f"Onboarding subnet {subnet.id}: {subnet.cidr} conflicts with "
                           f"allocated prefixes in subnet pool {pool_id}")
        self.update(conn, ctx, pool_id,
                    {"prefixes": pool["prefixes"] + [s.cidr for s in joining]}, None)
        if joining:
            ids = [s.id for s in joining]
            store.bump_where(conn, t.subnets, t.subnets.c.id.in_(ids),
                             values={"subnetpool_id": pool_id})
        return [{"id": s.id, "cidr": s.cidr} for s in joining]

    def delete(self, conn: Connection, pool_id: str, revision: int | None) -> None:
        store.get_row(conn, t.subnetpools, pool_id, lambda: not_found(pool_id), for_update=True)
        store.check_revision(conn, t.subnetpools, pool_id, revision)
        if conn.execute(sa.select(t.subnets.c.id).where(t.subnets.c.subnetpool_id == pool_id)
                        .limit(1)).first() is not None:
            raise errors.SubnetPoolDeleteError(reason="Subnet pool has existing allocations")
        store.delete_tags(conn, pool_id)
        conn.execute(sa.delete(t.subnetpoolrbacs)
                     .where(t.subnetpoolrbacs.c.object_id == pool_id))
        conn.execute(sa.delete(t.subnetpools).where(t.subnetpools.c.id == pool_id))

    # -- allocation ------------------------------------------------------------

    def default_pool(self, conn: Connection, version: int) -> str | None:
        return conn.execute(sa.select(t.subnetpools.c.id).where(
            t.subnetpools.c.is_default.is_(True),
            t.subnetpools.c.ip_version == version).limit(1)).scalar()

    def allocate(self, conn: Connection, pool_id: str, project_id: str | None,
                 cidr: str | None, prefixlen: int | None) -> str:
        """A free CIDR from the pool (the requested one, or the first that fits).

        The pool row is locked first so that two servers never hand out the
        same block; on SQLite the writer lock already serialises this.
        """
        store.get_row(conn, t.subnetpools, pool_id, lambda: not_found(pool_id),
                      for_update=True)
        pool = self.get(conn, pool_id)
        used_rows = list(conn.execute(sa.select(t.subnets.c.cidr, t.subnets.c.project_id)
                                      .where(t.subnets.c.subnetpool_id == pool_id)))
        used = netaddr.IPSet(r.cidr for r in used_rows)
        available = netaddr.IPSet(pool["prefixes"]) - used
        if cidr is not None:
            net = netaddr.IPNetwork(cidr)
            self._check_prefixlen(pool, net.prefixlen)
            if net.version != pool["ip_version"]:
                raise errors.SubnetAllocationError(
                    reason=f"Cannot allocate IPv{net.version} subnet from IPv"
                           f"{pool['ip_version']} subnet pool")
            if not netaddr.IPSet([net]).issubset(netaddr.IPSet(pool["prefixes"])):
                raise errors.SubnetAllocationError(
                    reason=f"Cidr {cidr} is not within the pool's prefixes")
            if not netaddr.IPSet([net]).issubset(available):
                raise errors.SubnetAllocationError(
                    reason=f"Cidr {cidr} overlaps an allocated subnet")
            chosen = net
        else:
            length = pool["default_prefixlen"] if prefixlen is None else prefixlen
            self._check_prefixlen(pool, length)
            # Smallest free block that fits (then lowest address), as upstream:
            # large blocks stay whole for later requests of large subnets.
            fitting = [b for b in available.iter_cidrs() if b.prefixlen <= length]
            chosen = None
            if fitting:
                block = min(fitting, key=lambda b: (-b.prefixlen, b.version, b.first))
                chosen = next(block.subnet(length))
            if chosen is None:
                raise errors.SubnetAllocationError(
                    reason="Insufficient prefix space to allocate subnet size "
                           f"/{length}")
        self._check_quota(pool, used_rows, project_id, chosen)
        return str(chosen)

    def _check_prefixlen(self, pool: dict[str, Any], length: int) -> None:
        if length < pool["min_prefixlen"]:
            raise errors.MinPrefixSubnetAllocationError(
                prefixlen=length, min_prefixlen=pool["min_prefixlen"])
        if length > pool["max_prefixlen"]:
            raise errors.MaxPrefixSubnetAllocationError(
                prefixlen=length, max_prefixlen=pool["max_prefixlen"])

    def _check_quota(self, pool: dict[str, Any], used_rows: list[Any],
                     project_id: str | None, chosen: netaddr.IPNetwork) -> None:
        quota = pool["default_quota"]
        if quota is None:
            return
        # Upstream counts IPv4 quota in addresses and IPv6 quota in /64s.
        unit = 0 if pool["ip_version"] == 4 else 64

        def size(net: netaddr.IPNetwork) -> int:
            return net.size if unit == 0 else 2 ** max(0, unit - net.prefixlen)

        used = sum(size(netaddr.IPNetwork(r.cidr)) for r in used_rows
                   if r.project_id == project_id)
        if used + size(chosen) > quota:
            raise errors.SubnetPoolQuotaExceeded()

"""Networks: rows, visibility, and the rules for deleting them."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.ipam import subnet_rules
from neutrino.plugins import availability_zones as az
from neutrino.plugins import joined as joined_mod
from neutrino.plugins import rbac, store
from neutrino.plugins.handler import Handler
from neutrino.plugins.joined import Aggregated, Computed, Joined, Reads

EXTERNAL = "router:external"
NETWORK_OWNED_PREFIXES = ("network:",)
# Ports that die with their network rather than blocking its deletion.
AUTO_DELETE_OWNERS = ("network:dhcp", "network:router_ha_interface",
                      "network:distributed", "network:floatingip_agent_gateway")


def not_found(net_id: str) -> errors.NetworkNotFound:
    return errors.NetworkNotFound(net_id=net_id)


def visible_clause(ctx: Context) -> Any:
    """Own networks and those an RBAC entry shares with the caller."""
    return rbac.network_visible_clause(ctx)


# Each subnet's address scope comes with it: a network shows the scope of
# its subnets per IP version.
_SUBNETS = Aggregated(t.subnets, "network_id",
                      ("id", "ip_version", t.subnetpools.c.address_scope_id),
                      order_by=("created_at", "id"),
                      joins=((t.subnetpools, t.subnetpools.c.id == t.subnets.c.subnetpool_id),))
# The network's own child tables, read with a single network's row.
CHILDREN = (store.TAGS, _SUBNETS)
# Its sharing and external entries, from which a show decides whether the
# caller sees it at all and ``present`` whether it is ``shared`` for it.
_GRANTS = Aggregated(t.networkrbacs, "object_id", ("action", "target_tenant"),
                     where=(t.networkrbacs.c.action.in_(
                         (rbac.ACCESS_AS_SHARED, rbac.ACCESS_AS_EXTERNAL)),))
# ``router:external``: the flag, a column of the network's own SELECT (a
# show's and a page's alike). A network made in this transaction without
# writing the table is not external.
EXTERNAL_FLAG = Computed("externalnetworks__external",
                         lambda networks: rbac.is_external_clause(networks.c.id),
                         fresh=((t.externalnetworks,), False))


_DELETE_PORTS = sa.delete(t.ports).where(t.ports.c.id.in_(sa.bindparam("ids", expanding=True)))
_DELETE_SUBNETS = sa.delete(t.subnets).where(
    t.subnets.c.id.in_(sa.bindparam("ids", expanding=True)))
_DELETE = sa.delete(t.networks).where(t.networks.c.id == sa.bindparam("net"))


def to_dicts(conn: Connection, rows: Sequence[Any],
             joined: Reads = ()) -> list[dict[str, Any]]:
    """API dicts of network rows. The child tables come from the rows when
    they were read with them (``CHILDREN``), else one batch query each; the
    ``joined`` tables' attributes are filled from rows read with them."""
    ids = store.row_ids(rows)
    tags = store.child_rows(conn, rows, ids, store.TAGS)
    subnets = store.child_rows(conn, rows, ids, _SUBNETS)
    out = store.empty_page_of(rows)
    fill = joined_mod.filler(rows[0]._fields if rows else (), joined)
    fill_aggregates = store.aggregate_filler(conn, rows, ids, joined)
    for row in rows:
        d = store.standard_dict(row)
        mine = subnets.get(row.id, [])
        scopes = {version: scope for _, _, version, scope in mine if scope is not None}
        d.update(admin_state_up=row.admin_state_up, status=row.status,
                 mtu=row.mtu,
                 subnets=[s[1] for s in mine],
                 ipv4_address_scope=scopes.get(4),
                 ipv6_address_scope=scopes.get(6),
                 tags=[tag for _, tag in tags.get(row.id, [])])
        fill(d, row)
        fill_aggregates(d, row.id)
        out.append(d)
    return out


def _visible(conn: Connection, ctx: Context | None, row: Any) -> bool:
    """Whether the caller sees the network, from its entries read with its
    row: as a list's ``visible_clause``, its own and those an entry shares
    with it or makes external to it. The flag shown to all who see it
    (``router:external``) never makes it visible by itself."""
    if ctx is None or ctx.is_admin or row.project_id == ctx.project_id:
        return True
    wanted = set(rbac.targets(ctx.project_id))
    entries = store.child_rows(conn, [row], [row.id], _GRANTS)[row.id]
    return any(target in wanted for _, _, target in entries)


class Networks(Handler):
    table = t.networks

    def __init__(self, conf: Any, type_manager: Any) -> None:
        self.conf = conf
        self.types = type_manager  # ML2 segments: plugins/ml2/managers.py
        self.joined = ()

    @property
    def joined(self) -> tuple[Joined | Aggregated, ...]:
        """The extension drivers' tables, read with a single network's row
        (set by the core plugin once its drivers are loaded)."""
        return self._joined

    @joined.setter
    def joined(self, reads: tuple[Joined | Aggregated, ...]) -> None:
        self._joined = reads
        self._reads = (*CHILDREN, *self.types.reads, _GRANTS, EXTERNAL_FLAG, *reads)

    def follows_revision(self, item: dict[str, Any]) -> bool:
        """Its subnets, segments, sharing and external entries change with
        its revision (their writes advance it); what is derived from other
        resources (the address scopes of its subnets' pools, the zones of
        the DHCP agents hosting it) is of no update's or delete's concern."""
        return True

    def ahead(self, conn: Connection, data: dict[str, Any]) -> None:
        """Before the create's checks: its segment's first try, to travel
        with their first read (the quota's) instead of a round trip of its
        own."""
        self.types.ahead(conn, data)

    def create(self, conn: Connection, ctx: Context, data: dict[str, Any]) -> str:
        row = store.standard_row(ctx.project_id, data)
        segments = self.types.allocate(conn, data)
        mtu = self.types.network_mtu(segments, data.get("mtu"))
        row.update(admin_state_up=data.get("admin_state_up", True), status="ACTIVE", mtu=mtu,
                   # ``network_availability_zone``: checked by its driver after the INSERT
                   availability_zone_hints=az.to_text(
                       az.requested(data, self.conf.default_availability_zones)))
        # Pipelined (db/pipeline.py): its failure ends the attempt, nothing catches it.
        store.insert(conn, t.networks, row, pipelined=True)
        if data.get("shared"):
            rbac.share_with_all(conn, row["id"], row["project_id"])
        if data.get(EXTERNAL) is True:
            rbac.make_external(conn, row["id"], row["project_id"])
        self.types.create_network_segments(conn, row["id"], segments)
        if data.get("tags"):
            store.tag_new(conn, row["id"], data["tags"])
        return row["id"]

    def get_for(self, conn: Connection, net_id: str, ctx: Context | None) -> dict[str, Any]:
        """The network as ``ctx`` sees it (None: an internal load, which sees
        what everyone does), its RBAC entries read with its row."""
        row = store.get_row(conn, t.networks, net_id, lambda: not_found(net_id),
                            joined=self._reads)
        if not _visible(conn, ctx, row):
            raise not_found(net_id)
        dicts = self._extended(conn, to_dicts(conn, [row], self.joined), [row])
        return self.present(conn, ctx, dicts, [row])[0]

    def list(self, conn: Connection, ctx: Context, query: store.ListQuery) -> tuple[list[dict[str, Any]], bool]:
        special = {"subnets": lambda vals: t.networks.c.id.in_(
            sa.select(t.subnets.c.network_id).where(t.subnets.c.id.in_(vals))),
            "shared": lambda vals: rbac.bool_filter(ctx.project_id, t.networks.c.id, vals),
            EXTERNAL: lambda vals: rbac.is_external_filter(t.networks.c.id, vals),
            **self.types.filter_clauses(t.networks.c.id)}
        clauses = store.column_clauses(t.networks, query.filters, special)
        scope = visible_clause(ctx)
        if scope is not None:
            clauses.append(scope)
        rows, more = store.paged_select(conn, t.networks, clauses, query,
                                        columns=EXTERNAL_FLAG.columns(t.networks))
        if len(rows) <= store.SHOWN_ALONE:
            return store.shown_alone(rows, lambda rid: self.get_for(conn, rid, ctx)), more
        return self.present(conn, ctx, self._extended(conn, to_dicts(conn, rows)), rows), more

    def present(self, conn: Connection, ctx: Context | None, dicts: list[dict[str, Any]],
                rows: Sequence[Any]) -> list[dict[str, Any]]:
        """``shared`` as this caller sees it: shared with ``*`` or with its
        project (without a caller, internal loads, only ``*`` counts); from
        the entries read with a single row (``_GRANTS``), else in one query
        per chunk. ``router:external``: the flag, for whoever sees the
        network (as upstream), from the rows' own column."""
        project = ctx.project_id if ctx is not None else None
        fields = rows[0]._fields if rows else ()
        if _GRANTS.labels[0] in fields:
            wanted = set(rbac.targets(project))
            shared = {rid for rid, entries in store.child_rows(
                conn, rows, [r.id for r in rows], _GRANTS).items()
                if any(action == rbac.ACCESS_AS_SHARED and target in wanted
                       for _, action, target in entries)}
        else:
            shared = rbac.shared_ids(conn, project, store.item_ids(dicts))
        if EXTERNAL_FLAG.labels[0] in fields:
            at = [fields.index(EXTERNAL_FLAG.labels[0])]
            external = {r.id for r in rows if EXTERNAL_FLAG.read(r, at)}
        else:
            external = rbac.external_ids(conn, store.item_ids(dicts))
        for d in dicts:
            d["shared"] = d["id"] in shared
            d[EXTERNAL] = d["id"] in external
        return dicts

    def _extended(self, conn: Connection, dicts: list[dict[str, Any]],
                  rows: Sequence[Any] = ()) -> list[dict[str, Any]]:
        self.types.extend_network_dicts(conn, dicts, rows)
        return dicts

    def update(self, conn: Connection, ctx: Context, net_id: str, data: dict[str, Any],
               revision: int | None) -> None:
        row = store.get_row(conn, t.networks, net_id, lambda: not_found(net_id), for_update=True)
        values = {k: data[k] for k in ("name", "description", "admin_state_up", "mtu")
                  if k in data}
        if data.get("shared") is True:
            rbac.share_with_all(conn, net_id, row.project_id)
        elif data.get("shared") is False:
            rbac.unshare_with_all(conn, net_id, row.project_id, row.name)
        if data.get(EXTERNAL) is True:
            rbac.set_external(conn, net_id, row.project_id)
        elif data.get(EXTERNAL) is False:
            rbac.unset_external(conn, net_id)
        if "mtu" in data:
            versions = set(conn.execute(sa.select(t.subnets.c.ip_version).distinct()
                                        .where(t.subnets.c.network_id == net_id)).scalars())
            subnet_rules.check_mtu_fits(net_id, data["mtu"], versions)
            # 0 asks for the largest the segments carry, as on create.
            values["mtu"] = self.types.check_mtu(conn, net_id, data["mtu"])
        self.types.update_provider(conn, net_id, data)
        store.bump(conn, t.networks, net_id, values, revision)

    def delete(self, conn: Connection, net_id: str, revision: int | None) -> None:
        store.get_row(conn, t.networks, net_id, lambda: not_found(net_id), for_update=True)
        store.check_revision(conn, t.networks, net_id, revision)
        ports = conn.execute(sa.select(t.ports.c.id, t.ports.c.device_owner)
                             .where(t.ports.c.network_id == net_id)).all()
        # (a port without an owner does not block: SQL's NOT IN, as before)
        blocking = sorted(r.id for r in ports if r.device_owner is not None
                          and r.device_owner not in AUTO_DELETE_OWNERS)
        if blocking:
            # Upstream names the blocking ports so the user knows what to delete.
            raise errors.NetworkInUse(net_id=net_id, port_ids=",".join(blocking))
        subnet_ids = [r.id for r in conn.execute(
            sa.select(t.subnets.c.id).where(t.subnets.c.network_id == net_id))]
        store.delete_tags(conn, net_id, *(r.id for r in ports), *subnet_ids)
        # Only what was found goes: a port or subnet made since (neither
        # cascades from the network) makes the network's DELETE fail its
        # foreign key, and the rerun sees it. The ports' addresses and the
        # network's RBAC entries go by their cascades.
        if ports:
            conn.execute(_DELETE_PORTS, {"ids": [r.id for r in ports]})
        if subnet_ids:
            conn.execute(_DELETE_SUBNETS, {"ids": subnet_ids})
        self.types.release_network_segments(conn, net_id)
        conn.execute(_DELETE, {"net": net_id})

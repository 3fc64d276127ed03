"""RBAC: ``/v2.0/rbac-policies`` and what sharing means.

One code path serves every object type (``KINDS``: networks, subnet
pools with ``rbac-subnetpool``, address scopes with ``rbac-address-scope``);
each type has its own entries table and
its own answer to "does anything depend on this entry" (ports of other
projects on a network; subnets of other projects allocated from a pool).

A network is usable by its owner and by every project an
``access_as_shared`` entry targets (a project id, or ``*`` for all). The
network's ``shared`` attribute is therefore an answer per caller, never a
stored flag: true when an entry targets ``*`` or the caller's project.
Visibility is one SQL condition (``shared_clause``), an ``IN`` over the
entries indexed by target, so lists never query per row.

External networks (``external-net``): whether a network is external is
a flag of its own (a row of ``externalnetworks``), shown to whoever sees
the network; who may use it is told by ``access_as_external`` entries,
which make it visible to every project they target. As upstream:
``router:external: true`` sets the flag and creates a ``*`` entry;
``false`` clears the flag and removes every external entry (refused while
gateway ports are on the network). An entry made on an internal network
sets the flag (without a ``*`` entry); the last entry's removal clears it,
unless a gateway port is still there (upstream's conversion fails after the
entry is gone, and only logs it): the network then stays external with no
entries. Routers with their gateway on the network depend on the entries
that give their project access (``check_external_change``).

Served by the core plugin (as upstream, where RBAC is part of the core and
not a service plugin): networks, subnets and ports all read these rows in
their own transactions, and removing an entry must be checked against the
ports in the same transaction that deletes it.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection, Table
from sqlalchemy import exc as sa_exc

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import store
from neutrino.plugins.handler import Handler
from neutrino.plugins.joined import Aggregated, Reads
from neutrino.resources.rbac import (
    ACCESS_AS_EXTERNAL,
    ACCESS_AS_SHARED,
    OBJECT_TYPES,
    WILDCARD,
)

rb = t.networkrbacs.c
GATEWAY_OWNER = "network:router_gateway"


@dataclass(frozen=True)
class Kind:
    """An object type RBAC entries can be about: its table and its entries' table."""

    object_type: str
    objects: Table
    entries: Table
    label: str  # how upstream names the type in messages
    revisioned: bool = True  # has standard attributes (address scopes have none)

    def in_use(self, conn: Connection, obj: Any, target: str,
               removing: Sequence[str]) -> str | None:
        """An object of another project that needs the ``removing`` entries."""
        if self.object_type == "network":
            return dependent_port(conn, obj.id, obj.project_id, target, removing)
        if self.object_type == "address_scope":
            return dependent_pool(conn, obj.id, obj.project_id, target, removing)
        if self.object_type == "qos_policy":
            return dependent_qos_binding(conn, obj.id, obj.project_id, target, removing)
        if self.object_type == "security_group":
            return dependent_group_port(conn, obj.id, obj.project_id, target, removing)
        if self.object_type == "address_group":
            return dependent_group_rule(conn, obj.id, obj.project_id, target, removing)
        return dependent_subnet(conn, obj.id, obj.project_id, target, removing)


# ``qos_policy`` entries are accepted only while the QoS plugin is loaded
# (it adds the type to the RBAC collection); the table is always there.
KINDS: dict[str, Kind] = {
    "network": Kind("network", t.networks, t.networkrbacs, "networks"),
    "subnetpool": Kind("subnetpool", t.subnetpools, t.subnetpoolrbacs, "objects"),
    "address_scope": Kind("address_scope", t.address_scopes, t.addressscoperbacs, "objects",
                          revisioned=False),
    "qos_policy": Kind("qos_policy", t.qos_policies, t.qospolicyrbacs, "objects"),
    "security_group": Kind("security_group", t.securitygroups, t.securitygrouprbacs,
                           "objects"),
    "address_group": Kind("address_group", t.address_groups, t.addressgrouprbacs, "objects"),
}


# -- sharing as SQL -------------------------------------------------------------

# In place of a project in the clauses below: the entries' targets bound when
# the statement runs (``{CALLER.key: targets(project)}``), so a statement
# read on every request is built once.
CALLER = sa.bindparam("rbac_targets", expanding=True)


def targets(project_id: str | None) -> list[str]:
    """The entries that share with ``project_id``: ``*`` and its own."""
    return [WILDCARD, project_id] if project_id else [WILDCARD]


def _targets(project_id: Any) -> Any:
    return CALLER if project_id is CALLER else targets(project_id)


def shared_clause(project_id: Any, object_id: Any, kind: str = "network",
                  action: str = ACCESS_AS_SHARED) -> Any:
    """``object_id`` (a column) names an object shared with ``project_id``
    (a project, None for nobody's, or ``CALLER``)."""
    e = KINDS[kind].entries.c
    return object_id.in_(sa.select(e.object_id).where(
        e.action == action, e.target_tenant.in_(_targets(project_id))))


def is_external_clause(network_id: Any) -> Any:
    """``network_id`` (a column) names an external network: the flag, the
    same for every caller. Uncorrelated, so a page reads the (small) table
    once rather than once per row."""
    return network_id.in_(sa.select(t.externalnetworks.c.network_id))


def network_access_clause(project_id: str | None, network_id: Any) -> Any:
    """Shared with ``project_id`` or external to it."""
    return network_id.in_(sa.select(rb.object_id).where(
        rb.action.in_((ACCESS_AS_SHARED, ACCESS_AS_EXTERNAL)),
        rb.target_tenant.in_(_targets(project_id))))


def visible_clause(ctx: Context, kind: str = "network") -> Any:
    """Objects the caller may see: its own and those shared with it (or,
    for networks, external to it)."""
    if ctx.is_admin:
        return None
    objects = KINDS[kind].objects.c
    if kind == "network":
        return sa.or_(objects.project_id == ctx.project_id,
                      network_access_clause(ctx.project_id, objects.id))
    return sa.or_(objects.project_id == ctx.project_id,
                  shared_clause(ctx.project_id, objects.id, kind))


def network_visible_clause(ctx: Context) -> Any:
    return visible_clause(ctx, "network")


def shared_ids(conn: Connection, project_id: str | None, object_ids: Iterable[str],
               kind: str = "network", action: str = ACCESS_AS_SHARED) -> set[str]:
    """Which of ``object_ids`` are shared with ``project_id``: one query per chunk."""
    e = KINDS[kind].entries.c
    out: set[str] = set()
    for part in store.chunks(list(dict.fromkeys(object_ids))):
        out.update(r.object_id for r in conn.execute(
            sa.select(e.object_id).distinct().where(
                e.object_id.in_(part), e.action == action,
                e.target_tenant.in_(_targets(project_id)))))
    return out


_EXTERNAL_IDS = sa.select(t.externalnetworks.c.network_id).where(
    t.externalnetworks.c.network_id.in_(sa.bindparam("ids", expanding=True)))


def external_ids(conn: Connection, network_ids: Iterable[str]) -> set[str]:
    """Which of ``network_ids`` are external (the flag)."""
    out: set[str] = set()
    for part in store.chunks(list(dict.fromkeys(network_ids))):
        out.update(conn.execute(_EXTERNAL_IDS, {"ids": part}).scalars())
    return out


def is_external_filter(network_id: Any, values: list[Any]) -> Any:
    """``router:external=true|false`` on networks and subnets: the flag, the
    same for every caller (who sees the network or subnet is the
    visibility's business). The first value decides, as upstream."""
    if not values:
        return None
    clause = is_external_clause(network_id)
    return clause if bool(values[0]) else sa.not_(clause)


def set_external(conn: Connection, network_id: str, owner: str,
                 allow_all: bool = True) -> None:
    """Make the network external, unless it is: the flag and, for
    ``router:external: true`` (``allow_all``), a ``*`` entry owned by the
    network's project. An entry made for one project converts the network
    without a ``*`` entry."""
    if not external_ids(conn, [network_id]):
        make_external(conn, network_id, owner, allow_all)


def make_external(conn: Connection, network_id: str, owner: str,
                  allow_all: bool = True) -> None:
    """``set_external`` for a network known not to be external (a new one)."""
    conn.execute(sa.insert(t.externalnetworks).values(network_id=network_id))
    if allow_all:
        add_entry(conn, owner, network_id, WILDCARD, ACCESS_AS_EXTERNAL)


def _has_gateway(conn: Connection, network_id: str) -> bool:
    p = t.ports.c
    return conn.execute(sa.select(p.id).where(
        p.network_id == network_id, p.device_owner == GATEWAY_OWNER).limit(1)).first() is not None


def _make_internal(conn: Connection, network_id: str) -> None:
    """Clear the flag, the external entries and the network's being the
    default external one (upstream keeps ``is_default`` with the flag)."""
    d = t.default_external_network.c
    conn.execute(sa.delete(t.externalnetworks).where(
        t.externalnetworks.c.network_id == network_id))
    conn.execute(sa.delete(t.networkrbacs).where(
        rb.object_id == network_id, rb.action == ACCESS_AS_EXTERNAL))
    conn.execute(sa.delete(t.default_external_network).where(d.network_id == network_id))


def unset_external(conn: Connection, network_id: str) -> None:
    """``router:external: false``: the flag and every external entry go;
    refused while any gateway port (the owner's too, as upstream) is on
    the network."""
    if not external_ids(conn, [network_id]):
        return
    if _has_gateway(conn, network_id):
        raise errors.ExternalNetworkInUse(net_id=network_id)
    _make_internal(conn, network_id)


def after_external_entry_removed(conn: Connection, network_id: str) -> None:
    """The last ``access_as_external`` entry gone, the network is internal
    again, unless a router's gateway is still on it (the owner's, which
    needs no entry): then it stays external, as upstream, whose conversion
    fails after the entry's deletion and is only logged."""
    if conn.execute(sa.select(rb.id).where(
            rb.object_id == network_id, rb.action == ACCESS_AS_EXTERNAL).limit(1)).first():
        return
    if not _has_gateway(conn, network_id):
        _make_internal(conn, network_id)


@functools.cache
def shared_entries(kind: str) -> Aggregated:
    """An object's ``access_as_shared`` targets, to read with its row
    (``shown``, or ``store.get_row(..., joined=(shared_entries(kind),))``), so a show
    presents ``shared`` for its caller without a query of its own."""
    e = KINDS[kind].entries
    return Aggregated(e, "object_id", ("target_tenant",),
                      where=(e.c.action == ACCESS_AS_SHARED,))


def shown(conn: Connection, ctx: Context | None, kind: str, table: Table, rid: str,
          not_found: Callable[[], Exception],
          to_dicts: Callable[[Connection, Sequence[Any]], list[dict[str, Any]]],
          joined: Reads = ()) -> dict[str, Any]:
    """A shareable object shown alone, as ``ctx`` sees it (None: an
    internal load): its row read with its ``access_as_shared`` entries (and
    the ``joined`` reads its ``to_dicts`` takes from it), ``shared``
    presented from those entries. A handler's ``get_for``."""
    row = store.get_row(conn, table, rid, not_found, joined=(shared_entries(kind), *joined))
    return present(conn, ctx, to_dicts(conn, [row]), kind, [row])[0]


def present(conn: Connection, ctx: Context | None, dicts: list[dict[str, Any]],
            kind: str, rows: Sequence[Any] = ()) -> list[dict[str, Any]]:
    """Set ``shared`` as this caller sees it (without a caller only ``*``
    counts): from the entries read with ``rows`` (``shared_entries``) when
    given, else in one query per chunk."""
    project = ctx.project_id if ctx is not None else None
    if rows:
        wanted = set(targets(project))
        found = store.child_rows(conn, rows, [r.id for r in rows], shared_entries(kind))
        shared = {rid for rid, entries in found.items()
                  if any(target in wanted for _, target in entries)}
    else:
        shared = shared_ids(conn, project, [d["id"] for d in dicts], kind)
    for d in dicts:
        d["shared"] = d["id"] in shared
    return dicts


def bool_filter(project_id: str | None, object_id: Any, values: list[Any],
                kind: str = "network") -> Any:
    """``shared=true|false`` as the caller sees ``shared``."""
    wanted = {bool(x) for x in values}
    if wanted == {True, False}:
        return None
    clause = shared_clause(project_id, object_id, kind)
    return clause if True in wanted else sa.not_(clause)


# -- sharing changes ---------------------------------------------------------------

def add_entry(conn: Connection, project_id: str, object_id: str, target: str,
              action: str = ACCESS_AS_SHARED, kind: str = "network") -> str:
    rid = store.new_id()
    try:
        with conn.begin_nested():
            conn.execute(sa.insert(KINDS[kind].entries).values(
                id=rid, project_id=project_id, object_id=object_id,
                action=action, target_tenant=target))
    except sa_exc.IntegrityError:
        raise errors.DuplicateRbacPolicy() from None
    return rid


def share_with_all(conn: Connection, object_id: str, owner: str, kind: str = "network") -> None:
    """``shared: true``: a ``*`` entry owned by the object's project, once."""
    e = KINDS[kind].entries.c
    exists = conn.execute(sa.select(e.id).where(
        e.object_id == object_id, e.action == ACCESS_AS_SHARED,
        e.target_tenant == WILDCARD)).first()
    if exists is None:
        add_entry(conn, owner, object_id, WILDCARD, kind=kind)


def unshare_with_all(conn: Connection, network_id: str, owner: str, name: str) -> bool:
    """``shared: false`` on a network: drop the ``*`` entries; refused while needed."""
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


def _remaining(conn: Connection, entries: Table, object_id: str,
               removing: Sequence[str] | None,
               action: str = ACCESS_AS_SHARED) -> list[str] | None:
    """Targets still covered once ``removing`` goes (all of them when None);
    None when ``*`` remains."""
    if removing is None:
        return []
    e = entries.c
    remaining = [r.target_tenant for r in conn.execute(sa.select(e.target_tenant).where(
        e.object_id == object_id, e.action == action, e.id.not_in(removing)))]
    return None if WILDCARD in remaining else remaining


def _dependent(conn: Connection, table: Table, conds: list[Any], target: str,
               remaining: list[str]) -> str | None:
    if target == WILDCARD:
        if remaining:
            conds.append(table.c.project_id.not_in(remaining))
    else:
        conds.append(table.c.project_id == target)
    row = conn.execute(sa.select(table.c.id).where(*conds).limit(1)).first()
    return None if row is None else row.id


def dependent_port(conn: Connection, network_id: str, owner: str, target: str,
                   removing: Sequence[str]) -> str | None:
    """A port that needs the ``removing`` entries (which target ``target``).

    Ports of the network's owner, and ports the network itself owns
    (``network:*``: DHCP, router, floating IP ports), never depend on
    sharing; nor does a port whose project keeps access through another
    remaining entry (a ``*`` one, or one naming the project).
    """
    remaining = _remaining(conn, t.networkrbacs, network_id, removing)
    if remaining is None:
        return None
    p = t.ports.c
    return _dependent(conn, t.ports, [p.network_id == network_id, p.project_id != owner,
                                      ~p.device_owner.like("network:%")], target, remaining)


def check_external_change(conn: Connection, network_id: str, target: str,
                          new_target: str | None = None) -> None:
    """An ``access_as_external`` entry for ``target`` may go (or, with
    ``new_target``, be retargeted) only if no router with its gateway on the
    network loses its access, as upstream counts it: for a project's entry,
    none of that project's routers unless a ``*`` entry remains; for the
    ``*`` entry, none of any project (the network's owner too) without an
    entry of its own (``new_target`` counted), and never on the default
    external network."""
    gateways = sa.select(t.ports.c.id).where(t.ports.c.network_id == network_id,
                                             t.ports.c.device_owner == GATEWAY_OWNER)
    routers = t.routers.c
    conds = [routers.gw_port_id.in_(gateways)]
    if target != WILDCARD:
        if conn.execute(sa.select(rb.id).where(
                rb.object_id == network_id, rb.action == ACCESS_AS_EXTERNAL,
                rb.target_tenant == WILDCARD).limit(1)).first():
            return
        conds.append(routers.project_id == target)
    else:
        d = t.default_external_network.c
        if conn.execute(sa.select(d.network_id).where(d.network_id == network_id)).first():
            raise errors.RbacPolicyInUse(
                object_id=network_id,
                details="Default external networks must be shared to everyone.")
        kept = [r.target_tenant for r in conn.execute(sa.select(rb.target_tenant).where(
            rb.object_id == network_id, rb.action == ACCESS_AS_EXTERNAL,
            rb.target_tenant != WILDCARD))]
        if new_target is not None:
            kept.append(new_target)
        if kept:
            conds.append(routers.project_id.not_in(kept))
    if conn.execute(sa.select(routers.id).where(*conds).limit(1)).first():
        raise errors.RbacPolicyInUse(
            object_id=network_id,
            details="There are routers attached to this network that depend on this "
                    "policy for access.")


def dependent_subnet(conn: Connection, pool_id: str, owner: str, target: str,
                     removing: Sequence[str]) -> str | None:
    """A subnet of another project allocated from the pool that needs ``removing``."""
    remaining = _remaining(conn, t.subnetpoolrbacs, pool_id, removing)
    if remaining is None:
        return None
    s = t.subnets.c
    return _dependent(conn, t.subnets, [s.subnetpool_id == pool_id, s.project_id != owner],
                      target, remaining)


def dependent_pool(conn: Connection, scope_id: str, owner: str, target: str,
                   removing: Sequence[str]) -> str | None:
    """A subnet pool of another project in the address scope that needs ``removing``."""
    remaining = _remaining(conn, t.addressscoperbacs, scope_id, removing)
    if remaining is None:
        return None
    p = t.subnetpools.c
    return _dependent(conn, t.subnetpools, [p.address_scope_id == scope_id,
                                            p.project_id != owner], target, remaining)


def dependent_qos_binding(conn: Connection, policy_id: str, owner: str, target: str,
                          removing: Sequence[str]) -> str | None:
    """A network, port, floating IP or router gateway using the QoS policy
    through ``removing``.

    As upstream counts them, the owner's own networks and ports count too:
    they keep a ``*`` entry unless another entry names the owner; only an
    entry that targets the owner itself never matters.
    """
    if target == owner:
        return None
    remaining = _remaining(conn, t.qospolicyrbacs, policy_id, removing)
    if remaining is None:
        return None
    for objects, bindings, key in ((t.networks, t.qos_network_policy_bindings, "network_id"),
                                   (t.ports, t.qos_port_policy_bindings, "port_id"),
                                   (t.floatingips, t.qos_fip_policy_bindings, "fip_id"),
                                   (t.routers, t.qos_router_gw_policy_bindings, "router_id")):
        bound = sa.select(bindings.c[key]).where(bindings.c.policy_id == policy_id)
        found = _dependent(conn, objects, [objects.c.id.in_(bound)], target, remaining)
        if found is not None:
            return found
    return None


def dependent_group_port(conn: Connection, group_id: str, owner: str, target: str,
                         removing: Sequence[str]) -> str | None:
    """A port of another project filtered by the security group through ``removing``."""
    remaining = _remaining(conn, t.securitygrouprbacs, group_id, removing)
    if remaining is None:
        return None
    b = t.securitygroupportbindings.c
    bound = sa.select(b.port_id).where(b.security_group_id == group_id)
    return _dependent(conn, t.ports, [t.ports.c.id.in_(bound), t.ports.c.project_id != owner],
                      target, remaining)


def dependent_group_rule(conn: Connection, ag_id: str, owner: str, target: str,
                         removing: Sequence[str]) -> str | None:
    """A security group rule of another project naming the address group as
    its remote through ``removing``."""
    remaining = _remaining(conn, t.addressgrouprbacs, ag_id, removing)
    if remaining is None:
        return None
    r = t.securitygrouprules.c
    return _dependent(conn, t.securitygrouprules, [r.remote_address_group_id == ag_id,
                                                   r.project_id != owner], target, remaining)


# -- the rbac_policies collection ----------------------------------------------------

def _to_dict(row: Any) -> dict[str, Any]:
    return {"id": row.id, "project_id": row.project_id, "tenant_id": row.project_id,
            "action": row.action, "object_id": row.object_id,
            "target_tenant": row.target_tenant, "object_type": row.object_type}


def _all_entries() -> Any:
    """Every type's entries as one selectable, with an ``object_type`` column."""
    parts = [sa.select(*k.entries.c, sa.literal(k.object_type).label("object_type"))
             for k in KINDS.values()]
    return sa.union_all(*parts).subquery("rbac_entries")


class RbacPolicies(Handler):
    """The handler of ``rbac_policies``, with the core collections' interface."""

    table = t.networkrbacs

    def __init__(self, actions: dict[str, tuple[str, ...]] | None = None) -> None:
        self.actions = actions or OBJECT_TYPES

    def _not_found(self, rid: str) -> errors.RbacPolicyNotFound:
        return errors.RbacPolicyNotFound(id=rid, object_type="unknown")

    def _object(self, conn: Connection, ctx: Context, kind: Kind, object_id: str) -> Any:
        """The object an entry is about; only admins touch others' objects."""
        o = kind.objects.c
        row = conn.execute(sa.select(o.id, o.project_id).where(o.id == object_id)).first()
        if kind.object_type == "network":
            visible = row is not None and (
                ctx.is_admin or row.project_id == ctx.project_id
                or bool(shared_ids(conn, ctx.project_id, [object_id]))
                or bool(shared_ids(conn, ctx.project_id, [object_id],
                                   action=ACCESS_AS_EXTERNAL)))
            if not visible:
                raise errors.InvalidInput(
                    error_message=f"Network {object_id} could not be found")
        elif row is None:
            raise errors.InvalidInput(
                error_message=f"{kind.object_type} {object_id} could not be found")
        if not ctx.is_admin and row.project_id != ctx.project_id:
            raise errors.InvalidInput(error_message="Only admins can manipulate policies "
                                                    f"on {kind.label} they do not own")
        return row

    def _check_action(self, object_type: str, action: str) -> None:
        valid = self.actions.get(object_type, ())
        if action not in valid:
            raise errors.InvalidActionForType(action=action, object_type=object_type,
                                              valid_actions=repr(tuple(valid)))

    def create(self, conn: Connection, ctx: Context, data: dict[str, Any]) -> str:
        self._check_action(data["object_type"], data["action"])
        kind = KINDS[data["object_type"]]
        self._object(conn, ctx, kind, data["object_id"])
        if kind.object_type == "subnetpool":
            _check_scope_access(conn, ctx, data["object_id"], data["target_tenant"])
        if kind.object_type == "network" and data["action"] == ACCESS_AS_EXTERNAL:
            # Locked, as a removal locks it: the last entry's removal and
            # this one's conversion must not pass each other.
            store.get_row(conn, kind.objects, data["object_id"],
                          lambda: errors.NetworkNotFound(net_id=data["object_id"]),
                          for_update=True)
            set_external(conn, data["object_id"], data["project_id"], allow_all=False)
        rid = add_entry(conn, data["project_id"], data["object_id"], data["target_tenant"],
                        data["action"], kind.object_type)
        _touch(conn, kind, data["object_id"])
        return rid

    def _find(self, conn: Connection, rid: str, for_update: bool = False) -> tuple[Kind, Any]:
        for kind in KINDS.values():
            stmt = sa.select(kind.entries).where(kind.entries.c.id == rid)
            if for_update and conn.dialect.name != "sqlite":
                stmt = stmt.with_for_update()
            row = conn.execute(stmt).first()
            if row is not None:
                return kind, row
        raise self._not_found(rid)

    def get(self, conn: Connection, rid: str) -> dict[str, Any]:
        kind, row = self._find(conn, rid)
        return {**_to_dict_plain(row), "object_type": kind.object_type}

    def list(self, conn: Connection, ctx: Context,
             query: store.ListQuery) -> tuple[list[dict[str, Any]], bool]:
        entries = _all_entries()
        clauses = store.column_clauses(entries, query.filters, {})
        if not ctx.is_admin:
            clauses.append(entries.c.project_id == ctx.project_id)
        rows, more = store.paged_select(conn, entries, clauses, query)
        return [_to_dict(r) for r in rows], more

    def update(self, conn: Connection, ctx: Context, rid: str, data: dict[str, Any],
               revision: int | None) -> None:
        kind, row = self._find(conn, rid, for_update=True)
        new = data.get("target_tenant", row.target_tenant)
        if new == row.target_tenant:
            return
        self._check_removal(conn, kind, row, new)
        e = kind.entries
        try:
            with conn.begin_nested():
                conn.execute(sa.update(e).where(e.c.id == rid).values(target_tenant=new))
        except sa_exc.IntegrityError:
            raise errors.DuplicateRbacPolicy() from None
        _touch(conn, kind, row.object_id)

    def delete(self, conn: Connection, rid: str, revision: int | None) -> None:
        kind, row = self._find(conn, rid, for_update=True)
        self._check_removal(conn, kind, row)
        conn.execute(sa.delete(kind.entries).where(kind.entries.c.id == rid))
        if kind.object_type == "network" and row.action == ACCESS_AS_EXTERNAL:
            after_external_entry_removed(conn, row.object_id)
        _touch(conn, kind, row.object_id)

    def _check_removal(self, conn: Connection, kind: Kind, row: Any,
                       new_target: str | None = None) -> None:
        if row.action not in (ACCESS_AS_SHARED, ACCESS_AS_EXTERNAL):
            return
        # Lock the object: a port or subnet created meanwhile would escape the check.
        obj = store.get_row(conn, kind.objects, row.object_id,
                            lambda: self._not_found(row.id), for_update=True)
        if row.action == ACCESS_AS_EXTERNAL:
            check_external_change(conn, obj.id, row.target_tenant, new_target)
            return
        if kind.in_use(conn, obj, row.target_tenant, [row.id]):
            raise errors.RbacPolicyInUse(
                object_id=obj.id,
                details=f"Unable to reconfigure sharing settings for {kind.object_type} "
                        f"{obj.id}. Multiple projects are using it.")


def _check_scope_access(conn: Connection, ctx: Context, pool_id: str, target: str) -> None:
    """A subnet pool in an address scope is shared only with a project the
    scope is shared with (an entry on the scope for it or ``*``), as
    upstream; like upstream, a member counts only the scope's entries its
    own project made."""
    pools = t.subnetpools.c
    scope_id = conn.execute(sa.select(pools.address_scope_id)
                            .where(pools.id == pool_id)).scalar()
    if scope_id is None:
        return
    e = t.addressscoperbacs.c
    conds = [e.object_id == scope_id, e.target_tenant.in_((WILDCARD, target))]
    if not ctx.is_admin:
        conds.append(e.project_id == ctx.project_id)
    if conn.execute(sa.select(e.id).where(*conds).limit(1)).first() is None:
        raise errors.InvalidInput(
            error_message=f"Failed to create RBAC policy on object {pool_id} because "
                          "target project doesn't have access to associated address "
                          "scope.")


def _touch(conn: Connection, kind: Kind, object_id: str) -> None:
    """A sharing change is a change of the object: bump its revision."""
    if kind.revisioned:
        store.bump(conn, kind.objects, object_id)


def _to_dict_plain(row: Any) -> dict[str, Any]:
    return {"id": row.id, "project_id": row.project_id, "tenant_id": row.project_id,
            "action": row.action, "object_id": row.object_id,
            "target_tenant": row.target_tenant}

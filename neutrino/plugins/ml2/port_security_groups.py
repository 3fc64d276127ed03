"""The ``security_groups`` of ports: an extension driver the core always runs.

It runs after the ``port_security`` driver (when that is loaded) and
before binding, inside the port's transaction, and follows upstream:

- a port with port security gets the project's default group unless the
  request names groups (``[]`` or null: none); ports owned by the network
  itself (``network:*``: routers, DHCP) get none;
- a port without port security may not have groups, and port security
  cannot be turned off while a port keeps its groups;
- named groups must exist and belong to the port's project or be shared
  with it by RBAC (admins: any group); stateful and stateless groups do not
  mix on one port.

Creating a network, and creating or updating a port, also makes the
project's default group, as upstream.
"""
from __future__ import annotations

from typing import Any, Mapping

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import joined, rbac, store
from neutrino.plugins.joined import Aggregated, Joined
from neutrino.plugins.ml2.extension_api import ExtensionDriver
from neutrino.plugins.security_groups import DEFAULT_ID
from neutrino.resources import security_groups as res
from neutrino.resources.attributes import AUTO, Attribute

ATTR = "security_groups"
PORT_SECURITY = "port_security_enabled"
B = t.securitygroupportbindings


def _fill(item: dict[str, Any], rows: list[Any]) -> None:
    item[ATTR] = [group for _, group in rows]


# A port's groups, read with a single port's row.
# Bound by port creates and updates (which advance the revision) alone.
_GROUPS = Aggregated(B, "port_id", ("security_group_id",), order_by=("security_group_id",),
                     fill=_fill, follows_revision=True)


def _trusted(device_owner: str | None) -> bool:
    return bool(device_owner) and str(device_owner).startswith("network:")


def _port_security(conn: Connection, port_id: str) -> bool:
    value = conn.execute(sa.select(t.port_port_security.c.port_security_enabled)
                         .where(t.port_port_security.c.port_id == port_id)).scalar()
    return True if value is None else bool(value)


class PortSecurityGroupsDriver(ExtensionDriver):
    extension_alias = ""  # ``security-group`` is listed by the core plugin itself

    def __init__(self, conf: Any, groups: Any) -> None:
        super().__init__(conf)
        self.groups = groups  # the SecurityGroups handler

    def attributes(self) -> dict[str, list[Attribute]]:
        return res.PORT_SECURITY_GROUPS

    def process_create(self, conn: Connection, ctx: Context, plural: str,
                       data: dict[str, Any], resource_id: str) -> None:
        if plural == "networks":
            self.groups.ensure_default(conn, ctx, data.get("project_id"))
        if plural != "ports":
            return
        requested = data.get(ATTR, AUTO)
        enabled = data.get(PORT_SECURITY)  # as the port_security driver resolved it
        if not (_port_security(conn, resource_id) if enabled is None else enabled):
            if requested is not AUTO and requested:
                raise errors.PortSecurityAndIPRequiredForSecurityGroups()
            return
        if _trusted(data.get("device_owner")):
            return
        if requested is AUTO:
            # The port's project's own default group: nothing to check.
            default = self.groups.ensure_default(conn, ctx, data.get("project_id"))
            if default:
                store.insert(conn, B, {"port_id": resource_id, "security_group_id": default},
                             pipelined=True)
            return
        self._bind(conn, ctx, resource_id, data.get("project_id"), requested)

    def process_update(self, conn: Connection, ctx: Context, plural: str,
                       data: dict[str, Any], resource_id: str,
                       original: dict[str, Any]) -> None:
        if plural != "ports":
            return
        project_id = original["project_id"]
        self.groups.ensure_default(conn, ctx, project_id)
        if ATTR not in data and PORT_SECURITY not in data:
            return  # neither the groups nor what allows them change
        requested = data.get(ATTR, AUTO)
        if not _port_security(conn, resource_id):
            if requested is not AUTO and requested:
                raise errors.PortSecurityAndIPRequiredForSecurityGroups()
            if requested is AUTO and self._bound(conn, resource_id):
                raise errors.PortSecurityPortHasSecurityGroup()
        if requested is AUTO:
            return
        if sorted(requested) == sorted(self._bound(conn, resource_id)):
            return
        conn.execute(sa.delete(B).where(B.c.port_id == resource_id))
        if not _trusted(data.get("device_owner", original["device_owner"])):
            self._bind(conn, ctx, resource_id, project_id, requested)

    def process_update_many(self, conn: Connection, ctx: Context, plural: str,
                            changes: Mapping[str, dict[str, Any]],
                            originals: Mapping[str, dict[str, Any]]) -> None:
        """As ``process_update`` for each, the default groups made once a project."""
        if plural != "ports":
            return
        for project_id in dict.fromkeys(o["project_id"] for o in originals.values()):
            self.groups.ensure_default(conn, ctx, project_id)
        for rid, data in changes.items():
            if ATTR in data or PORT_SECURITY in data:
                self.process_update(conn, ctx, plural, data, rid, originals[rid])

    def _bound(self, conn: Connection, port_id: str) -> list[str]:
        return [r[0] for r in conn.execute(sa.select(B.c.security_group_id)
                                           .where(B.c.port_id == port_id))]

    def _bind(self, conn: Connection, ctx: Context, port_id: str, project_id: str | None,
              group_ids: list[str]) -> None:
        if not group_ids:
            return
        rows = {r.id: r for r in conn.execute(
            sa.select(t.securitygroups.c.id, t.securitygroups.c.project_id,
                      t.securitygroups.c.stateful)
            .where(t.securitygroups.c.id.in_(group_ids)))}
        shared = rbac.shared_ids(conn, project_id, [g for g, r in rows.items()
                                                    if r.project_id != project_id],
                                 "security_group") if project_id else set()
        usable = {gid for gid, r in rows.items()
                  if ctx.is_admin or not project_id or r.project_id == project_id
                  or gid in shared}
        missing = [gid for gid in group_ids if gid not in usable]
        if missing:
            raise errors.SecurityGroupNotFound(id=", ".join(missing))
        if len({rows[g].stateful for g in group_ids}) > 1:
            raise errors.SecurityGroupConflict(
                reason="Cannot apply both stateful and stateless security groups on the "
                       "same port at the same time")
        store.insert(conn, B, [{"port_id": port_id, "security_group_id": g}
                               for g in group_ids], pipelined=True)

    def filter_clauses(self, plural: str, table: Any,
                       filters: dict[str, list[Any]]) -> list[Any]:
        """``port-security-groups-filtering``: ports in any of the groups."""
        if plural != "ports" or not filters.get(ATTR):
            return []
        return [table.c.id.in_(sa.select(B.c.port_id)
                               .where(B.c.security_group_id.in_(filters[ATTR])))]

    def lookups(self, plural: str) -> tuple[Any, ...]:
        return (DEFAULT_ID,) if plural in ("networks", "ports") else ()

    def joined(self, plural: str) -> list[Joined | Aggregated]:
        return [_GROUPS] if plural == "ports" else []

    def extend(self, conn: Connection, plural: str, items: list[dict[str, Any]]) -> None:
        if plural != "ports":
            return
        items = joined.missing(items, ATTR)
        found = store.children(conn, B, "port_id", store.item_ids(items),
                               (B.c.security_group_id,), _GROUPS.names)
        for item in items:
            _fill(item, found.get(item["id"], []))

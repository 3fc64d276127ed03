"""Whether a log may be made: upstream's checks of a security-group log, in
its order and words.

The group must exist, the target port too, and be bound (or not bound at
all) where a driver logs: the Open vSwitch agent's ``ovs`` VIF or, when
there is no VIF yet, a ``normal`` VNIC. Given both, the port must be a
member of the group.
"""
from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.resources import logging as res

SUPPORTED_TYPES = (res.SECURITY_GROUP,)
# upstream's OVS logging driver: the VIF and VNIC types it logs on
VIF_TYPES = ("ovs", "vhostuser")
VNIC_TYPES = ("normal",)
# a port not (successfully) bound is judged by its VNIC type alone
SKIPPED_VIF_TYPES = ("unbound", "binding_failed")


def loggable_on(vif_type: str | None, vnic_type: str | None) -> bool:
    """Whether a port bound with ``vif_type`` / ``vnic_type`` can be logged."""
    if vif_type and vif_type not in SKIPPED_VIF_TYPES:
        return vif_type in VIF_TYPES
    return (vnic_type or "normal") in VNIC_TYPES


def _visible(ctx: Context, table: sa.Table) -> list[Any]:
    return [] if ctx.is_admin else [table.c.project_id == ctx.project_id]


def check(conn: Connection, ctx: Context, data: dict[str, Any]) -> None:
    """Raise upstream's error for the first check ``data`` fails."""
    kind = data.get("resource_type")
    if kind not in SUPPORTED_TYPES:
        raise errors.InvalidLogResourceType(resource_type=kind)
    sg_id, port_id = data.get("resource_id"), data.get("target_id")
    if sg_id:
        sg = t.securitygroups
        found = conn.execute(sa.select(sg.c.id).where(
            sg.c.id == sg_id, *_visible(ctx, sg))).first()
        if found is None:
            raise errors.log_resource_not_found(sg_id)
    if port_id:
        p, b = t.ports, t.ml2_port_bindings
        row = conn.execute(
            sa.select(p.c.id, b.c.vif_type, b.c.vnic_type)
            .select_from(p.outerjoin(b, b.c.port_id == p.c.id))
            .where(p.c.id == port_id, *_visible(ctx, p))).first()
        if row is None:
            raise errors.TargetResourceNotFound(target_id=port_id)
        if not loggable_on(row.vif_type, row.vnic_type):
            raise errors.LoggingTypeNotSupported(log_type=res.SECURITY_GROUP,
                                                 port_id=port_id)
    if sg_id and port_id:
        sgb = t.securitygroupportbindings
        bound = conn.execute(sa.select(sgb.c.port_id).where(
            sgb.c.port_id == port_id, sgb.c.security_group_id == sg_id)).first()
        if bound is None:
            raise errors.InvalidResourceConstraint(
                resource=res.SECURITY_GROUP, resource_id=sg_id, target_resource="port",
                target_id=port_id)

"""``binding-extended``: more than one binding per port, one active.

The compute service moves an instance by binding its port on the
destination host first (an inactive binding: the drivers decide the VIF
there, nothing is wired), activating that binding once the instance runs
there, then deleting the source's. The active binding is the port's own
(``binding:host_id`` and the ``ml2_port_bindings`` row every reader
knows); the others live beside it. Agents ask the server what to wire and
are answered for the active binding's host only, so the destination's
agent wires the port when the activation tells it to.

``/v2.0/ports/{port_id}/bindings[/{host}[/activate]]``, with upstream's
policy (reading: admins and the service role; writing: the service role).
"""
from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from oslo_policy import policy
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import store
from neutrino.plugins.base import ApiExtension, CustomRoute
from neutrino.plugins.ml2.mech_api import VIF_TYPE_BINDING_FAILED, VIF_TYPE_UNBOUND
from neutrino.plugins.ml2.port_binding import PortBinding
from neutrino.resources import port_binding as pb
from neutrino.resources import validators as v
from neutrino.resources.extensions import described
from neutrino.rpc import topics
from neutrino.rpc.casts import Casts

ALIAS = "binding-extended"
B, INACTIVE = t.ml2_port_bindings, t.ml2_port_inactive_bindings
ACTIVE_STATUS, INACTIVE_STATUS = "ACTIVE", "INACTIVE"
COMPUTE_OWNERS = ("compute:", "manila:")
FIELDS = ("host", "vif_type", "vif_details", "vnic_type", "profile", "status")
FILTERS = ("host", "vif_type", "vnic_type", "status")
PATH = "/ports/{port_id}/bindings"

POLICIES = [
    policy.DocumentedRuleDefault(
        name="get_port_binding", check_str="(rule:admin_only) or (rule:service_api)",
        description="Get port binding information",
        operations=[{"method": "GET", "path": PATH}]),
    policy.DocumentedRuleDefault(
        name="create_port_binding", check_str="rule:service_api",
        description="Create port binding on the host",
        operations=[{"method": "POST", "path": PATH}]),
    policy.DocumentedRuleDefault(
        name="update_port_binding", check_str="rule:service_api",
        description="Update port binding on the host",
        operations=[{"method": "PUT", "path": PATH + "/{host}"}]),
    policy.DocumentedRuleDefault(
        name="delete_port_binding", check_str="rule:service_api",
        description="Delete port binding on the host",
        operations=[{"method": "DELETE", "path": PATH + "/{host}"}]),
    policy.DocumentedRuleDefault(
        name="activate", check_str="rule:service_api",
        description="Activate port binding on the host",
        operations=[{"method": "PUT", "path": PATH + "/{host}/activate"}]),
]


class PortBindingNotFound(errors.NotFound):
    message = "Binding for port %(port_id)s for host %(host)s could not be found."


class PortBindingAlreadyActive(errors.Conflict):
    message = "Binding for port %(port_id)s on host %(host)s is already active."


class PortBindingAlreadyExists(errors.Conflict):
    message = "Binding for port %(port_id)s on host %(host)s already exists."


class PortBindingError(errors.Conflict):
    """Upstream answers a binding no driver can make with a 500; it is the
    host's state (no live agent, no mapping), so a conflict here."""

    message = "Binding for port %(port_id)s on host %(host)s could not be created or updated."


def _binding_body(body: Any, creating: bool) -> dict[str, Any]:
    """``{"binding": {host, vnic_type, profile}}`` checked as the port's own
    binding attributes are."""
    if not isinstance(body, dict) or not isinstance(body.get("binding"), dict):
        raise errors.BadRequest(resource="binding", msg="Resource body required")
    given = body["binding"]
    allowed = {"host", "vnic_type", "profile"} | ({"project_id"} if creating else set())
    unknown = sorted(set(given) - allowed)
    if unknown:
        raise errors.HTTPBadRequest(msg=f"Unrecognized attribute(s) '{', '.join(unknown)}'")
    out: dict[str, Any] = {}
    checks = (("host", pb.host), ("vnic_type", pb.vnic_type), ("profile", pb.profile))
    for key, check in checks:
        if key in given:
            try:
                out[key] = check(given[key])
            except v.Invalid as exc:
                raise errors.HTTPBadRequest(
                    msg=f"Invalid input for {key}. Reason: {exc}") from None
    if creating and not out.get("host"):
        raise errors.HTTPBadRequest(
            msg="Failed to parse request. Required attribute 'host' not specified")
    return out


def _shown(row: Any, status: str) -> dict[str, Any]:
    def as_dict(text: str) -> dict[str, Any]:
        value = json.loads(text) if text else {}
        return value if isinstance(value, dict) else {}
    return {"host": row.host, "vif_type": row.vif_type,
            "vif_details": as_dict(row.vif_details), "vnic_type": row.vnic_type,
            "profile": as_dict(row.profile), "status": status}


class BindingsExtended:
    """The bindings of a port: read, made, changed, activated, removed."""

    def __init__(self, core: Any, binding: PortBinding, casts: Casts) -> None:
        self.core, self.binding, self.casts = core, binding, casts

    # -- reads ----------------------------------------------------------------------

    def _port(self, conn: Connection, port_id: str, for_update: bool = False) -> Any:
        """The port, which must be one the compute (or shared file system)
        service owns; ``for_update``: locked, so bindings change one at a time."""
        query = sa.select(t.ports.c.id, t.ports.c.device_owner,
                          t.ports.c.network_id).where(t.ports.c.id == port_id)
        row = conn.execute(query.with_for_update() if for_update else query).first()
        if row is None:
            raise errors.PortNotFound(port_id=port_id)
        if not (row.device_owner or "").startswith(COMPUTE_OWNERS):
            raise errors.BadRequest(resource="port", msg=(
                f"Invalid port {port_id}. Operation only valid on compute and "
                f"shared filesystem ports"))
        return row

    def _all(self, conn: Connection, port_id: str) -> list[dict[str, Any]]:
        out = [_shown(r, ACTIVE_STATUS) for r in conn.execute(
            sa.select(B).where(B.c.port_id == port_id))]
        out += [_shown(r, INACTIVE_STATUS) for r in conn.execute(
            sa.select(INACTIVE).where(INACTIVE.c.port_id == port_id).order_by(INACTIVE.c.host))]
        return out

    def _one(self, conn: Connection, port_id: str, host: str) -> dict[str, Any]:
        for found in self._all(conn, port_id):
            if found["host"] == host:
                return found
        raise PortBindingNotFound(port_id=port_id, host=host)

    def list(self, port_id: str, filters: dict[str, list[str]],
             fields: list[str]) -> list[dict[str, Any]]:
        with self.core.db.reader() as conn:
            self._port(conn, port_id)
            found = self._all(conn, port_id)
        found = [b for b in found
                 if all(str(b[k]) in wanted for k, wanted in filters.items())]
        return [_only(b, fields) for b in found]

    def show(self, port_id: str, host: str, fields: list[str]) -> dict[str, Any]:
        with self.core.db.reader() as conn:
            self._port(conn, port_id)
            return _only(self._one(conn, port_id, host), fields)

    # -- writes ---------------------------------------------------------------------

    def create(self, port_id: str, body: Any) -> dict[str, Any]:
        asked = _binding_body(body, creating=True)
        host = asked["host"]

        def op(conn: Connection) -> dict[str, Any]:
            self._port(conn, port_id, for_update=True)
            if any(b["host"] == host for b in self._all(conn, port_id)):
                raise PortBindingAlreadyExists(port_id=port_id, host=host)
            vnic = asked.get("vnic_type", pb.VNIC_NORMAL)
            return self._bind_inactive(conn, port_id, host, vnic, asked.get("profile") or {},
                                       insert=True)
        return self.core.write(op)

    def update(self, port_id: str, host: str, body: Any) -> dict[str, Any]:
        """An inactive binding asked again (another VNIC type or profile); an
        active one is changed as the port's own binding attributes are."""
        asked = _binding_body(body, creating=False)
        with self.core.db.reader() as conn:
            self._port(conn, port_id)
            current = self._one(conn, port_id, host)
        if current["status"] == ACTIVE_STATUS:
            change = {pb.VNIC: asked.get("vnic_type", current["vnic_type"]),
                      pb.PROFILE: asked.get("profile", current["profile"])}
            port = self.core.update(Context.admin(), "ports", port_id, change)
            if port[pb.VIF_TYPE] == VIF_TYPE_BINDING_FAILED:
                raise PortBindingError(port_id=port_id, host=host)
            return self.show(port_id, host, [])

        def op(conn: Connection) -> dict[str, Any]:
            self._port(conn, port_id, for_update=True)
            found = self._one(conn, port_id, host)
            self.binding.drop_levels(conn, port_id, host)
            return self._bind_inactive(
                conn, port_id, host, asked.get("vnic_type", found["vnic_type"]),
                asked.get("profile", found["profile"]), insert=False)
        return self.core.write(op)

    def _bind_inactive(self, conn: Connection, port_id: str, host: str, vnic: str,
                       profile: dict[str, Any], insert: bool) -> dict[str, Any]:
        current = self.core.load_ports(conn, [port_id])[port_id]
        vif_type, details = self.binding.bind_elsewhere(conn, current, host, vnic, profile)
        if vif_type == VIF_TYPE_BINDING_FAILED:
            # The whole transaction goes back: nothing of the attempt stays.
            raise PortBindingError(port_id=port_id, host=host)
        values = {"vnic_type": vnic, "profile": json.dumps(profile), "vif_type": vif_type,
                  "vif_details": json.dumps(details) if details else ""}
        if insert:
            store.insert(conn, INACTIVE, {"port_id": port_id, "host": host, **values})
        else:
            conn.execute(sa.update(INACTIVE).where(INACTIVE.c.port_id == port_id,
                                                   INACTIVE.c.host == host).values(values))
        return self._one(conn, port_id, host)

    def activate(self, port_id: str, host: str) -> dict[str, Any]:
        """The inactive binding on ``host`` becomes the port's: the port moves
        there (DOWN until that host's agent wires it) and its binding on the
        former host stays, inactive and unbound, until deleted."""
        with self.core.db.reader() as conn:
            port = self._port(conn, port_id)
            found = {b["host"]: b for b in self._all(conn, port_id)}
        active = next((b for b in found.values() if b["status"] == ACTIVE_STATUS), None)
        if active is not None and active["host"] == host:
            raise PortBindingAlreadyActive(port_id=port_id, host=host)
        target = found.get(host)
        if target is None:
            raise PortBindingNotFound(port_id=port_id, host=host)
        former = active["host"] if active else ""
        said = {pb.HOST: host, pb.VNIC: target["vnic_type"], pb.PROFILE: target["profile"]}

        def apply(conn: Connection, original: dict[str, Any] | None) -> None:
            self._port(conn, port_id, for_update=True)
            row = conn.execute(sa.select(INACTIVE).where(
                INACTIVE.c.port_id == port_id, INACTIVE.c.host == host)).first()
            was = conn.execute(sa.select(B).where(B.c.port_id == port_id)).first()
            if row is None:  # activated or deleted meanwhile
                if was is not None and was.host == host:
                    raise PortBindingAlreadyActive(port_id=port_id, host=host)
                raise PortBindingNotFound(port_id=port_id, host=host)
            self.binding.unbind_many(conn, [port_id])  # the former host's levels go
            conn.execute(sa.delete(INACTIVE).where(INACTIVE.c.port_id == port_id,
                                                   INACTIVE.c.host == host))
            if was is not None and was.host:
                store.insert(conn, INACTIVE, {
                    "port_id": port_id, "host": was.host, "vnic_type": was.vnic_type,
                    "profile": was.profile, "vif_type": VIF_TYPE_UNBOUND, "vif_details": ""})
            conn.execute(sa.update(B).where(B.c.port_id == port_id).values(
                host=row.host, vnic_type=row.vnic_type, profile=row.profile,
                vif_type=row.vif_type, vif_details=row.vif_details))
            self.binding.awaiting_agent(conn, [port_id])
            store.bump(conn, t.ports, port_id)

        self.core.update_with(Context.admin(), "ports", port_id, said, apply)
        if former:
            self.casts.cast(topics.BINDING_DEACTIVATE, "binding_deactivate", fanout=True,
                            version="1.5", port_id=port_id, host=former,
                            network_id=port.network_id)
        self.casts.cast(topics.BINDING_ACTIVATE, "binding_activate", fanout=True,
                        version="1.5", port_id=port_id, host=host)
        return self.show(port_id, host, [])

    def delete(self, port_id: str, host: str) -> None:
        """An inactive binding goes with its levels; deleting the active one
        leaves the port unbound, as upstream's removal of its row does."""
        with self.core.db.reader() as conn:
            self._port(conn, port_id)
            active = conn.execute(sa.select(B.c.host).where(B.c.port_id == port_id)).scalar()
        if host and active == host:
            self.core.update(Context.admin(), "ports", port_id, {pb.HOST: ""})
            return

        def op(conn: Connection) -> None:
            self._port(conn, port_id, for_update=True)
            if not self.binding.drop_inactive(conn, {port_id: host}):
                raise PortBindingNotFound(port_id=port_id, host=host)
        self.core.write(op)


def _only(binding: dict[str, Any], fields: list[str]) -> dict[str, Any]:
    wanted = [f for f in fields if f in FIELDS]
    return {k: binding[k] for k in wanted} if wanted else binding


def extension(bindings: BindingsExtended) -> ApiExtension:
    def listed(api: Any, ctx: Context, fields: dict[str, str], body: Any) -> Any:
        return {"bindings": bindings.list(fields["rid"], *_query(body))}

    def created(api: Any, ctx: Context, fields: dict[str, str], body: Any) -> Any:
        return {"binding": bindings.create(fields["rid"], body)}

    def shown(api: Any, ctx: Context, fields: dict[str, str], body: Any) -> Any:
        return {"binding": bindings.show(fields["rid"], fields["child_id"], _query(body)[1])}

    def updated(api: Any, ctx: Context, fields: dict[str, str], body: Any) -> Any:
        return {"binding": bindings.update(fields["rid"], fields["child_id"], body)}

    def deleted(api: Any, ctx: Context, fields: dict[str, str], body: Any) -> Any:
        bindings.delete(fields["rid"], fields["child_id"])

    def activated(api: Any, ctx: Context, fields: dict[str, str], body: Any) -> Any:
        return {"binding": bindings.activate(fields["rid"], fields["child_id"])}

    return ApiExtension(descriptor=described(ALIAS), policies=list(POLICIES), routes=[
        CustomRoute("/ports/{rid}/bindings", {
            "GET": ("get_port_binding", 200, listed),
            "POST": ("create_port_binding", 201, created)}),
        CustomRoute("/ports/{rid}/bindings/{child_id}", {
            "GET": ("get_port_binding", 200, shown),
            "PUT": ("update_port_binding", 200, updated),
            "DELETE": ("delete_port_binding", 204, deleted)}),
        CustomRoute("/ports/{rid}/bindings/{child_id}/activate", {
            "PUT": ("activate", 200, activated)}),
    ])


def _query(params: Any) -> tuple[dict[str, list[str]], list[str]]:
    """The list's filters and ``fields`` from the query string's parameters."""
    params = params if isinstance(params, dict) else {}
    filters = {k: list(vals) for k, vals in params.items() if k in FILTERS}
    return filters, list(params.get("fields", []))

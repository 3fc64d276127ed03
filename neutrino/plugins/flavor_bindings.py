"""Which service profiles a flavor offers: ``/v2.0/flavors/{id}/service_profiles``.

Bind with ``POST {"service_profile": {"id": ...}}``, unbind with ``DELETE
.../service_profiles/{profile_id}``, ask with ``GET`` on the same URL. The
answers are upstream's, oddities included: a bind answers the flavor's id
as ``{"service_profile": {"id": <flavor id>}}`` and a binding shows as
``{"service_profile": {}}``, since upstream shapes its flavor and binding
records by the sub-resource's one attribute, ``id``. Where upstream fails
with a 500 (a missing flavor or profile, a list of bindings), the answer
here is the missing one's 404, or 405 for the list nobody serves.
"""
from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import store
from neutrino.plugins.base import CustomRoute
from neutrino.resources import validators as v

BIND = t.flavorserviceprofilebindings


def flavor_row(conn: Connection, flavor_id: str, for_update: bool = False) -> Any:
    return store.get_row(conn, t.flavors, flavor_id,
                         lambda: errors.FlavorNotFound(flavor_id=flavor_id),
                         for_update=for_update)


def profile_row(conn: Connection, sp_id: str, for_update: bool = False) -> Any:
    return store.get_row(conn, t.serviceprofiles, sp_id,
                         lambda: errors.ServiceProfileNotFound(sp_id=sp_id),
                         for_update=for_update)


def _bound(conn: Connection, flavor_id: str, sp_id: str) -> bool:
    return conn.execute(sa.select(sa.literal(1)).where(
        BIND.c.flavor_id == flavor_id, BIND.c.service_profile_id == sp_id)).first() is not None


def refuse_bound(conn: Connection, sp_id: str) -> None:
    """A profile some flavor offers stays as it is."""
    if conn.execute(sa.select(sa.literal(1)).where(
            BIND.c.service_profile_id == sp_id).limit(1)).first() is not None:
        raise errors.ServiceProfileInUse(sp_id=sp_id)


def profile_id_of(body: Any) -> str:
    """The profile a bind names, its body checked as upstream words it."""
    if not isinstance(body, dict):
        raise errors.HTTPBadRequest(msg="Body contains invalid data")
    if "service_profile" not in body:
        raise errors.HTTPBadRequest(msg="Resource body required")
    item = body["service_profile"]
    if not isinstance(item, dict):
        raise errors.HTTPBadRequest(msg="Object 'service_profile' contains invalid data")
    extra = [k for k in item if k != "id"]
    if extra:
        raise errors.HTTPBadRequest(msg=f"Unrecognized attribute(s) '{', '.join(extra)}'")
    if "id" not in item:
        raise errors.HTTPBadRequest(
            msg="Failed to parse request. Required attribute 'id' not specified")
    try:
        return v.uuid(item["id"])
    except v.Invalid as exc:
        raise errors.HTTPBadRequest(msg=f"Invalid input for id. Reason: {exc}.") from None


def bind(conn: Connection, flavor_id: str, sp_id: str) -> None:
    # Both rows locked: a profile being deleted or changed waits, then sees the binding.
    flavor_row(conn, flavor_id, for_update=True)
    profile_row(conn, sp_id, for_update=True)
    if _bound(conn, flavor_id, sp_id):
        raise errors.FlavorServiceProfileBindingExists(sp_id=sp_id, fl_id=flavor_id)
    conn.execute(sa.insert(BIND).values(flavor_id=flavor_id, service_profile_id=sp_id))


def unbind(conn: Connection, flavor_id: str, sp_id: str) -> None:
    gone = conn.execute(sa.delete(BIND).where(BIND.c.flavor_id == flavor_id,
                                              BIND.c.service_profile_id == sp_id))
    if not gone.rowcount:
        raise errors.FlavorServiceProfileBindingNotFound(sp_id=sp_id, fl_id=flavor_id)


def routes(plugin: Any) -> list[CustomRoute]:
    def create(api: Any, ctx: Context, fields: dict[str, str], body: Any) -> Any:
        sp_id = profile_id_of(body)
        plugin.core.write(lambda conn: bind(conn, fields["rid"], sp_id))
        return {"service_profile": {"id": fields["rid"]}}

    def show(api: Any, ctx: Context, fields: dict[str, str], body: Any) -> Any:
        with plugin.core.db.reader() as conn:
            if not _bound(conn, fields["rid"], fields["child_id"]):
                raise errors.FlavorServiceProfileBindingNotFound(
                    sp_id=fields["child_id"], fl_id=fields["rid"])
        return {"service_profile": {}}

    def delete(api: Any, ctx: Context, fields: dict[str, str], body: Any) -> Any:
        plugin.core.write(lambda conn: unbind(conn, fields["rid"], fields["child_id"]))

    return [
        CustomRoute("/flavors/{rid}/service_profiles", {
            "POST": ("create_flavor_service_profile", 201, create)}),
        CustomRoute("/flavors/{rid}/service_profiles/{child_id}", {
            "GET": ("get_flavor_service_profile", 200, show),
            "DELETE": ("delete_flavor_service_profile", 204, delete)}),
    ]

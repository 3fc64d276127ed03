"""The ``flavors`` service plugin: flavors of advanced services and the
service profiles behind them.

A flavor names a service type some loaded plugin provides (checked with the
body, before policy, as upstream validates it); a profile names the driver
of a known provider (``[service_providers]`` or a plugin's own) or carries
metainfo. Profiles are bound to flavors through
``/v2.0/flavors/{id}/service_profiles`` (``flavor_bindings``); a bound
profile can be neither changed nor deleted. A flavor is in use while a row
of another table names it without ON DELETE (routers, with ``l3-flavors``),
which is what upstream's foreign keys decide.
"""
from __future__ import annotations

from typing import Any, Callable, TypeVar

import sqlalchemy as sa
from oslo_policy import policy
from sqlalchemy import Column, Connection, MetaData

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import flavor_bindings, store
from neutrino.plugins.base import ApiExtension, RequestHook, ServicePlugin
from neutrino.plugins.flavor_bindings import flavor_row, profile_row
from neutrino.resources import flavors as res

T = TypeVar("T")
FL = t.flavors
SP = t.serviceprofiles
BIND = t.flavorserviceprofilebindings
ADMIN = "rule:admin_only"
ADMIN_OR_PROJECT_READER = "(rule:admin_only) or (role:reader and project_id:%(project_id)s)"


def restricting_references(metadata: MetaData, table: str) -> list[Column[Any]]:
    """Columns of ``metadata`` whose foreign key to ``table`` neither
    cascades nor nulls on delete: a row there keeps the referred row."""
    out = []
    for other in metadata.tables.values():
        for fk in other.foreign_keys:
            ondelete = (fk.ondelete or "").upper()
            if fk.column.table.name == table and ondelete not in ("CASCADE", "SET NULL"):
                out.append(fk.parent)
    return out


def _flavor_dicts(conn: Connection, rows: Any) -> list[dict[str, Any]]:
    bound = store.children(conn, BIND, "flavor_id", [r.id for r in rows],
                           order_by=(BIND.c.service_profile_id,))
    return [{"id": r.id, "name": r.name, "description": r.description,
             "service_type": r.service_type, "enabled": r.enabled,
             "service_profiles": [b.service_profile_id for b in bound.get(r.id, [])]}
            for r in rows]


def _profile_dict(row: Any) -> dict[str, Any]:
    return {"id": row.id, "description": row.description, "driver": row.driver,
            "enabled": row.enabled, "metainfo": row.metainfo}


class _Collection:
    """What both collections share: the core plugin's transactions."""

    def __init__(self, plugin: FlavorsPlugin) -> None:
        self.plugin = plugin

    def write(self, fn: Callable[[Connection], T]) -> T:
        return self.plugin.core.write(fn)  # type: ignore[no-any-return]

    def reader(self) -> Any:
        return self.plugin.core.db.reader()


class Flavors(_Collection):
    """``flavors``: admins write them, readers read them."""

    def create(self, ctx: Context, plural: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        rows = [{"id": store.new_id(), "name": item["name"], "description": item["description"],
                 "service_type": item["service_type"],
                 "enabled": item["enabled"] is not False} for item in items]

        def op(conn: Connection) -> list[dict[str, Any]]:
            conn.execute(sa.insert(FL), rows)
            return [{**row, "service_profiles": []} for row in rows]
        return self.write(op)

    def get(self, ctx: Context, plural: str, rid: str) -> dict[str, Any]:
        with self.reader() as conn:
            return _flavor_dicts(conn, [flavor_row(conn, rid)])[0]

    def list(self, ctx: Context, plural: str,
             query: store.ListQuery) -> tuple[list[dict[str, Any]], bool]:
        clauses = store.column_clauses(FL, query.filters, {})
        with self.reader() as conn:
            rows, more = store.paged_select(conn, FL, clauses, query)
            return _flavor_dicts(conn, rows), more

    def update(self, ctx: Context, plural: str, rid: str, data: dict[str, Any],
               revision: int | None = None) -> dict[str, Any]:
        values = {k: data[k] for k in ("name", "description") if k in data}
        if data.get("enabled") is not None:
            values["enabled"] = data["enabled"]

        def op(conn: Connection) -> dict[str, Any]:
            flavor_row(conn, rid, for_update=True)
            if values:
                conn.execute(sa.update(FL).where(FL.c.id == rid).values(**values))
            return _flavor_dicts(conn, [flavor_row(conn, rid)])[0]
        return self.write(op)

    def delete(self, ctx: Context, plural: str, rid: str, revision: int | None = None) -> None:
        def op(conn: Connection) -> None:
            flavor_row(conn, rid, for_update=True)
            for column in restricting_references(t.metadata, FL.name):
                if conn.execute(sa.select(sa.literal(1)).where(column == rid).limit(1)).first():
                    raise errors.FlavorInUse(flavor_id=rid)
            conn.execute(sa.delete(BIND).where(BIND.c.flavor_id == rid))
            conn.execute(sa.delete(FL).where(FL.c.id == rid))
        self.write(op)


class ServiceProfiles(_Collection):
    """``service_profiles``: admin only; a bound one is fixed."""

    def create(self, ctx: Context, plural: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        rows = []
        for item in items:
            if item["driver"]:
                self.plugin.check_driver(item["driver"])
            elif not item["metainfo"]:
                raise errors.ServiceProfileEmpty()
            rows.append({"id": store.new_id(), "description": item["description"],
                         "driver": item["driver"], "enabled": item["enabled"] is not False,
                         "metainfo": item["metainfo"]})

        def op(conn: Connection) -> list[dict[str, Any]]:
            conn.execute(sa.insert(SP), rows)
            return [dict(row) for row in rows]
        return self.write(op)

    def get(self, ctx: Context, plural: str, rid: str) -> dict[str, Any]:
        with self.reader() as conn:
            return _profile_dict(profile_row(conn, rid))

    def list(self, ctx: Context, plural: str,
             query: store.ListQuery) -> tuple[list[dict[str, Any]], bool]:
        clauses = store.column_clauses(SP, query.filters, {})
        with self.reader() as conn:
            rows, more = store.paged_select(conn, SP, clauses, query)
        return [_profile_dict(r) for r in rows], more

    def update(self, ctx: Context, plural: str, rid: str, data: dict[str, Any],
               revision: int | None = None) -> dict[str, Any]:
        if data.get("driver"):
            self.plugin.check_driver(data["driver"])
        values = {k: data[k] for k in ("description", "driver", "metainfo") if k in data}
        if data.get("enabled") is not None:
            values["enabled"] = data["enabled"]

        def op(conn: Connection) -> dict[str, Any]:
            profile_row(conn, rid, for_update=True)
            flavor_bindings.refuse_bound(conn, rid)
            if values:
                conn.execute(sa.update(SP).where(SP.c.id == rid).values(**values))
            return _profile_dict(profile_row(conn, rid))
        return self.write(op)

    def delete(self, ctx: Context, plural: str, rid: str, revision: int | None = None) -> None:
        def op(conn: Connection) -> None:
            profile_row(conn, rid, for_update=True)
            flavor_bindings.refuse_bound(conn, rid)
            conn.execute(sa.delete(SP).where(SP.c.id == rid))
        self.write(op)


class FlavorBodies(RequestHook):
    """What upstream refuses of a flavor or profile create before its
    policy: a bulk create, and a service type no loaded plugin provides."""

    def __init__(self, plugin: FlavorsPlugin) -> None:
        self.plugin = plugin

    def on_request(self, ctx: Context, method: str, plural: str, body: Any) -> None:
        if method != "POST" or plural not in ("flavors", "service_profiles"):
            return
        if not isinstance(body, dict):
            return
        if plural in body:
            raise errors.HTTPBadRequest(msg="Bulk operation not supported")
        item = body.get("flavor") if plural == "flavors" else None
        if isinstance(item, dict) and "service_type" in item:
            self.plugin.check_service_type(item["service_type"])


class FlavorsPlugin(ServicePlugin):
    """Neutron Flavors and Service Profiles manager plugin."""

    service_type = "FLAVORS"
    supported_extension_aliases = (res.FLAVORS.alias,)

    def __init__(self, conf: Any, db: Any) -> None:
        super().__init__(conf, db)
        self.flavors = Flavors(self)
        self.profiles = ServiceProfiles(self)
        self.directory: Any = None

    def bind(self, plugins: Any) -> None:
        self.directory = plugins

    def check_service_type(self, service_type: Any) -> None:
        """A flavor's type is one a loaded plugin provides (the core's too, as upstream)."""
        loaded = self.directory.services if self.directory is not None else {}
        if not (isinstance(service_type, str) and service_type in loaded):
            raise errors.InvalidServiceType(service_type=service_type)

    def check_driver(self, driver: str) -> None:
        """A profile's driver is a known provider's."""
        providers = self.directory.services.get("SERVICE_TYPE") if self.directory else None
        if providers is None or not providers.with_driver(driver):
            raise errors.ServiceProfileDriverNotFound(driver=driver)

    def collections(self) -> dict[str, Any]:
        return {"flavors": self.flavors, "service_profiles": self.profiles}

    def extensions(self) -> list[ApiExtension]:
        rules = [policy.RuleDefault("get_flavor", "role:reader", scope_types=["project"]),
                 policy.RuleDefault("get_flavor_service_profile", ADMIN_OR_PROJECT_READER,
                                    scope_types=["project"])]
        rules += [policy.RuleDefault(f"{verb}_flavor", ADMIN, scope_types=["project"])
                  for verb in ("create", "update", "delete")]
        rules += [policy.RuleDefault(f"{verb}_service_profile", ADMIN, scope_types=["project"])
                  for verb in ("create", "get", "update", "delete")]
        rules += [policy.RuleDefault(f"{verb}_flavor_service_profile", ADMIN,
                                     scope_types=["project"]) for verb in ("create", "delete")]
        return [ApiExtension(descriptor=res.FLAVORS,
                             resources=[res.FLAVOR, res.SERVICE_PROFILE],
                             request_hooks=[FlavorBodies(self)], policies=rules,
                             routes=flavor_bindings.routes(self))]

"""Flavor profiles, flavors, availability zone profiles and availability
zones: what an admin defines for load balancers to name. A profile holds a
provider's opaque data (a JSON string the provider validates); a flavor or
zone names a profile. Profiles, flavors and zones in use cannot go (409)."""
from __future__ import annotations

import json
import uuid
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins.octavia import faults, store, validate
from neutrino.plugins.octavia import provider_api as papi
from neutrino.resources import octavia as res

D = t.octavia_definitions
# kind -> (the profile kind it names, the attribute naming it, its data attribute)
NAMES = {"flavor": ("flavorprofile", "flavor_profile_id"),
         "availability_zone": ("availability_zone_profile", "availability_zone_profile_id")}
DATA = {"flavorprofile": "flavor_data", "availability_zone_profile": "availability_zone_data"}
USED_BY_LB = {"flavor": "flavor_id", "availability_zone": "availability_zone"}


class Definitions:
    def __init__(self, plugin: Any) -> None:
        self.plugin = plugin

    def find(self, kind: str, key: str) -> dict[str, Any] | None:
        with self.plugin.db.reader() as conn:
            return self._find(conn, kind, key)

    @staticmethod
    def _find(conn: Connection, kind: str, key: str) -> dict[str, Any] | None:
        row = conn.execute(sa.select(D.c.attrs).where(D.c.kind == kind, D.c.key == key)).first()
        return None if row is None else dict(json.loads(row.attrs))

    @staticmethod
    def _all(conn: Connection, kind: str) -> list[dict[str, Any]]:
        return [dict(json.loads(r.attrs)) for r in conn.execute(
            sa.select(D.c.attrs).where(D.c.kind == kind).order_by(D.c.key)).all()]

    def _view(self, kind: str, item: dict[str, Any]) -> dict[str, Any]:
        return {name: item.get(name) for name in res.DEFINITIONS[kind].shown}

    def _not_found(self, kind: str, key: str) -> faults.Fault:
        return faults.NotFound(resource=res.DEFINITIONS[kind].not_found, id=key)

    def get(self, ctx: Context, kind: str, key: str) -> dict[str, Any]:
        rdef = res.DEFINITIONS[kind]
        self.plugin.policy.authorize(ctx, rdef.policy, "get_one", ctx.project_id)
        item = self.find(kind, key)
        if item is None:
            raise self._not_found(kind, key)
        return self._view(kind, item)

    def list(self, ctx: Context, kind: str) -> list[dict[str, Any]]:
        rdef = res.DEFINITIONS[kind]
        self.plugin.policy.authorize(ctx, rdef.policy, "get_all", ctx.project_id)
        with self.plugin.db.reader() as conn:
            return [self._view(kind, item) for item in self._all(conn, kind)]

    def _check_data(self, kind: str, item: dict[str, Any]) -> None:
        if kind not in DATA:
            return
        provider = item["provider_name"]
        if provider not in self.plugin.conf.octavia.enabled_provider_drivers:
            raise faults.ProviderNotEnabled(prov=provider)
        text = item[DATA[kind]]
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise faults.BadRequest(f"Invalid input for field/attribute {DATA[kind]}. Value: "
                                    f"'{text}'. Value should be a JSON object")
        driver = self.plugin.provider(provider)
        try:
            if kind == "flavorprofile":
                driver.validate_flavor(data)
            else:
                driver.validate_availability_zone(data)
        except papi.UnsupportedOption as exc:
            raise faults.ProviderUnsupported(prov=provider, user_msg=str(exc)) from None

    def create(self, ctx: Context, kind: str, body: Any) -> dict[str, Any]:
        rdef = res.DEFINITIONS[kind]
        self.plugin.policy.authorize(ctx, rdef.policy, "post", ctx.project_id)
        item = validate.check(rdef, validate.body_of(body, rdef.singular), creating=True)
        self._check_data(kind, item)
        if kind == "availability_zone":
            key = item["name"]
        else:
            key = item["id"] = str(uuid.uuid4())

        def op(conn: Connection) -> None:
            if kind in NAMES:
                profile_kind, attr = NAMES[kind]
                if self._find(conn, profile_kind, item[attr]) is None:
                    raise faults.InvalidSubresource(
                        resource=res.DEFINITIONS[profile_kind].not_found, id=item[attr])
            taken = [x for x in self._all(conn, kind) if x.get("name") == item["name"]]
            if taken and kind in ("flavor", "availability_zone"):
                raise faults.RecordExists(field=kind, name=item["name"])
            conn.execute(sa.insert(D).values(kind=kind, key=key, attrs=json.dumps(item)))
        self.plugin.write(op)
        return self._view(kind, item)

    def update(self, ctx: Context, kind: str, key: str, body: Any) -> dict[str, Any]:
        rdef = res.DEFINITIONS[kind]
        self.plugin.policy.authorize(ctx, rdef.policy, "put", ctx.project_id)
        changes = validate.check(rdef, validate.body_of(body, rdef.singular), creating=False)

        def op(conn: Connection) -> dict[str, Any]:
            item = self._find(conn, kind, key)
            if item is None:
                raise self._not_found(kind, key)
            for name, value in changes.items():
                if value is None and name in ("name", "provider_name", DATA.get(kind)):
                    raise faults.InvalidInput(name, None, "Mandatory field missing.")
            if kind in DATA and ({"provider_name", DATA[kind]} & set(changes)) and \
                    self._in_use(conn, kind, key):
                raise faults.ObjectInUse(object=rdef.not_found, id=key)
            item.update({k: v for k, v in changes.items() if v is not None or k == "description"})
            if kind in ("flavor", "availability_zone") and item.get("description") is None:
                item["description"] = ""
            self._check_data(kind, item)
            conn.execute(sa.update(D).where(D.c.kind == kind, D.c.key == key).values(
                attrs=json.dumps(item)))
            return item
        return self._view(kind, self.plugin.write(op))

    def _in_use(self, conn: Connection, kind: str, key: str) -> bool:
        if kind in USED_BY_LB:
            attr = USED_BY_LB[kind]
            return any(o.get(attr) == key for o in store.of_projects(conn, None)
                       if o["kind"] == "loadbalancer")
        users = [k for k, (profile, _) in NAMES.items() if profile == kind]
        return any(x.get(NAMES[u][1]) == key for u in users for x in self._all(conn, u))

    def delete(self, ctx: Context, kind: str, key: str) -> None:
        rdef = res.DEFINITIONS[kind]
        self.plugin.policy.authorize(ctx, rdef.policy, "delete", ctx.project_id)

        def op(conn: Connection) -> None:
            if self._find(conn, kind, key) is None:
                raise self._not_found(kind, key)
            if self._in_use(conn, kind, key):
                raise faults.ObjectInUse(object=rdef.not_found, id=key)
            conn.execute(sa.delete(D).where(D.c.kind == kind, D.c.key == key))
        self.plugin.write(op)

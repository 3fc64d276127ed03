"""``auto-allocated-topology`` (``service_plugins = auto_allocate``).

``GET /v2.0/auto-allocated-topology/{project_id}`` gives a project a
network, subnets from the default subnet pools and a router with its
gateway on the default external network, built once: the project's row
in ``auto_allocated_topologies`` is the lock, and a request losing the
race removes what it built and answers the winner's network, as upstream.
``?fields=dry-run`` only checks that a topology could be built.
External networks gain ``is_default`` (admin only; one per deployment).
"""
from __future__ import annotations

import logging
from typing import Any

import sqlalchemy as sa
from oslo_policy import policy
from sqlalchemy import Connection
from sqlalchemy import exc as sa_exc

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins.base import ApiExtension, AttributeHandler, ServicePlugin
from neutrino.plugins.l3 import common as c
from neutrino.plugins.loader import PluginLoadError
from neutrino.resources import auto_allocate as res
from neutrino.resources import core as core_res
from neutrino.resources.attributes import UNSET, ResourceDef
from neutrino.resources.extensions import described

LOG = logging.getLogger(__name__)

AUTO_ALLOCATED_TOPOLOGY = described("auto-allocated-topology")
DRY_RUN = "dry-run"
POLICIES = {
    "get_auto_allocated_topology":
        "(rule:admin_only) or (role:reader and project_id:%(project_id)s)",
    "delete_auto_allocated_topology":
        "(rule:admin_only) or (role:member and project_id:%(project_id)s)",
}  # ``create_network:is_default`` and ``update_network:is_default`` are core defaults
_DEFAULT_KEY = 1  # the single row of ``default_external_network``


def failure(reason: str) -> errors.AutoAllocationFailure:
    return errors.AutoAllocationFailure(reason=reason)


def default_external(conn: Connection) -> str | None:
    d = t.default_external_network.c
    return conn.execute(sa.select(d.network_id)).scalar()


class IsDefault(AttributeHandler):
    """``is_default`` of external networks; other networks do not show it."""

    def __init__(self, plugin: "AutoAllocatePlugin") -> None:
        self.plugin = plugin

    def process(self, ctx: Context, plural: str, data: dict[str, Any],
                result: dict[str, Any], creating: bool) -> None:
        if not result.get("router:external"):
            if not creating and "router:external" in data:
                # No longer external: no longer the default either.
                self.plugin.core.write(lambda conn: self._set(conn, result["id"], False))
        elif "is_default" in data:
            try:
                self.plugin.core.write(
                    lambda conn: self._set(conn, result["id"], bool(data["is_default"])))
            except errors.DefaultExternalNetworkExists:
                if creating:  # nothing half-created
                    self.plugin.core.delete(c.internal(), "networks", result["id"])
                raise
        if creating:  # an updated network is extended by the controller
            self.extend(ctx, plural, [result])

    def _set(self, conn: Connection, network_id: str, value: bool) -> None:
        d = t.default_external_network.c
        current = default_external(conn)
        if not value:
            if current == network_id:
                conn.execute(sa.delete(t.default_external_network))
            return
        if current == network_id:
            return
        if current is not None:
            raise errors.DefaultExternalNetworkExists(net_id=current)
        try:
            with conn.begin_nested():
                conn.execute(sa.insert(t.default_external_network).values(
                    singleton=_DEFAULT_KEY, network_id=network_id))
        except sa_exc.IntegrityError:
            raise errors.DefaultExternalNetworkExists(
                net_id=conn.execute(sa.select(d.network_id)).scalar() or "") from None

    def extend(self, ctx: Context, plural: str, items: list[dict[str, Any]]) -> None:
        if not any(i.get("router:external") for i in items):
            for item in items:
                item.pop("is_default", None)
            return
        with self.plugin.db.reader() as conn:
            default = default_external(conn)
        for item in items:
            if item.get("router:external"):
                item["is_default"] = item["id"] == default
            else:
                item.pop("is_default", None)


def _with_defaults(rdef: ResourceDef, item: dict[str, Any]) -> dict[str, Any]:
    """A create request as the API would hand it to the core plugin."""
    out = dict(item)
    for name, a in rdef.attributes.items():
        if a.allow_post and name not in out and a.default is not UNSET:
            out[name] = a.default
    out["tenant_id"] = out.get("project_id")
    return out


class Topologies:
    """Serves ``auto_allocated_topologies``: show (building once) and delete."""

    def __init__(self, plugin: "AutoAllocatePlugin") -> None:
        self.plugin = plugin
        self.defs = core_res.core_resources()

    @property
    def core(self) -> Any:
        return self.plugin.core

    def _project(self, ctx: Context, project_id: str) -> str:
        if project_id == "None":
            project_id = ctx.project_id or ""
        if not ctx.is_admin and project_id != ctx.project_id:
            raise errors.NotAuthorized()
        return project_id

    def _row(self, project_id: str) -> Any:
        a = t.auto_allocated_topologies.c
        with self.plugin.db.reader() as conn:
            return conn.execute(sa.select(t.auto_allocated_topologies)
                                .where(a.project_id == project_id)).first()

    def _requirements(self) -> tuple[str, list[Any]]:
        with self.plugin.db.reader() as conn:
            external = default_external(conn)
            if external is None:
                raise failure("No default router:external network")
            p = t.subnetpools.c
            pools = list(conn.execute(sa.select(p.id, p.ip_version).where(
                p.is_default.is_(True)).order_by(p.ip_version, p.created_at)))
        by_version = {pool.ip_version: pool for pool in reversed(pools)}
        if not by_version:
            raise failure("No default subnetpools defined")
        return external, [by_version[ver] for ver in sorted(by_version)]

    def get(self, ctx: Context, plural: str, project_id: str) -> dict[str, Any]:
        project_id = self._project(ctx, project_id)
        fields, ctx.fields = ctx.fields or [], None
        if DRY_RUN in fields:
            self._requirements()
            return {"id": "dry-run=pass", "project_id": project_id}
        if fields:
            raise errors.BadRequest(resource="auto_allocate", msg="Unrecognized field")
        row = self._row(project_id)
        if row is None:
            external, pools = self._requirements()
            network_id = self._build(project_id, external, pools)
        else:
            network_id = row.network_id
        return {"id": network_id, "project_id": project_id, "tenant_id": project_id}

    def _build(self, project_id: str, external: str, pools: list[Any]) -> str:
        admin = c.internal()
        net = self.core.create(admin, "networks", [_with_defaults(self.defs["networks"], {
            "name": "auto_allocated_network", "admin_state_up": False,
            "project_id": project_id, "shared": False})])[0]
        router_id = None
        subnets: list[str] = []
        try:
            try:
                for pool in pools:
                    subnets.append(self.core.create(admin, "subnets", [_with_defaults(
                        self.defs["subnets"], {
                            "name": f"auto_allocated_subnet_v{pool.ip_version}",
                            "network_id": net["id"], "project_id": project_id,
                            "ip_version": pool.ip_version, "subnetpool_id": pool.id})])[0]["id"])
            except (errors.BadRequest, errors.NotFound, errors.Conflict) as exc:
                LOG.warning("auto-allocation for %s: no private network: %s", project_id, exc)
                raise failure("Unable to provide project private network") from None
            try:
                router_id = self.plugin.l3.routers.create(admin, "routers", [{
                    "name": "auto_allocated_router", "project_id": project_id,
                    "tenant_id": project_id, "admin_state_up": True, "description": "",
                    "tags": [], "external_gateway_info": {"network_id": external}}])[0]["id"]
                for subnet_id in subnets:
                    self.plugin.l3.interfaces.add(admin, router_id, {"subnet_id": subnet_id})
            except (errors.BadRequest, errors.NotFound, errors.Conflict) as exc:
                LOG.warning("auto-allocation for %s: no external connectivity: %s",
                            project_id, exc)
                raise failure("Unable to provide external connectivity") from None
            winner = self.core.write(lambda conn: self._save(conn, project_id, net["id"],
                                                             router_id))
        except Exception:
            self._cleanup(net["id"], router_id, subnets)
            raise
        if winner != net["id"]:
            self._cleanup(net["id"], router_id, subnets)
            return winner
        self.core.update(admin, "networks", net["id"], {"admin_state_up": True})
        return net["id"]

    def _save(self, conn: Connection, project_id: str, network_id: str,
              router_id: str | None) -> str:
        """Record the topology; if another request won the race, its network."""
        try:
            with conn.begin_nested():
                conn.execute(sa.insert(t.auto_allocated_topologies).values(
                    project_id=project_id, network_id=network_id, router_id=router_id))
            return network_id
        except sa_exc.IntegrityError:
            a = t.auto_allocated_topologies.c
            return str(conn.execute(sa.select(a.network_id)
                                    .where(a.project_id == project_id)).scalar())

    def _cleanup(self, network_id: str, router_id: str | None, subnets: list[str]) -> None:
        admin = c.internal()
        if router_id:
            for subnet_id in subnets:
                try:
                    self.plugin.l3.interfaces.remove(admin, router_id, {"subnet_id": subnet_id})
                except errors.NotFound:
                    pass
            try:
                self.plugin.l3.routers.delete(admin, "routers", router_id)
            except errors.NotFound:
                pass
        try:
            self.core.delete(admin, "networks", network_id)
        except errors.NotFound:
            pass

    def delete(self, ctx: Context, plural: str, project_id: str,
               revision: int | None = None) -> None:
        project_id = self._project(ctx, project_id)
        row = self._row(project_id)
        if row is None:
            return
        with self.plugin.db.reader() as conn:
            subnets = [r.id for r in conn.execute(sa.select(t.subnets.c.id).where(
                t.subnets.c.network_id == row.network_id))]
        self._cleanup(row.network_id, row.router_id, subnets)

    def list(self, ctx: Context, plural: str, query: Any) -> Any:
        raise errors.MethodNotAllowed()

    def create(self, *args: Any, **kwargs: Any) -> Any:
        raise errors.MethodNotAllowed()

    update = create


class AutoAllocatePlugin(ServicePlugin):
    """Auto-allocated topologies (get me a network)."""

    service_type = "AUTO_ALLOCATE"
    supported_extension_aliases = (AUTO_ALLOCATED_TOPOLOGY.alias,)

    def __init__(self, conf: Any, db: Any) -> None:
        super().__init__(conf, db)
        self.topologies = Topologies(self)
        self.l3: Any = None

    def bind(self, plugins: Any) -> None:
        self.l3 = plugins.services.get("L3_ROUTER_NAT")
        if self.l3 is None:
            raise PluginLoadError("[DEFAULT] service_plugins: 'auto_allocate' needs the "
                                  "'router' service plugin")

    def collections(self) -> dict[str, Any]:
        return {"auto_allocated_topologies": self.topologies}

    def extensions(self) -> list[ApiExtension]:
        return [ApiExtension(
            descriptor=AUTO_ALLOCATED_TOPOLOGY, resources=[res.TOPOLOGY],
            attributes=res.IS_DEFAULT, attribute_handler=IsDefault(self),
            policies=[policy.RuleDefault(name, check, scope_types=["project"])
                      for name, check in POLICIES.items()])]

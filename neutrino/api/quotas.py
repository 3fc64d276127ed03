"""The quotas API (``quotas``, ``quota_details``, ``quota-check-limit``)."""
from __future__ import annotations

from typing import Any

import falcon

from neutrino import errors
from neutrino.api.controller import Api, send
from neutrino.api.hooks import body as body_mod
from neutrino.context import Context
from neutrino.plugins.quotas import Quotas
from neutrino.resources import validators as v

_limit = v.integer(-1)


def _limits(item: dict[str, Any], resources: list[str]) -> dict[str, int]:
    """The body's limits, judged as upstream's request body: unknown keys
    first (an owner in the body counts as both of its names), then each
    resource in the registry's order, converted then range-checked."""
    unknown = set(item) - set(resources)
    if unknown & {"project_id", "tenant_id"}:
        unknown |= {"project_id", "tenant_id"}
    if unknown:
        raise errors.HTTPBadRequest(msg=f"Unrecognized attribute(s) '{', '.join(sorted(unknown))}'")
    limits = {}
    for name in resources:
        if name not in item:
            continue
        try:
            limits[name] = _limit(v.to_int(item[name]))
        except v.NotConvertible as exc:
            raise errors.InvalidInput(error_message=str(exc)) from None
        except v.Invalid as exc:
            raise errors.HTTPBadRequest(msg=f"Invalid input for {name}. Reason: {exc}.") from None
    # Checked against the usage in the body's order, as upstream.
    return {name: limits[name] for name in item}


def _target(project_id: str) -> dict[str, Any]:
    return {"project_id": project_id, "tenant_id": project_id}


class _Base:
    def __init__(self, api: Api) -> None:
        self.api = api
        self.quotas = Quotas(api.plugin)

    def authorize(self, ctx: Context, action: str, project_id: str) -> None:
        # A project may always read its own quota, as upstream.
        if action == "get_quota" and project_id == ctx.project_id:
            return
        self.api.policy.enforce(ctx, action, _target(project_id))


class QuotaList(_Base):
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        ctx: Context = req.context.neutron
        if not ctx.is_admin:
            raise errors.PolicyNotAuthorized(action="get_quota")
        quotas = [{**limits, "project_id": project, "tenant_id": project}
                  for project, limits in self.quotas.limits_by_project().items()]
        send(resp, 200, {"quotas": quotas})


class Quota(_Base):
    def on_get(self, req: falcon.Request, resp: falcon.Response, project_id: str) -> None:
        self.authorize(req.context.neutron, "get_quota", project_id)
        send(resp, 200, {"quota": self.quotas.limits(project_id)})

    def on_put(self, req: falcon.Request, resp: falcon.Response, project_id: str) -> None:
        # Policy before the body, as upstream: a caller who may not set
        # quotas learns nothing from how its body would have been judged.
        self.authorize(req.context.neutron, "update_quota", project_id)
        raw = body_mod.parse_json(req.bounded_stream.read())
        if not isinstance(raw, dict) or not isinstance(raw.get("quota"), dict):
            raise errors.BadRequest(resource="quota", msg="Unable to find 'quota' in request body")
        item = dict(raw["quota"])
        # Only a JSON true forces; ``check_limit`` is accepted and ignored
        # (upstream checks the usage by default since 2025.1).
        force = item.pop("force", None) is True
        item.pop("check_limit", None)
        limits = _limits(item, self.quotas.names())
        send(resp, 200, {"quota": self.quotas.set_limits(project_id, limits, not force)})

    def on_delete(self, req: falcon.Request, resp: falcon.Response, project_id: str) -> None:
        self.authorize(req.context.neutron, "delete_quota", project_id)
        self.quotas.reset(project_id)
        send(resp, 204)


class QuotaDefault(_Base):
    def on_get(self, req: falcon.Request, resp: falcon.Response, project_id: str) -> None:
        self.authorize(req.context.neutron, "get_quota", project_id)
        send(resp, 200, {"quota": self.quotas.defaults()})


class QuotaDetails(_Base):
    def on_get(self, req: falcon.Request, resp: falcon.Response, project_id: str) -> None:
        self.authorize(req.context.neutron, "get_quota", project_id)
        send(resp, 200, {"quota": self.quotas.details(project_id)})


def add_routes(app: falcon.App, api: Api) -> None:
    app.add_route("/v2.0/quotas", QuotaList(api))
    app.add_route("/v2.0/quotas/{project_id}", Quota(api))
    app.add_route("/v2.0/quotas/{project_id}/default", QuotaDefault(api))
    app.add_route("/v2.0/quotas/{project_id}/details", QuotaDetails(api))

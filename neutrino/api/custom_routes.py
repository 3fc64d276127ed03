"""Serves an extension's ``CustomRoute``: body parsing, policy, the handler.

Upstream's resource extensions with their own controllers (the agent
schedulers' ``/agents/{id}/l3-routers``, ``/routers/{id}/l3-agents``)
check one policy rule against an empty target and hand the request to the
plugin; their answers are whatever the plugin returns (a POST that returns
nothing answers ``null``), except for what the plugin answers as data
(``neutrino.plugins.routes``): items of another collection, shown as that
collection's API shows them, or a notification to send. A method the route
does not declare is 405.
"""
from __future__ import annotations

from typing import Any

import falcon
import orjson

from neutrino.api.controller import params_of
from neutrino.api.hooks import body as body_mod
from neutrino.api.hooks.policy import Shaper, Targets
from neutrino.context import Context
from neutrino.db.query import ListQuery
from neutrino.plugins.routes import Announced, Listed


class Route:
    def __init__(self, api: Any, route: Any) -> None:
        self.api, self.route = api, route
        for method in route.methods:
            setattr(self, f"on_{method.lower()}", self._handler(method))

    def _handler(self, method: str) -> Any:
        rule, status, handler = self.route.methods[method]

        def serve(req: falcon.Request, resp: falcon.Response, **fields: str) -> None:
            ctx: Context = req.context.neutron
            body: Any = None
            if method == "GET":
                body = params_of(req)
            elif method in ("POST", "PUT"):
                raw = req.bounded_stream.read()
                # A member action's PUT may come without a body (``activate``).
                if raw or method == "POST":
                    body = body_mod.parse_json(raw)
            self.api.policy.enforce(ctx, rule, {})
            result = answer(self.api, ctx, handler(self.api, ctx, fields, body))
            resp.status = status
            if status == 204:
                resp.data = b""
                resp.content_type = None
                return
            resp.data = orjson.dumps(result)
            resp.content_type = "application/json"
        return serve


def answer(api: Any, ctx: Context, result: Any) -> Any:
    """The JSON answer of what a route handler returned."""
    if isinstance(result, Announced):
        api.notifier.event(ctx, result.event, result.payload)
        return result.answer
    if isinstance(result, Listed):
        return {result.plural: listed(api, ctx, result.plural, result.ids)}
    return result


def listed(api: Any, ctx: Context, plural: str, ids: list[str]) -> list[dict[str, Any]]:
    """Items of ``plural`` by id, as its own API shows them to the caller."""
    if not ids:
        return []
    rdef = api.resources[plural]
    items, _ = api.plugin_for(plural).list(ctx, plural, ListQuery(filters={"id": ids}))
    api.extend(ctx, plural, items)
    shaper = Shaper(api, rdef, ctx, Targets(api.plugin, ctx))
    return [shaper.shape(i, None) for i in items]

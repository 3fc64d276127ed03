"""The WSGI application: routes, the context hook, error translation.

Falcon does the routing and request parsing (a small, fast WSGI framework
with no opinion about the request pipeline, which is ours);
everything Neutron-specific is in the controllers and hooks.
"""
from __future__ import annotations

import logging
import time
from typing import Any, Callable, Iterable

import falcon

from neutrino import metrics
from neutrino.api import custom_routes, discovery, openapi, quotas, tags
from neutrino.api.controller import Action, Api, Collection, Member
from neutrino.api.hooks.context import ContextHook
from neutrino.api.hooks.nul import NulHook
from neutrino.api.hooks.translation import add_error_handlers
from neutrino.api.metrics import RequestMetrics

LOG = logging.getLogger("neutrino.api")
ACCESS = logging.getLogger("neutrino.access")


def build_falcon(api: Api) -> falcon.App:
    middleware: list[Any] = [ContextHook(api), NulHook(), NoOptions()]
    counted = metrics.active()
    if counted is not None:
        middleware.insert(0, RequestMetrics(counted))
    app = falcon.App(middleware=middleware)
    app.req_options.strip_url_path_trailing_slash = True
    app.req_options.keep_blank_qs_values = True
    app.req_options.auto_parse_qs_csv = False
    add_error_handlers(app)
    app.add_route("/", discovery.Versions())
    app.add_route("/v2.0", discovery.V2Root(api))
    app.add_route("/v2.0/extensions", discovery.Extensions(api))
    app.add_route("/v2.0/extensions/{alias}", discovery.Extension(api))
    app.add_route(openapi.PATH, openapi.Document(api))
    quotas.add_routes(app, api)
    for rdef in api.resources.values():
        if rdef.parent is not None:
            _add_subresource_routes(app, api, rdef)
            continue
        collection, member = Collection(api, rdef), Member(api, rdef)
        for path in rdef.url_spellings:
            base = f"/v2.0/{path}"
            app.add_route(base, collection)
            app.add_route(base + "/{rid}", member)
            for action in rdef.actions:
                app.add_route(f"{base}/{{rid}}/{action}", Action(api, rdef, action))
        if rdef.has_tags:
            all_tags, one_tag = tags.Tags(api, rdef), tags.Tag(api, rdef)
            for path in rdef.tag_spellings:
                app.add_route(f"/v2.0/{path}/{{rid}}/tags", all_tags)
                app.add_route(f"/v2.0/{path}/{{rid}}/tags/{{tag}}", one_tag)
    for route in api.routes:
        app.add_route(f"/v2.0{route.path}", custom_routes.Route(api, route))
    return app


class NoOptions:
    """``OPTIONS`` is not a Neutron method: 405 with the methods a route has,
    as upstream answers it, instead of Falcon's empty 200."""

    def process_resource(self, req: falcon.Request, resp: falcon.Response,
                         resource: Any, params: dict[str, Any]) -> None:
        if req.method != "OPTIONS" or resource is None:
            return
        allowed = [m for m in ("GET", "POST", "PUT", "DELETE")
                   if hasattr(resource, "on_" + m.lower())]
        raise falcon.HTTPMethodNotAllowed(allowed)


class _UnderParent:
    """Adapts a controller to a route under its parent.

    Falcon names a path field by its position in every route, so under
    ``/v2.0/qos/policies/{rid}`` the parent's id is ``rid`` and the child's
    needs another name; controllers take them as ``pid`` and ``rid``.
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        for method in ("on_get", "on_post", "on_put", "on_delete"):
            if hasattr(inner, method):
                setattr(self, method, self._bind(getattr(inner, method)))

    @staticmethod
    def _bind(handler: Callable[..., None]) -> Callable[..., None]:
        def call(req: falcon.Request, resp: falcon.Response, rid: str,
                 child_id: str | None = None) -> None:
            if child_id is None:
                handler(req, resp, pid=rid)
            else:
                handler(req, resp, child_id, pid=rid)
        return call


def _add_subresource_routes(app: falcon.App, api: Api, rdef: Any) -> None:
    """``/v2.0/<parent>/{id}/<children>[/{child_id}[/<action>]]``"""
    collection, member = _UnderParent(Collection(api, rdef)), _UnderParent(Member(api, rdef))
    for parent in api.resources[rdef.parent].url_spellings:
        for child in rdef.url_spellings:
            base = f"/v2.0/{parent}/{{rid}}/{child}"
            app.add_route(base, collection)
            app.add_route(base + "/{child_id}", member)
            for action in rdef.actions:
                app.add_route(f"{base}/{{child_id}}/{action}",
                              _UnderParent(Action(api, rdef, action)))


WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


IDENTITY_HEADERS = ("HTTP_X_ROLES", "HTTP_X_USER_ID", "HTTP_X_PROJECT_ID", "HTTP_X_TENANT_ID",
                    "HTTP_X_PROJECT_NAME", "HTTP_OPENSTACK_SYSTEM_SCOPE")


def with_auth(app: WSGIApp, auth: WSGIApp | None,
              anonymous: Callable[[str], bool] | None = None) -> WSGIApp:
    """Version discovery and the health check stay anonymous (a health
    check that brings a token is validated, so an admin gets the details);
    so do the paths ``anonymous`` accepts (static pages that hold no data,
    whose script brings the token itself); everything under /v2.0 is
    authenticated."""
    if auth is None:
        return app

    def dispatch(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "/")
        if path in ("", "/"):
            return app(environ, start_response)
        if anonymous is not None and anonymous(path):
            for key in IDENTITY_HEADERS:
                environ.pop(key, None)
            return app(environ, start_response)
        if path == "/healthcheck" and "HTTP_X_AUTH_TOKEN" not in environ:
            # Identity headers are the token's to set, never an anonymous caller's.
            for key in IDENTITY_HEADERS:
                environ.pop(key, None)
            return app(environ, start_response)
        return auth(environ, start_response)
    return dispatch


def with_access_log(app: WSGIApp) -> WSGIApp:
    def logged(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        started = time.perf_counter()
        status_holder: list[str] = []

        def capture(status: str, headers: list[tuple[str, str]], *rest: Any) -> Any:
            status_holder.append(status)
            return start_response(status, headers, *rest)
        body = app(environ, capture)
        if ACCESS.isEnabledFor(logging.INFO):
            query = environ.get("QUERY_STRING")
            ACCESS.info('%s "%s %s%s" status: %s time: %.4f', environ.get("REMOTE_ADDR", "-"),
                        environ.get("REQUEST_METHOD"), environ.get("PATH_INFO"),
                        f"?{query}" if query else "", (status_holder or ["-"])[0].split(" ")[0],
                        time.perf_counter() - started)
        return body
    return logged

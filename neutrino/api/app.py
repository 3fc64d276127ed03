"""The WSGI application: routes, the context hook, error translation.

Falcon does the routing and request parsing (it measured the fastest of the
WSGI frameworks we tried for this shape of API, see docs/performance.md);
everything Neutron-specific is in the controllers and hooks.
"""
from __future__ import annotations

import logging
import time
import uuid
from typing import Any, Callable, Iterable

import falcon
import orjson

from neutrino import errors
from neutrino.api import discovery, quotas, tags
from neutrino.api.controller import Action, Api, Collection, Member
from neutrino.context import Context, expand_roles

LOG = logging.getLogger("neutrino.api")
ACCESS = logging.getLogger("neutrino.access")


def neutron_error(exc: errors.NeutronException | None, code: int, kind: str,
                  message: str) -> bytes:
    return orjson.dumps({"NeutronError": {"type": kind, "message": message, "detail": ""}})


class ContextHook:
    """Builds the request context from identity headers.

    Behind keystonemiddleware the headers come from the validated token; in
    ``noauth`` mode they come from the caller, and a caller sending none is
    an admin, as upstream's noauth.
    """

    def __init__(self, api: Api) -> None:
        self.api = api

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        req.context.neutron = self.build(req)
        self.api.policy.refresh()

    def build(self, req: falcon.Request) -> Context:
        request_id = req.get_header("X-Openstack-Request-Id")
        if not request_id or not request_id.startswith("req-"):
            request_id = "req-" + str(uuid.uuid4())
        project = req.get_header("X-Project-Id") or req.get_header("X-Tenant-Id")
        user = req.get_header("X-User-Id")
        roles_header = req.get_header("X-Roles") or ""
        keystone = self.api.conf.auth_strategy == "keystone"
        if not keystone and not (project or user or roles_header):
            ctx = Context.admin()
            ctx.request_id = request_id
            return ctx
        roles = [r for r in roles_header.split(",") if r.strip()]
        roles = roles if keystone else expand_roles(roles)
        ctx = Context(user_id=user, project_id=project, roles=roles, request_id=request_id,
                      project_name=req.get_header("X-Project-Name"),
                      system_scope=req.get_header("OpenStack-System-Scope"))
        ctx.is_admin = self.api.policy.check(ctx, "context_is_admin", {})
        return ctx

    def process_response(self, req: falcon.Request, resp: falcon.Response,
                         resource: Any, req_succeeded: bool) -> None:
        ctx = getattr(req.context, "neutron", None)
        if ctx is not None:
            resp.set_header("x-openstack-request-id", ctx.request_id)


def _handle_neutron(req: falcon.Request, resp: falcon.Response,
                    exc: errors.NeutronException, params: Any) -> None:
    resp.status = exc.code
    resp.content_type = "application/json"
    resp.data = neutron_error(exc, exc.code, exc.type, exc.msg)
    if exc.code >= 500:
        LOG.error("request failed: %s", exc)


def _handle_http(req: falcon.Request, resp: falcon.Response, exc: falcon.HTTPError,
                 params: Any) -> None:
    code = exc.status_code
    kinds = {404: "HTTPNotFound", 405: "HTTPMethodNotAllowed", 400: "HTTPBadRequest",
             401: "HTTPUnauthorized", 415: "HTTPUnsupportedMediaType"}
    message = {404: "The resource could not be found.",
               405: "The method is not allowed for this resource."}.get(
        code, exc.description or exc.title or "")
    resp.status = code
    resp.content_type = "application/json"
    resp.data = neutron_error(None, code, kinds.get(code, "HTTPError"), message)
    for key, value in (exc.headers or {}).items():
        resp.set_header(key, value)


def _handle_any(req: falcon.Request, resp: falcon.Response, exc: Exception,
                params: Any) -> None:
    if isinstance(exc, falcon.HTTPError):
        return _handle_http(req, resp, exc, params)
    if isinstance(exc, errors.NeutronException):
        return _handle_neutron(req, resp, exc, params)
    LOG.exception("unexpected error on %s %s", req.method, req.path)
    resp.status = 500
    resp.content_type = "application/json"
    resp.data = neutron_error(None, 500, "HTTPInternalServerError",
                              "Request Failed: internal server error while processing "
                              "your request.")


def build_falcon(api: Api) -> falcon.App:
    app = falcon.App(middleware=[ContextHook(api)])
    app.req_options.strip_url_path_trailing_slash = True
    app.req_options.keep_blank_qs_values = True
    app.req_options.auto_parse_qs_csv = False
    app.add_error_handler(Exception, _handle_any)
    app.add_error_handler(falcon.HTTPError, _handle_http)
    app.add_error_handler(errors.NeutronException, _handle_neutron)
    app.add_route("/", discovery.Versions())
    app.add_route("/v2.0", discovery.V2Root(api))
    app.add_route("/v2.0/extensions", discovery.Extensions(api))
    app.add_route("/v2.0/extensions/{alias}", discovery.Extension(api))
    quotas.add_routes(app, api)
    for rdef in api.resources.values():
        base = f"/v2.0/{rdef.plural}"
        app.add_route(base, Collection(api, rdef))
        app.add_route(base + "/{rid}", Member(api, rdef))
        if rdef.has_tags:
            app.add_route(base + "/{rid}/tags", tags.Tags(api, rdef))
            app.add_route(base + "/{rid}/tags/{tag}", tags.Tag(api, rdef))
        for action in rdef.actions:
            app.add_route(f"{base}/{{rid}}/{action}", Action(api, rdef, action))
    return app


WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def with_auth(app: WSGIApp, auth: WSGIApp | None) -> WSGIApp:
    """Version discovery stays anonymous; everything under /v2.0 is authenticated."""
    if auth is None:
        return app

    def dispatch(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ.get("PATH_INFO", "/") in ("", "/"):
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

"""The Octavia v2 API (service type ``load-balancer``) over HTTP.

Served by neutrino's own server under ``[octavia] path_prefix`` (default
``/load-balancer``, as devstack serves Octavia), so the Keystone catalog's
load-balancer endpoint is ``http://<server>/load-balancer``. Its own Falcon
app: Octavia's URLs (``/v2/lbaas/...`` and its alias ``/v2.0/...``,
``/v2/octavia/amphorae``), bodies, list conventions (``fields``, filters,
``sort``, ``limit``/``marker`` with ``<plural>_links``) and error bodies
(``{"faultcode", "faultstring", "debuginfo"}``). The behaviour is the
``octavia`` service plugin's; this module only parses and shapes.
"""
from __future__ import annotations

import logging
from typing import Any, Callable, Iterable
from urllib.parse import urlencode

import falcon
import orjson

from neutrino import errors
from neutrino.api.hooks.context import ContextHook
from neutrino.plugins.octavia import faults, validate
from neutrino.resources import octavia as res

LOG = logging.getLogger(__name__)
WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
AUX = ("limit", "marker", "sort", "sort_key", "sort_dir", "fields", "page_reverse",
       "tags", "tags-any", "not-tags", "not-tags-any")
# filters Octavia takes that its answers show otherwise
EXTRA_FILTERS = {"listener": ("loadbalancer_id",), "pool": ("loadbalancer_id",),
                 "healthmonitor": ("pool_id",), "member": ("pool_id",),
                 "l7rule": ("l7policy_id",)}
VERSIONS = [("v2.0", "2016-12-11T00:00:00Z"), ("v2.1", "2018-04-20T00:00:00Z"),
            ("v2.2", "2018-07-31T00:00:00Z"), ("v2.3", "2018-12-18T00:00:00Z"),
            ("v2.4", "2018-12-19T00:00:00Z"), ("v2.5", "2019-01-21T00:00:00Z"),
            ("v2.6", "2019-01-25T00:00:00Z"), ("v2.7", "2018-01-25T12:00:00Z"),
            ("v2.8", "2019-02-12T00:00:00Z"), ("v2.9", "2019-03-04T00:00:00Z"),
            ("v2.10", "2019-03-05T00:00:00Z"), ("v2.11", "2019-06-24T00:00:00Z"),
            ("v2.12", "2019-09-11T00:00:00Z"), ("v2.13", "2019-09-13T00:00:00Z"),
            ("v2.14", "2019-10-09T00:00:00Z"), ("v2.15", "2020-03-10T00:00:00Z"),
            ("v2.16", "2020-03-15T00:00:00Z"), ("v2.17", "2020-04-29T00:00:00Z"),
            ("v2.18", "2020-04-29T01:00:00Z"), ("v2.19", "2020-05-12T00:00:00Z"),
            ("v2.20", "2020-08-24T00:00:00Z"), ("v2.21", "2020-09-03T00:00:00Z"),
            ("v2.22", "2021-05-07T00:00:00Z"), ("v2.23", "2021-06-22T00:00:00Z"),
            ("v2.24", "2021-08-04T00:00:00Z"), ("v2.25", "2022-04-29T00:00:00Z"),
            ("v2.26", "2022-08-29T00:00:00Z"), ("v2.27", "2023-05-05T00:00:00Z"),
            ("v2.28", "2024-08-29T00:00:00Z"), ("v2.29", "2024-09-10T00:00:00Z"),
            ("v2.30", "2025-01-21T00:00:00Z")]


def _send(resp: falcon.Response, status: int, body: Any = None) -> None:
    resp.status = status
    if body is not None or status == 200:
        resp.content_type = "application/json"
        resp.data = orjson.dumps(body)


def _fault(resp: falcon.Response, exc: faults.Fault) -> None:
    _send(resp, exc.code, exc.body())


def _read_body(req: falcon.Request) -> Any:
    raw = req.bounded_stream.read()
    if not raw:
        return None
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise faults.BadRequest("Invalid JSON in the request body.") from None


def _ctx(req: falcon.Request) -> Any:
    return req.context.neutron


# -- lists -------------------------------------------------------------------------


def _values(req: falcon.Request, name: str) -> list[str]:
    found = req.get_param_as_list(name) or []
    return [v for item in found for v in str(item).split(",") if v != ""] \
        if name in ("fields", "tags", "tags-any", "not-tags", "not-tags-any") else found


def _matches(value: Any, wanted: str) -> bool:
    if isinstance(value, bool):
        return str(value).lower() == wanted.lower()
    if value is None:
        return wanted.lower() in ("", "none", "null")
    return str(value) == wanted


def listed(req: falcon.Request, items: list[dict[str, Any]], shown: Iterable[str],
           kind: str = "", extra: dict[str, dict[str, Any]] | None = None,
           max_limit: int = 1000) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """Filter, sort and page ``items`` as Octavia's pagination helper does;
    ``extra`` gives per item id the filterable values not shown."""
    shown = tuple(shown)
    params = {k: req.get_param_as_list(k) or [] for k in req.params}
    filters = {k: v for k, v in params.items() if k not in AUX}
    allowed = set(shown) | set(EXTRA_FILTERS.get(kind, ()))
    if any(k not in allowed for k in filters):
        raise faults.InvalidFilterArgument()
    out = []
    for item in items:
        more = (extra or {}).get(str(item.get("id")), {})
        ok = all(any(_matches(item.get(k, more.get(k)), w) for w in wanted)
                 for k, wanted in filters.items())
        tags = set(item.get("tags") or [])
        if ok and "tags" in req.params:
            ok = set(_values(req, "tags")) <= tags
        if ok and "tags-any" in req.params:
            ok = bool(set(_values(req, "tags-any")) & tags)
        if ok and "not-tags" in req.params:
            ok = not set(_values(req, "not-tags")) <= tags
        if ok and "not-tags-any" in req.params:
            ok = not set(_values(req, "not-tags-any")) & tags
        if ok:
            out.append(item)
    keys = _sort_keys(req, shown)
    for key, direction in reversed(keys):
        out.sort(key=lambda x, k=key: _sortable(x.get(k)), reverse=direction == "desc")
    limit = _limit(req, max_limit)
    marker = req.get_param("marker")
    reverse = str(req.get_param("page_reverse") or "false").lower() == "true"
    if marker is not None:
        ids = [str(x.get("id", x.get("name"))) for x in out]
        if marker not in ids:
            raise faults.InvalidMarker(key=marker)
        at = ids.index(marker)
        out = out[:at][-limit:] if (reverse and limit) else out[:at] if reverse \
            else out[at + 1:]
    links = []
    page = out[:limit] if (limit and not (reverse and marker)) else out
    if limit and page and (len(out) > limit or marker):
        base = req.prefix + req.path
        common: list[tuple[str, str]] = [("limit", str(limit))]
        if req.get_param("sort"):
            common.append(("sort", req.get_param("sort") or ""))
        if req.get_param("sort_key"):
            common.append(("sort_key", req.get_param("sort_key") or ""))
        def href(extra: list[tuple[str, str]]) -> str:
            return f"{base}?{urlencode(common + extra, safe=':,')}"
        if marker:
            links.append({"href": href([("marker", _id(page[0])), ("page_reverse", "True")]),
                          "rel": "previous"})
        if len(out) > limit or (reverse and marker):
            links.append({"href": href([("marker", _id(page[-1]))]), "rel": "next"})
    fields = _values(req, "fields")
    if fields:
        page = [{k: v for k, v in x.items() if k in fields} for x in page]
    return page, links


def _id(item: dict[str, Any]) -> str:
    return str(item.get("id", item.get("name")))


def _sortable(value: Any) -> tuple[int, Any]:
    if value is None:
        return (0, "")
    if isinstance(value, (bool, int, float)):
        return (1, value)
    return (2, str(value))


def _sort_keys(req: falcon.Request, shown: tuple[str, ...]) -> list[tuple[str, str]]:
    keys: list[tuple[str, str]] = []
    sort = req.get_param("sort")
    if sort:
        for part in sort.split(","):
            key, _, direction = part.partition(":")
            keys.append((key, (direction or "asc").lower()))
    elif req.get_param("sort_key"):
        names = (req.get_param("sort_key") or "").split(",")
        dirs = (req.get_param("sort_dir") or "").split(",")
        keys = [(k, (dirs[i] if i < len(dirs) and dirs[i] else "asc").lower())
                for i, k in enumerate(names)]
    for key, direction in keys:
        if key not in shown:
            raise faults.InvalidSortKey(key=key)
        if direction not in ("asc", "desc"):
            raise faults.InvalidSortDirection(key=direction)
    defaults = [k for k in ("created_at", "id") if k in shown] or [shown[0]]
    return keys + [(k, "asc") for k in defaults if k not in dict(keys)]


def _limit(req: falcon.Request, max_limit: int) -> int:
    raw = req.get_param("limit")
    if raw is None:
        return max_limit
    try:
        value = int(raw)
    except ValueError:
        raise faults.InvalidLimit(key=raw) from None
    if value < 0:
        raise faults.InvalidLimit(key=raw)
    return min(value, max_limit) if value else max_limit


# -- resources ---------------------------------------------------------------------


class _Base:
    def __init__(self, plugin: Any) -> None:
        self.plugin = plugin

    @property
    def max_limit(self) -> int:
        return int(self.plugin.conf.octavia.pagination_max_limit)

    def _one_fields(self, req: falcon.Request, item: dict[str, Any]) -> dict[str, Any]:
        fields = _values(req, "fields")
        return {k: v for k, v in item.items() if k in fields} if fields else item


class ObjectCollection(_Base):
    """``/v2/lbaas/<plural>`` (and a parent's ``.../members``, ``.../rules``)."""

    def __init__(self, plugin: Any, kind: str) -> None:
        super().__init__(plugin)
        self.rdef = res.OBJECTS[kind]

    def on_get(self, req: falcon.Request, resp: falcon.Response, oid: str | None = None) -> None:
        parent = oid
        ctx = _ctx(req)
        items = self.plugin.objects.list(ctx, self.rdef.kind, req.get_param("project_id"),
                                         parent)
        extra = self._extra(items)
        page, links = listed(req, items, self.rdef.shown, self.rdef.kind, extra,
                             self.max_limit)
        _send(resp, 200, {self.rdef.plural: page, f"{self.rdef.plural}_links": links})

    def _extra(self, items: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for item in items:
            lbs = item.get("loadbalancers") or []
            pools = item.get("pools") or []
            out[item["id"]] = {"loadbalancer_id": lbs[0]["id"] if lbs else None,
                               "pool_id": pools[0]["id"] if pools else None}
        return out

    def on_post(self, req: falcon.Request, resp: falcon.Response, oid: str | None = None) -> None:
        parent = oid
        body = _read_body(req)
        data = validate.body_of(body, self.rdef.singular)
        item = self.plugin.objects.create(_ctx(req), self.rdef.kind, data, parent)
        _send(resp, 201, {self.rdef.singular: item})

    def on_put(self, req: falcon.Request, resp: falcon.Response, oid: str | None = None) -> None:
        parent = oid
        if self.rdef.kind != "member" or parent is None:
            raise falcon.HTTPMethodNotAllowed(["GET", "POST"])
        additive = str(req.get_param("additive_only") or "false").lower() == "true"
        self.plugin.objects.batch_members(_ctx(req), parent, _read_body(req), additive)
        _send(resp, 202)


class ObjectMember(_Base):
    def __init__(self, plugin: Any, kind: str) -> None:
        super().__init__(plugin)
        self.rdef = res.OBJECTS[kind]

    def on_get(self, req: falcon.Request, resp: falcon.Response, oid: str,
              cid: str | None = None) -> None:
        oid, parent = (cid, oid) if cid is not None else (oid, None)
        item = self.plugin.objects.get(_ctx(req), self.rdef.kind, oid, parent)
        _send(resp, 200, {self.rdef.singular: self._one_fields(req, item)})

    def on_put(self, req: falcon.Request, resp: falcon.Response, oid: str,
              cid: str | None = None) -> None:
        oid, parent = (cid, oid) if cid is not None else (oid, None)
        data = validate.body_of(_read_body(req), self.rdef.singular)
        item = self.plugin.objects.update(_ctx(req), self.rdef.kind, oid, data, parent)
        _send(resp, 200, {self.rdef.singular: item})

    def on_delete(self, req: falcon.Request, resp: falcon.Response, oid: str,
                 cid: str | None = None) -> None:
        oid, parent = (cid, oid) if cid is not None else (oid, None)
        cascade = str(req.get_param("cascade") or "false").lower() == "true"
        self.plugin.objects.delete(_ctx(req), self.rdef.kind, oid, parent, cascade)
        _send(resp, 204)


class LbStatus(_Base):
    def on_get(self, req: falcon.Request, resp: falcon.Response, oid: str) -> None:
        _send(resp, 200, self.plugin.objects.status_tree(_ctx(req), oid))


class Stats(_Base):
    def __init__(self, plugin: Any, kind: str) -> None:
        super().__init__(plugin)
        self.kind = kind

    def on_get(self, req: falcon.Request, resp: falcon.Response, oid: str) -> None:
        _send(resp, 200, {"stats": self.plugin.stats(_ctx(req), self.kind, oid)})


class Failover(_Base):
    def on_put(self, req: falcon.Request, resp: falcon.Response, oid: str) -> None:
        self.plugin.objects.failover(_ctx(req), oid)
        _send(resp, 202)


class DefinitionCollection(_Base):
    def __init__(self, plugin: Any, kind: str) -> None:
        super().__init__(plugin)
        self.rdef = res.DEFINITIONS[kind]

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        items = self.plugin.definitions.list(_ctx(req), self.rdef.kind)
        page, links = listed(req, items, self.rdef.shown, self.rdef.kind, None, self.max_limit)
        _send(resp, 200, {self.rdef.plural: page,
                          self.rdef.links_key or f"{self.rdef.plural}_links": links})

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        item = self.plugin.definitions.create(_ctx(req), self.rdef.kind, _read_body(req))
        _send(resp, 201, {self.rdef.singular: item})


class DefinitionMember(_Base):
    def __init__(self, plugin: Any, kind: str) -> None:
        super().__init__(plugin)
        self.rdef = res.DEFINITIONS[kind]

    def on_get(self, req: falcon.Request, resp: falcon.Response, oid: str) -> None:
        item = self.plugin.definitions.get(_ctx(req), self.rdef.kind, oid)
        _send(resp, 200, {self.rdef.singular: self._one_fields(req, item)})

    def on_put(self, req: falcon.Request, resp: falcon.Response, oid: str) -> None:
        item = self.plugin.definitions.update(_ctx(req), self.rdef.kind, oid, _read_body(req))
        _send(resp, 200, {self.rdef.singular: item})

    def on_delete(self, req: falcon.Request, resp: falcon.Response, oid: str) -> None:
        self.plugin.definitions.delete(_ctx(req), self.rdef.kind, oid)
        _send(resp, 204)


class Providers(_Base):
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        items = self.plugin.providers(_ctx(req))
        page, _ = listed(req, items, ("name", "description"), "provider", None, self.max_limit)
        _send(resp, 200, {"providers": page})


class Capabilities(_Base):
    def __init__(self, plugin: Any, what: str) -> None:
        super().__init__(plugin)
        self.what = what

    def on_get(self, req: falcon.Request, resp: falcon.Response, oid: str) -> None:
        items = self.plugin.capabilities(_ctx(req), oid, self.what)
        page, _ = listed(req, items, ("name", "description"), "", None, self.max_limit)
        _send(resp, 200, {f"{self.what}_capabilities": page})


class QuotaCollection(_Base):
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        items = self.plugin.quotas.list(_ctx(req), req.get_param("project_id"))
        _send(resp, 200, {"quotas": items, "quotas_links": []})


class QuotaMember(_Base):
    def on_get(self, req: falcon.Request, resp: falcon.Response, oid: str) -> None:
        project_id = oid
        _send(resp, 200, {"quota": self.plugin.quotas.get(_ctx(req), project_id)})

    def on_put(self, req: falcon.Request, resp: falcon.Response, oid: str) -> None:
        project_id = oid
        item = self.plugin.quotas.update(_ctx(req), project_id, _read_body(req))
        _send(resp, 202, {"quota": item})

    def on_delete(self, req: falcon.Request, resp: falcon.Response, oid: str) -> None:
        project_id = oid
        self.plugin.quotas.delete(_ctx(req), project_id)
        _send(resp, 202)


class QuotaDefaults(_Base):
    def on_get(self, req: falcon.Request, resp: falcon.Response, oid: str) -> None:
        project_id = oid
        _send(resp, 200, {"quota": self.plugin.quotas.get_defaults(_ctx(req), project_id)})


class Amphorae(_Base):
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self.plugin.amphorae(_ctx(req))
        _send(resp, 200, {"amphorae": [], "amphorae_links": []})


class Amphora(_Base):
    def __init__(self, plugin: Any, action: str) -> None:
        super().__init__(plugin)
        self.action = action

    def on_get(self, req: falcon.Request, resp: falcon.Response, oid: str) -> None:
        self.plugin.amphora(_ctx(req), self.action, oid)

    def on_delete(self, req: falcon.Request, resp: falcon.Response, oid: str) -> None:
        self.plugin.amphora(_ctx(req), "delete", oid)

    def on_put(self, req: falcon.Request, resp: falcon.Response, oid: str) -> None:
        self.plugin.amphora(_ctx(req), self.action, oid)


class Versions:
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        href = f"{req.prefix}/v2"
        _send(resp, 200, {"versions": [
            {"id": vid, "status": "CURRENT" if vid == VERSIONS[-1][0] else "SUPPORTED",
             "updated": when, "links": [{"href": href, "rel": "self"}]}
            for vid, when in VERSIONS]})


class Root:
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        _send(resp, 200, "v2")


# -- the app -----------------------------------------------------------------------


def _handle_fault(req: falcon.Request, resp: falcon.Response, exc: faults.Fault,
                  params: Any) -> None:
    _fault(resp, exc)


def _handle_neutron(req: falcon.Request, resp: falcon.Response,
                    exc: errors.NeutronException, params: Any) -> None:
    _fault(resp, faults.Fault(exc.msg) if exc.code >= 500 else
           type("Translated", (faults.Fault,), {"code": exc.code})(exc.msg))


def _handle_http(req: falcon.Request, resp: falcon.Response, exc: falcon.HTTPError,
                 params: Any) -> None:
    status = int(str(exc.status).split()[0]) if not isinstance(exc.status, int) \
        else exc.status
    message = exc.description or exc.title or "Error"
    if status == 404:
        message = "The resource could not be found."
    elif status == 405:
        message = "The server could not comply with the request since it is either " \
            "malformed or otherwise incorrect."
    fault = type("Http", (faults.Fault,), {"code": status})(message)
    _fault(resp, fault)
    for name, value in (exc.headers or {}).items():
        resp.set_header(name, value)


def _handle_other(req: falcon.Request, resp: falcon.Response, exc: Exception,
                  params: Any) -> None:
    LOG.exception("unexpected error on %s %s", req.method, req.path)
    _fault(resp, faults.Fault("Internal Server Error"))


def build(api: Any, plugin: Any) -> falcon.App:
    app = falcon.App(middleware=[ContextHook(api)])
    app.req_options.strip_url_path_trailing_slash = True
    app.req_options.keep_blank_qs_values = True
    app.req_options.auto_parse_qs_csv = False
    app.add_error_handler(Exception, _handle_other)
    app.add_error_handler(falcon.HTTPError, _handle_http)
    app.add_error_handler(errors.NeutronException, _handle_neutron)
    app.add_error_handler(faults.Fault, _handle_fault)
    app.add_route("/", Versions())
    objects = {k: (ObjectCollection(plugin, k), ObjectMember(plugin, k)) for k in res.OBJECTS}
    for version in ("/v2", "/v2.0"):
        lbaas = f"{version}/lbaas"
        for path in (version, lbaas, f"{version}/octavia"):
            app.add_route(path, Root())
        for kind, plural in (("loadbalancer", "loadbalancers"), ("listener", "listeners"),
                             ("pool", "pools"), ("healthmonitor", "healthmonitors"),
                             ("l7policy", "l7policies")):
            app.add_route(f"{lbaas}/{plural}", objects[kind][0])
            app.add_route(f"{lbaas}/{plural}/{{oid}}", objects[kind][1])
        app.add_route(f"{lbaas}/pools/{{oid}}/members", objects["member"][0])
        app.add_route(f"{lbaas}/pools/{{oid}}/members/{{cid}}", objects["member"][1])
        app.add_route(f"{lbaas}/l7policies/{{oid}}/rules", objects["l7rule"][0])
        app.add_route(f"{lbaas}/l7policies/{{oid}}/rules/{{cid}}", objects["l7rule"][1])
        app.add_route(f"{lbaas}/loadbalancers/{{oid}}/status", LbStatus(plugin))
        app.add_route(f"{lbaas}/loadbalancers/{{oid}}/statuses", LbStatus(plugin))
        app.add_route(f"{lbaas}/loadbalancers/{{oid}}/stats", Stats(plugin, "loadbalancer"))
        app.add_route(f"{lbaas}/loadbalancers/{{oid}}/failover", Failover(plugin))
        app.add_route(f"{lbaas}/listeners/{{oid}}/stats", Stats(plugin, "listener"))
        for kind, path in (("flavorprofile", "flavorprofiles"), ("flavor", "flavors"),
                           ("availability_zone_profile", "availabilityzoneprofiles"),
                           ("availability_zone", "availabilityzones")):
            app.add_route(f"{lbaas}/{path}", DefinitionCollection(plugin, kind))
            app.add_route(f"{lbaas}/{path}/{{oid}}", DefinitionMember(plugin, kind))
        app.add_route(f"{lbaas}/providers", Providers(plugin))
        app.add_route(f"{lbaas}/providers/{{oid}}/flavor_capabilities",
                      Capabilities(plugin, "flavor"))
        app.add_route(f"{lbaas}/providers/{{oid}}/availability_zone_capabilities",
                      Capabilities(plugin, "availability_zone"))
        app.add_route(f"{lbaas}/quotas", QuotaCollection(plugin))
        app.add_route(f"{lbaas}/quotas/{{oid}}", QuotaMember(plugin))
        app.add_route(f"{lbaas}/quotas/{{oid}}/default", QuotaDefaults(plugin))
        amph = f"{version}/octavia/amphorae"
        app.add_route(amph, Amphorae(plugin))
        app.add_route(f"{amph}/{{oid}}", Amphora(plugin, "get_one"))
        app.add_route(f"{amph}/{{oid}}/stats", Amphora(plugin, "get_stats"))
        app.add_route(f"{amph}/{{oid}}/config", Amphora(plugin, "put_config"))
        app.add_route(f"{amph}/{{oid}}/failover", Amphora(plugin, "put_failover"))
    return app


def find_plugin(api: Any) -> Any:
    """The loaded ``octavia`` service plugin, if any."""
    return next((p for p in api.directory.all_plugins()
                 if getattr(p, "service_type", "") == "LOADBALANCERV2"), None)


def mount(outer: WSGIApp, octavia: WSGIApp, prefix: str,
          auth: WSGIApp | None) -> WSGIApp:
    """Requests under ``prefix`` go to the Octavia app (behind ``auth``,
    except its version discovery), the rest to ``outer``."""
    prefix = "/" + prefix.strip("/")

    def dispatch(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "/")
        if path != prefix and not path.startswith(prefix + "/"):
            return outer(environ, start_response)
        environ = dict(environ)  # the access log outside still sees the whole path
        environ["SCRIPT_NAME"] = environ.get("SCRIPT_NAME", "") + prefix
        environ["PATH_INFO"] = path[len(prefix):] or "/"
        if auth is None or environ["PATH_INFO"] == "/":
            return octavia(environ, start_response)
        return auth(environ, start_response)
    return dispatch

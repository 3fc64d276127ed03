"""The OpenAPI 3.1 document of the API, served at ``/v2.0/openapi.json``.

Upstream publishes none; client generators and API fuzzers want one. It is
derived from what builds the routes (the resource definitions, their
actions, the loaded plugins' custom routes), so it describes the API this
server actually serves and cannot drift from it. It is listed nowhere a
Neutron client looks (not in ``/v2.0``, not in ``/v2.0/extensions``).
"""
from __future__ import annotations

import threading
from typing import Any

import falcon

from neutrino.api import openapi_types as types
from neutrino.api.controller import Api, send
from neutrino.db.query import TAG_FILTERS
from neutrino.resources.attributes import ResourceDef

Schema = dict[str, Any]
PATH = "/v2.0/openapi.json"
_ERROR_STATUSES = ("400", "401", "403", "404", "409")
_CONTROL_PARAMS: list[Schema] = [
    {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 0}},
    {"name": "marker", "in": "query", "schema": {"type": "string"}},
    {"name": "page_reverse", "in": "query", "schema": {"type": "boolean"}},
    {"name": "fields", "in": "query", "style": "form", "explode": True,
     "schema": {"type": "array", "items": {"type": "string"}}},
]
_OBJECT: Schema = {"type": "object"}


def _ref(kind: str, name: str) -> Schema:
    return {"$ref": f"#/components/{kind}/{name}"}


def _json(schema: Schema) -> Schema:
    return {"application/json": {"schema": schema}}


def _ok(status: str, schema: Schema | None, description: str = "Success") -> Schema:
    if schema is None or status == "204":
        return {status: {"description": description}}
    return {status: {"description": description, "content": _json(schema)}}


def _path_param(name: str) -> Schema:
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}


def _type_name(rdef: ResourceDef, parent: ResourceDef | None) -> str:
    prefix = f"{parent.singular}_" if parent else ""
    return "".join(part.capitalize() for part in f"{prefix}{rdef.singular}".split("_"))


class _Builder:
    """Accumulates paths and component schemas; operation ids stay unique."""

    def __init__(self, api: Api) -> None:
        self.api = api
        self.paths: dict[str, dict[str, Schema]] = {}
        self.schemas: dict[str, Schema] = {"NeutronError": _neutron_error()}
        self.operation_ids: set[str] = set()

    def operation(self, path: str, method: str, op_id: str, responses: Schema,
                  params: list[Schema] | None = None, body: Schema | None = None,
                  tag: str | None = None) -> None:
        unique, n = op_id, 1
        while unique in self.operation_ids:
            n += 1
            unique = f"{op_id}_{n}"
        self.operation_ids.add(unique)
        op: Schema = {"operationId": unique, "responses": {**responses, **_errors()}}
        if tag:
            op["tags"] = [tag]
        fields = [p[1:-1] for p in path.split("/") if p.startswith("{")]
        all_params = [_path_param(f) for f in fields] + list(params or [])
        if all_params:
            op["parameters"] = all_params
        if body is not None:
            op["requestBody"] = {"required": True, "content": _json(body)}
        self.paths.setdefault(path, {})[method.lower()] = op

    # -- the generic resources ----------------------------------------------

    def resource(self, rdef: ResourceDef) -> None:
        parent = self.api.resources[rdef.parent] if rdef.parent else None
        name = _type_name(rdef, parent)
        self.schemas[name] = _shown(rdef)
        self.schemas[f"{name}Create"] = _writable(rdef, "allow_post")
        self.schemas[f"{name}Update"] = _writable(rdef, "allow_put")
        if parent is None:
            collection = f"/v2.0/{rdef.url_plural}"
            member = collection + "/{id}"
            ids = ("", rdef.singular)
        else:
            collection = f"/v2.0/{parent.url_plural}/{{{parent.singular}_id}}/{rdef.url_plural}"
            member = collection + "/{id}"
            ids = (f"{parent.singular}_", f"{parent.singular}_{rdef.singular}")
        self._collection(rdef, name, collection, ids)
        self._member(rdef, name, member, ids[1])
        for action, method in rdef.actions.items():
            body = _OBJECT if method.upper() in ("PUT", "POST") else None
            self.operation(f"{member}/{action}", method, action,
                           _ok("200", _OBJECT), body=body, tag=rdef.plural)
        if rdef.has_tags and rdef.parent is None:
            # Each path once, whichever spelling (the router takes both).
            paths = dict.fromkeys(p.replace("_", "-") for p in rdef.tag_spellings)
            for i, path in enumerate(paths):
                self._tags(rdef, f"/v2.0/{path}/{{id}}", "" if i == 0 else
                           "_at_" + path.replace("/", "_").replace("-", "_"))

    def _collection(self, rdef: ResourceDef, name: str, path: str, ids: tuple[str, str]) -> None:
        item = _ref("schemas", name)
        listed: Schema = {"type": "object", "required": [rdef.plural], "properties": {
            rdef.plural: {"type": "array", "items": item},
            f"{rdef.plural}_links": {"type": "array", "items": _OBJECT}}}
        self.operation(path, "GET", f"list_{ids[0]}{rdef.plural}", _ok("200", listed),
                       params=_list_params(rdef), tag=rdef.plural)
        create = _ref("schemas", f"{name}Create")
        one: Schema = {"type": "object", "required": [rdef.singular],
                       "properties": {rdef.singular: create}, "additionalProperties": False}
        bulk: Schema = {"type": "object", "required": [rdef.plural], "additionalProperties": False,
                        "properties": {rdef.plural: {"type": "array", "minItems": 1,
                                                     "items": create}}}
        created: Schema = {"type": "object", "properties": {
            rdef.singular: item, rdef.plural: {"type": "array", "items": item}}}
        self.operation(path, "POST", f"create_{ids[1]}", _ok("201", created),
                       body={"oneOf": [one, bulk]}, tag=rdef.plural)

    def _member(self, rdef: ResourceDef, name: str, path: str, singular: str) -> None:
        shown: Schema = {"type": "object", "required": [rdef.singular],
                         "properties": {rdef.singular: _ref("schemas", name)}}
        fields = [p for p in _CONTROL_PARAMS if p["name"] == "fields"]
        self.operation(path, "GET", f"show_{singular}", _ok("200", shown), params=fields,
                       tag=rdef.plural)
        update: Schema = {"type": "object", "required": [rdef.singular],
                          "additionalProperties": False,
                          "properties": {rdef.singular: _ref("schemas", f"{name}Update")}}
        if_match = [{"name": "If-Match", "in": "header", "required": False,
                     "schema": {"type": "string", "pattern": r"^revision_number=\d+$"}}]
        self.operation(path, "PUT", f"update_{singular}", _ok("200", shown), params=if_match,
                       body=update, tag=rdef.plural)
        self.operation(path, "DELETE", f"delete_{singular}", _ok("204", None),
                       params=if_match, tag=rdef.plural)

    def _tags(self, rdef: ResourceDef, member: str, suffix: str) -> None:
        tags: Schema = {"type": "object", "required": ["tags"], "properties": {
            "tags": {"type": "array", "maxItems": 50, "uniqueItems": True,
                     "items": {"type": "string", "maxLength": 255}}}}
        base, one, name = f"{member}/tags", f"{member}/tags/{{tag}}", rdef.singular

        def op(path: str, method: str, op_id: str, ok: dict[str, Any],
               body: Schema | None = None) -> None:
            self.operation(path, method, op_id + suffix, ok, body=body, tag="tags")
        op(base, "GET", f"list_{name}_tags", _ok("200", tags))
        op(base, "POST", f"add_{name}_tags", _ok("200", tags), body=tags)
        op(base, "PUT", f"replace_{name}_tags", _ok("200", tags), body=tags)
        op(base, "DELETE", f"delete_{name}_tags", _ok("204", None))
        op(one, "GET", f"check_{name}_tag", _ok("204", None))
        # Upstream's router sends a POST on one tag to the same check.
        op(one, "POST", f"check_{name}_tag_by_post", _ok("204", None))
        op(one, "PUT", f"add_{name}_tag", _ok("201", None))
        op(one, "DELETE", f"remove_{name}_tag", _ok("204", None))

    # -- what is not a generic resource -------------------------------------

    def fixed(self) -> None:
        """Discovery, quotas and this document."""
        self.operation("/", "GET", "list_versions", _ok("200", _OBJECT), tag="discovery")
        self.operation("/v2.0", "GET", "list_resources", _ok("200", _OBJECT), tag="discovery")
        self.operation("/v2.0/extensions", "GET", "list_extensions", _ok("200", _OBJECT),
                       tag="discovery")
        self.operation("/v2.0/extensions/{alias}", "GET", "show_extension",
                       _ok("200", _OBJECT), tag="discovery")
        self.operation(PATH, "GET", "show_openapi_document", _ok("200", _OBJECT),
                       tag="discovery")
        limits: Schema = {"type": "object", "additionalProperties": {
            "anyOf": [{"type": "integer", "minimum": -1}, {"type": "boolean"}]}}
        quota: Schema = {"type": "object", "required": ["quota"], "properties": {"quota": limits}}
        shown: Schema = {"type": "object", "properties": {"quota": _OBJECT}}
        one = "/v2.0/quotas/{project_id}"
        self.operation("/v2.0/quotas", "GET", "list_quotas", _ok("200", _OBJECT), tag="quotas")
        self.operation(one, "GET", "show_quota", _ok("200", shown), tag="quotas")
        self.operation(one, "PUT", "update_quota", _ok("200", shown), body=quota, tag="quotas")
        self.operation(one, "DELETE", "delete_quota", _ok("204", None), tag="quotas")
        self.operation(one + "/default", "GET", "show_quota_default", _ok("200", shown),
                       tag="quotas")
        self.operation(one + "/details", "GET", "show_quota_details", _ok("200", shown),
                       tag="quotas")

    def custom_route(self, route: Any) -> None:
        """An extension's own controller: its methods, statuses and rule."""
        path = "/v2.0" + route.path.replace("{rid}", "{id}")
        words = [p for p in route.path.split("/") if p and not p.startswith("{")]
        for method, (_rule, status, _handler) in route.methods.items():
            body = _OBJECT if method in ("POST", "PUT") else None
            answer = None if status == 204 else {"type": ["object", "array", "null"]}
            self.operation(path, method, f"{method.lower()}_{'_'.join(words)}",
                           _ok(str(status), answer), body=body, tag=words[0])


def _neutron_error() -> Schema:
    return {"type": "object", "required": ["NeutronError"], "properties": {
        "NeutronError": {"type": "object", "required": ["type", "message", "detail"],
                         "properties": {"type": {"type": "string"},
                                        "message": {"type": "string"},
                                        "detail": {"type": "string"}}}}}


def _errors() -> Schema:
    error = {"$ref": "#/components/responses/Error"}
    return {**{status: error for status in _ERROR_STATUSES}, "default": error}


def _shown(rdef: ResourceDef) -> Schema:
    return {"type": "object", "properties": {
        a.name: types.of_response(a) for a in rdef.attributes.values() if a.is_visible}}


def _writable(rdef: ResourceDef, flag: str) -> Schema:
    attrs = [a for a in rdef.attributes.values() if getattr(a, flag)]
    out: Schema = {"type": "object", "additionalProperties": False,
                   "properties": {a.name: types.of_validator(a.validate) for a in attrs}}
    required = [a.name for a in attrs if flag == "allow_post" and a.required]
    if required:
        out["required"] = required
    return out


def _list_params(rdef: ResourceDef) -> list[Schema]:
    """Filters (repeatable: any of the values), tag filters, sorting, paging, fields."""
    params: list[Schema] = [
        {"name": a.name, "in": "query", "style": "form", "explode": True,
         "schema": {"type": "array", "items": types.of_filter(a)}}
        for a in rdef.attributes.values() if a.is_filter]
    if rdef.has_tags:  # comma-separated tags, as upstream's tag filters
        params += [{"name": name, "in": "query", "schema": {"type": "string"}}
                   for name in TAG_FILTERS]
    sort_keys = [a.name for a in rdef.attributes.values() if a.is_sort_key]
    if sort_keys:
        params.append({"name": "sort_key", "in": "query", "style": "form", "explode": True,
                       "schema": {"type": "array", "items": {"enum": sort_keys}}})
        params.append({"name": "sort_dir", "in": "query", "style": "form", "explode": True,
                       "schema": {"type": "array", "items": {"enum": ["asc", "desc"]}}})
    return params + _CONTROL_PARAMS


def document(api: Api) -> Schema:
    """The whole document for this API's resources and loaded plugins."""
    builder = _Builder(api)
    builder.fixed()
    for rdef in api.resources.values():
        builder.resource(rdef)
    for route in api.routes:
        builder.custom_route(route)
    security: Schema = {"keystone": {"type": "apiKey", "in": "header", "name": "X-Auth-Token"}}
    doc: Schema = {
        "openapi": "3.1.0",
        "info": {"title": "OpenStack Networking API (neutrino)", "version": "2.0"},
        "paths": builder.paths,
        "components": {
            "schemas": builder.schemas,
            "responses": {"Error": {"description": "A Neutron error",
                                    "content": _json(_ref("schemas", "NeutronError"))}},
            "securitySchemes": security},
    }
    if api.conf.auth_strategy == "keystone":
        doc["security"] = [{"keystone": []}]
    return doc


class Document:
    """``GET /v2.0/openapi.json``: anyone the API's authentication admits.

    Built on first request, when every plugin has declared its resources,
    and kept: the resources of a running API never change.
    """

    def __init__(self, api: Api) -> None:
        self.api = api
        self._doc: Schema | None = None
        self._lock = threading.Lock()

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        with self._lock:
            if self._doc is None:
                self._doc = document(self.api)
        send(resp, 200, self._doc)

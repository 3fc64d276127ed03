"""Body validation hook, driven entirely by the attribute maps.

Turns a JSON body into validated, converted, defaulted data, or raises the
400 upstream raises, before anything touches the database.
"""
from __future__ import annotations

from typing import Any

import orjson

from neutrino import errors
from neutrino.api.hooks import nul
from neutrino.context import Context
from neutrino.resources import validators as v
from neutrino.resources.attributes import UNSET, Attribute, ResourceDef

# Deeper than any body a Neutron resource takes (a ``binding:profile`` holds
# a few levels); what reads a body recursively later (policy targets, copies)
# must never meet a depth that exhausts the interpreter's stack.
MAX_DEPTH = 32


def parse_json(raw: bytes) -> Any:
    if not raw:
        raise errors.HTTPBadRequest(msg="Body contains invalid data")
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise errors.HTTPBadRequest(msg="Body contains invalid data") from None
    check_document(data)
    return data


def check_document(data: Any, limit: int = MAX_DEPTH) -> None:
    """Refuse a decoded body whose lists and objects nest more than ``limit``
    levels, or with NUL in any string, key or value: one walk for both, as a
    body is walked once per request. Too deep is the refusal when a body is
    both, wherever each is found. Iterative, so the walk cannot exhaust the
    stack."""
    has_nul = isinstance(data, str) and nul.NUL in data
    pending: list[tuple[Any, int]] = [(data, 1)] if isinstance(data, (dict, list)) else []
    while pending:
        node, depth = pending.pop()
        if depth > limit:
            raise errors.HTTPBadRequest(
                msg=f"Body contains invalid data: nested deeper than {limit} levels")
        children = node
        if isinstance(node, dict):
            has_nul = has_nul or any(nul.NUL in key for key in node)
            children = node.values()
        for child in children:
            if isinstance(child, str):
                has_nul = has_nul or nul.NUL in child
            elif isinstance(child, (dict, list)):
                pending.append((child, depth + 1))
    if has_nul:
        raise nul.refusal()


def items_of(rdef: ResourceDef, body: Any) -> tuple[list[dict[str, Any]], bool]:
    """The items of a create body and whether it was a bulk request."""
    if not isinstance(body, dict):
        raise errors.HTTPBadRequest(msg="Body contains invalid data")
    if rdef.plural in body and rdef.singular not in body:
        items = body[rdef.plural]
        if not isinstance(items, list) or not items or not all(isinstance(i, dict) for i in items):
            raise errors.HTTPBadRequest(msg="Resources required")
        # Upstream takes each item bare or wrapped in the singular key, as
        # its own clients send them ({"security_groups": [{"security_group": ...}]}).
        return [_one(rdef, i) if rdef.singular in i else i for i in items], True
    return [_one(rdef, body)], False


def _one(rdef: ResourceDef, body: dict[str, Any]) -> dict[str, Any]:
    item = body.get(rdef.singular)
    if item is None:
        raise errors.HTTPBadRequest(msg=f"Unable to find '{rdef.singular}' in request body")
    if not isinstance(item, dict):
        raise errors.HTTPBadRequest(msg=f"Object '{rdef.singular}' contains invalid data")
    return item


def _convert(attr: Attribute, value: Any) -> Any:
    if attr.validate is None:
        return value
    try:
        return attr.validate(value)
    except v.NotConvertible as exc:
        raise errors.InvalidInput(error_message=str(exc)) from None
    except v.Invalid as exc:
        raise errors.HTTPBadRequest(
            msg=f"Invalid input for {attr.name}. Reason: {exc}.") from None


def _unknown(rdef: ResourceDef, item: dict[str, Any]) -> None:
    """Names the resource does not have; a sub-resource's parent key is the
    URL's, not an attribute (upstream does not know it in a body)."""
    extra = [k for k in item if k not in rdef.attributes
             or (k == rdef.parent_key and not rdef.attributes[k].allow_post)]
    if extra:
        raise errors.HTTPBadRequest(msg=f"Unrecognized attribute(s) '{', '.join(extra)}'")


def _project(ctx: Context, item: dict[str, Any], default_project: str | None) -> str:
    tenant, project = item.get("tenant_id"), item.get("project_id")
    if tenant and project and tenant != project:
        raise errors.BadRequest(resource="body", msg="'project_id' and 'tenant_id' do not match")
    wanted = project or tenant
    if wanted and wanted != ctx.project_id and not ctx.is_admin:
        raise errors.HTTPBadRequest(
            msg="Specifying 'project_id' other than the authenticated project in "
                "request is not allowed for the current user.")
    chosen = wanted or ctx.project_id or default_project
    if not chosen:
        raise errors.BadRequest(resource="body",
                                msg="Running without keystone AuthN requires that "
                                    "tenant_id is specified")
    return chosen


def for_create(rdef: ResourceDef, ctx: Context, item: dict[str, Any],
               default_project: str | None = None) -> dict[str, Any]:
    _unknown(rdef, item)
    out: dict[str, Any] = {}
    for name, value in item.items():
        attr = rdef.attributes[name]
        if not attr.allow_post:
            raise errors.HTTPBadRequest(msg=f"Attribute '{name}' not allowed in POST")
        out[name] = _convert(attr, value)
    for name, attr in rdef.attributes.items():
        if not attr.allow_post or name in out:
            continue
        if attr.default is UNSET:
            raise errors.HTTPBadRequest(msg=f"Failed to parse request. Required attribute "
                                            f"'{name}' not specified")
        out[name] = attr.default
    if rdef.null_project and "project_id" in item and item["project_id"] is None \
            and "tenant_id" not in item:
        if not ctx.is_admin:
            raise errors.HTTPBadRequest(
                msg="Specifying 'project_id' other than the authenticated project in "
                    "request is not allowed for the current user.")
        out["project_id"] = out["tenant_id"] = None
    elif "project_id" in rdef.attributes:
        project = _project(ctx, out, default_project)
        out["project_id"] = out["tenant_id"] = project
    return out


def for_update(rdef: ResourceDef, body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise errors.HTTPBadRequest(msg="Body contains invalid data")
    if not isinstance(body.get(rdef.singular), dict):
        raise errors.HTTPBadRequest(msg=f"Unable to find '{rdef.singular}' in request body")
    item = body[rdef.singular]
    _unknown(rdef, item)
    out = {}
    for name, value in item.items():
        attr = rdef.attributes[name]
        if not attr.allow_put:
            raise errors.HTTPBadRequest(msg=f"Cannot update read-only attribute {name}")
        out[name] = _convert(attr, value)
    return out


def explicit_non_defaults(rdef: ResourceDef, original: dict[str, Any],
                          data: dict[str, Any]) -> dict[str, Any]:
    """Attributes the caller set to something other than the default.

    Attribute policies (``create_network:shared``) apply only to these, as
    upstream: asking explicitly for the default is not a privileged act.
    """
    out = {}
    for key in original:
        attr = rdef.attributes.get(key)
        if attr is None or key not in data:
            continue
        if attr.default is not UNSET and data[key] == attr.default:
            continue
        out[key] = data[key]
    return out

"""JSON Schemas of attribute values, read from the validators that check them.

The resource definitions name a validator per attribute, not a type; the
OpenAPI document needs types. Validators built by the factories of
``resources.validators`` (``string(255)``, ``integer(0, 128)``,
``or_none(...)``) carry their parameters in their closure, the named ones
are known by identity, and any other says what it returns in its
annotation. A validator none of these describe gets the empty schema
(any value): the document then says less, never something false.
"""
from __future__ import annotations

from typing import Any, Callable

from neutrino.resources import validators as v
from neutrino.resources.attributes import Attribute

Schema = dict[str, Any]

NULL: Schema = {"type": "null"}
_IP: Schema = {"type": "string", "anyOf": [{"format": "ipv4"}, {"format": "ipv6"}]}
_MAC: Schema = {"type": "string", "pattern": "^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$"}
_CIDR: Schema = {"type": "string", "pattern": "/"}


def _object(properties: dict[str, Schema], required: tuple[str, ...] = ()) -> Schema:
    out: Schema = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        out["required"] = list(required)
    return out


def _named() -> dict[Any, Schema]:
    """Validators of ``resources.validators`` known by identity (looked up
    by name, so one renamed or gone only makes its type unknown)."""
    known = {
        "uuid": {"type": "string", "format": "uuid"},
        "boolean": {"type": "boolean"},
        "ip_address": _IP,
        "subnet_cidr": _CIDR,
        "ip_or_subnet": {"type": "string"},
        "mac_address": _MAC,
        "dict_or_empty": {"type": ["object", "null"]},
        "fixed_ips": {"type": "array", "items": _object(
            {"subnet_id": {"type": "string", "format": "uuid"}, "ip_address": _IP})},
        "allowed_address_pairs": {"type": ["array", "null"], "items": _object(
            {"ip_address": {"type": "string"}, "mac_address": nullable(_MAC)},
            ("ip_address",))},
        "extra_dhcp_opts": {"type": "array", "items": _object(
            {"opt_name": {"type": "string", "maxLength": 255},
             "opt_value": {"type": ["string", "null"], "maxLength": 255},
             "ip_version": {"enum": [4, 6]}}, ("opt_name",))},
    }
    return {getattr(v, name): schema for name, schema in known.items() if hasattr(v, name)}


def _closure(fn: Callable[..., Any]) -> dict[str, Any]:
    code = getattr(fn, "__code__", None)
    cells = getattr(fn, "__closure__", None) or ()
    if code is None:
        return {}
    return {name: cell.cell_contents for name, cell in zip(code.co_freevars, cells)}


def _factory(fn: Callable[..., Any]) -> str | None:
    """``string`` for a validator ``v.string(255)`` returned; None otherwise."""
    if getattr(fn, "__module__", None) != v.__name__:
        return None
    parts = getattr(fn, "__qualname__", "").split(".<locals>.")
    return parts[0] if len(parts) == 2 else None


def _from_factory(name: str, env: dict[str, Any]) -> Schema | None:
    if name == "string":
        out: Schema = {"type": "string"}
        if env.get("max_len") is not None:
            out["maxLength"] = env["max_len"]
        return out
    if name == "integer":
        out = {"type": "integer"}
        # the bounds the check applies: the declared ones within the column's
        if env.get("low") is not None:
            out["minimum"] = env["low"]
        if env.get("high") is not None:
            out["maximum"] = env["high"]
        return out
    if name == "values" and "allowed" in env:
        return {"enum": list(env["allowed"])}
    if name == "or_none" and "inner" in env:
        return nullable(of_validator(env["inner"]))
    if name == "list_of" and "item" in env:
        return {"type": "array", "items": of_validator(env["item"])}
    if name == "dict_with" and "keys" in env:
        return _object({k: of_validator(f) for k, f in env["keys"].items()},
                       tuple(env.get("required", ())))
    return None


_ANNOTATED = {"str": {"type": "string"}, "int": {"type": "integer"},
              "bool": {"type": "boolean"}, "None": NULL}


def _from_annotation(fn: Callable[..., Any]) -> Schema:
    """The return annotation, when it is a plain union of JSON types."""
    text = getattr(fn, "__annotations__", {}).get("return")
    if not isinstance(text, str):
        return {}
    parts = []
    for part in _top_level_union(text):
        base = part.split("[", 1)[0]
        if base in _ANNOTATED:
            parts.append(_ANNOTATED[base])
        elif base == "list":
            parts.append({"type": "array"})
        elif base == "dict":
            parts.append({"type": "object"})
        else:
            return {}
    if len(parts) == 1:
        return dict(parts[0])
    return {"type": [p["type"] for p in parts]}


def _top_level_union(text: str) -> list[str]:
    out, depth, current = [], 0, ""
    for char in text:
        depth += char == "["
        depth -= char == "]"
        if char == "|" and depth == 0:
            out.append(current.strip())
            current = ""
        else:
            current += char
    out.append(current.strip())
    return out


def nullable(schema: Schema) -> Schema:
    if not schema:
        return {}
    kind = schema.get("type")
    if isinstance(kind, str) and kind != "null" and set(schema) == {"type"}:
        return {"type": [kind, "null"]}
    if isinstance(kind, list):
        return {**schema, "type": sorted(set(kind) | {"null"})}
    return {"anyOf": [schema, NULL]}


def of_validator(fn: Callable[..., Any] | None) -> Schema:
    if fn is None:
        return {}
    try:
        named = _NAMED.get(fn)
    except TypeError:  # an unhashable callable
        named = None
    if named is not None:
        return dict(named)
    factory = _factory(fn)
    if factory is not None:
        found = _from_factory(factory, _closure(fn))
        if found is not None:
            return found
    return _from_annotation(fn)


_FILTERS: dict[Any, Schema] = {v.filter_int: {"type": "integer"},
                               v.filter_bool: {"type": "boolean"}, str: {"type": "string"}}


def of_filter(attribute: Attribute) -> Schema:
    """One value of a filter, as its query parameter carries it."""
    convert = attribute.convert_filter
    if convert in _FILTERS:
        return dict(_FILTERS[convert])
    return {"type": "string"}


def of_response(attribute: Attribute) -> Schema:
    """An attribute as the API shows it: its type, or null when unset."""
    schema = of_validator(attribute.validate)
    if not schema and attribute.convert_filter in _FILTERS:
        schema = dict(_FILTERS[attribute.convert_filter])
    return nullable(schema)


_NAMED = _named()

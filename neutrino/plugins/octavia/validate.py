"""Request bodies checked as Octavia's WSME types check them.

Each attribute is checked against its ``resources.octavia.Field``; an
attribute the method does not accept, or one nobody declares, is refused
(400), as WSME refuses unknown attributes. Explicit ``null`` is accepted
(it means "unset" on an update, as in Octavia) except for required ones.
"""
from __future__ import annotations

import ipaddress
import re
import uuid
from typing import Any
from urllib.parse import urlparse

from neutrino.plugins.octavia import faults
from neutrino.resources import octavia as res


def body_of(raw: Any, key: str) -> dict[str, Any]:
    """The object under ``key`` in a request body."""
    if not isinstance(raw, dict) or not isinstance(raw.get(key), dict):
        raise faults.BadRequest(f"Invalid input for field/attribute {key}. "
                                f"Value: '{raw}'. Mandatory field missing.")
    return raw[key]


def check(rdef: res.OctaviaResource, data: dict[str, Any], creating: bool,
          where: str | None = None, extra: tuple[str, ...] = ()) -> dict[str, Any]:
    """The body's attributes, checked and converted; on create with the
    defaults of those left out. ``extra`` names nested objects a
    single-call create also accepts (passed on unchecked)."""
    where = where or rdef.singular
    allowed = {f.name: f for f in rdef.fields if (f.post if creating else f.put)}
    allowed.update({name: res.Field(name, "object") for name in extra})
    unknown = [k for k in data if k not in allowed]
    if unknown:
        raise faults.UnknownAttribute(where, unknown)
    out: dict[str, Any] = {}
    for name, fld in allowed.items():
        if name in data:
            value = data[name]
            if value is None:
                if creating and fld.required:
                    raise faults.InvalidInput(name, None, "Mandatory field missing.")
                out[name] = None
                continue
            out[name] = convert(fld, value)
        elif creating:
            if fld.required:
                raise faults.InvalidInput(name, None, "Mandatory field missing.")
            if fld.default is not res.MISSING:
                default = fld.default
                out[name] = list(default) if isinstance(default, list) else default
    return out


def convert(fld: res.Field, value: Any) -> Any:
    kind = fld.type
    name = fld.name
    if kind == "string":
        return _string(fld, value)
    if kind == "bool":
        if not isinstance(value, bool):
            if isinstance(value, str) and value.lower() in ("true", "false"):
                return value.lower() == "true"
            raise faults.InvalidInput(name, value, "Wrong type. Expected 'bool', got "
                                      f"'{type(value).__name__}'")
        return value
    if kind == "int":
        return _int(fld, value)
    if kind == "enum":
        if isinstance(value, bool) or value not in fld.choices:
            choices = ", ".join(str(c) for c in fld.choices)
            raise faults.InvalidInput(name, value, f"Value should be one of: {choices}")
        return value
    if kind == "uuid":
        return _uuid(name, value)
    if kind == "ip":
        try:
            ipaddress.ip_address(str(value))
            return str(value)  # kept as written, as Octavia keeps it
        except ValueError:
            raise faults.InvalidInput(name, value, "Value should be IPv4 or IPv6 format") from None
    if kind == "uuid_list":
        return [_uuid(name, v) for v in _list(name, value)]
    if kind == "string_list":
        return [_string(fld, v) for v in _list(name, value)]
    if kind == "alpn_list":
        return [_alpn(name, v) for v in _list(name, value)]
    if kind == "cidr_list":
        out = []
        for v in _list(name, value):
            try:
                out.append(str(ipaddress.ip_network(str(v), strict=False)))
            except ValueError:
                raise faults.InvalidInput(name, value,
                                          "Value should be IPv4 or IPv6 CIDR format") from None
        return out
    if kind == "string_dict":
        if not isinstance(value, dict):
            raise faults.InvalidInput(name, value, "Wrong type. Expected 'dict'")
        return {str(k): _string(fld, v if isinstance(v, str) else str(v).lower()
                                if isinstance(v, bool) else str(v))
                for k, v in value.items()}
    if kind == "url":
        return _url(name, value)
    if kind == "url_path":
        return _url_path(name, value)
    return value  # "object": the resource's own rules check it


def _string(fld: res.Field, value: Any) -> str:
    if not isinstance(value, str):
        raise faults.InvalidInput(fld.name, value, "Wrong type. Expected 'str', got "
                                  f"'{type(value).__name__}'")
    if fld.max_length is not None and len(value) > fld.max_length:
        raise faults.InvalidInput(fld.name, value, "Value should have a maximum character "
                                  f"requirement of {fld.max_length}")
    if fld.min_length is not None and len(value) < fld.min_length:
        raise faults.InvalidInput(fld.name, value, "Value should have a minimum character "
                                  f"requirement of {fld.min_length}")
    if fld.pattern is not None and not re.match(fld.pattern, value):
        raise faults.InvalidInput(fld.name, value,
                                  f"Value should match the pattern {fld.pattern}")
    return value


def _int(fld: res.Field, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise faults.InvalidInput(fld.name, value, "Wrong type. Expected 'int', got "
                                  f"'{type(value).__name__}'")
    try:
        number = int(value)
    except ValueError:
        raise faults.InvalidInput(fld.name, value, "Wrong type. Expected 'int', got 'str'") \
            from None
    if fld.minimum is not None and number < fld.minimum:
        raise faults.InvalidInput(fld.name, value,
                                  f"Value should be greater or equal to {fld.minimum}")
    if fld.maximum is not None and number > fld.maximum:
        raise faults.InvalidInput(fld.name, value,
                                  f"Value should be lower or equal to {fld.maximum}")
    return number


def _uuid(name: str, value: Any) -> str:
    try:
        return str(uuid.UUID(str(value)))
    except ValueError:
        raise faults.InvalidInput(name, value, "Invalid UUID value") from None


def _list(name: str, value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise faults.InvalidInput(name, value, "Wrong type. Expected 'list', got "
                                  f"'{type(value).__name__}'")
    return value


def _alpn(name: str, value: Any) -> str:
    if value not in ("http/1.0", "http/1.1", "h2"):
        raise faults.InvalidInput(name, value,
                                  "Value should be one of: h2, http/1.0, http/1.1")
    return str(value)


def _url(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise faults.InvalidInput(name, value, "Not a valid URL")
    parsed = urlparse(value)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise faults.InvalidInput(name, value, f"Not a valid URL: {value}")
    return value


def _url_path(name: str, value: Any) -> str:
    if not isinstance(value, str) or not value.startswith("/") or \
            re.search(r"[\s]", value) or urlparse(value).scheme:
        raise faults.InvalidInput(name, value, f"Not a valid URL path: {value}")
    return value

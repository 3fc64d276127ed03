"""Upstream Neutron's versioned objects as they travel on the bus.

Upstream's agents of the resources RPC (the Open vSwitch agent's cache of
ports, networks and security groups) read and write oslo.versionedobjects
primitives: an envelope naming the object, its namespace and version, its
fields' primitives under ``versioned_object.data`` and the fields set under
``versioned_object.changes``. Each object type is declared once, as data, in
``vo_types``; this module only turns values into that envelope, each field
by its kind (how oslo.versionedobjects and neutron's own field types write
it: a MAC or an address as text, a dict of miscellaneous values as JSON
text, a set of ids as a list).
"""
from __future__ import annotations

import ipaddress
import json
from dataclasses import dataclass
from typing import Any, Callable

NAMESPACE = "versionedobjects"  # oslo.versionedobjects' default, which neutron keeps
ENVELOPE = "versioned_object"


def _text(value: Any) -> str:
    return str(value)


def _cidr(value: Any) -> str:
    """An address or a prefix as neutron's IPNetworkField writes it (a bare
    address is its host prefix)."""
    return str(ipaddress.ip_network(str(value), strict=False))


def _json(value: Any) -> str:
    if isinstance(value, str):
        value = json.loads(value) if value else {}
    return json.dumps(value or {}, sort_keys=True)


def _ids(value: Any) -> list[str]:
    return sorted(str(v) for v in value or ())


def _strings(value: Any) -> list[str]:
    return [str(v) for v in value or ()]


# kind -> how a (non-None) value is written
KINDS: dict[str, Callable[[Any], Any]] = {
    "uuid": _text, "string": _text, "mac": lambda v: str(v).lower(), "ip": _text,
    "cidr": _cidr, "bool": bool, "int": int, "json": _json, "uuid_set": _ids,
    "strings": _strings,
}
NESTED = ("object", "objects")


@dataclass(frozen=True)
class Field:
    """One field of an object: its upstream name, its kind, the key of the
    values it is read from (its name when None), what it is when the values
    lack it or give None (None: nullable), and for ``object``/``objects``
    the type of the nested object(s)."""

    name: str
    kind: str
    source: str | None = None
    default: Any = None
    nested: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS and self.kind not in NESTED:
            raise ValueError(f"field {self.name}: unknown kind {self.kind!r}")
        if (self.kind in NESTED) != (self.nested is not None):
            raise ValueError(f"field {self.name}: a nested type goes with object(s) only")


@dataclass(frozen=True)
class ObjectType:
    name: str
    version: str
    fields: tuple[Field, ...]

    @property
    def push_topic(self) -> str:
        """The fanout its changes are pushed on (upstream's
        ``neutron-vo-<type>-<version>``)."""
        return f"neutron-vo-{self.name}-{self.version}"


class Registry:
    """The declared object types by name."""

    def __init__(self, types: tuple[ObjectType, ...]) -> None:
        self.types = {t.name: t for t in types}
        for otype in types:
            for f in otype.fields:
                if f.nested is not None and f.nested not in self.types:
                    raise ValueError(f"{otype.name}.{f.name}: {f.nested} is not declared")

    def __getitem__(self, name: str) -> ObjectType:
        return self.types[name]

    def __contains__(self, name: object) -> bool:
        return name in self.types

    def primitive(self, name: str, values: dict[str, Any]) -> dict[str, Any]:
        """The object ``name`` with ``values`` as its primitive."""
        otype = self.types[name]
        data: dict[str, Any] = {}
        for f in otype.fields:
            value = values.get(f.source or f.name)
            if value is None:
                value = f.default
            data[f.name] = None if value is None else self._field(f, value)
        return {f"{ENVELOPE}.name": otype.name, f"{ENVELOPE}.namespace": NAMESPACE,
                f"{ENVELOPE}.version": otype.version, f"{ENVELOPE}.data": data,
                f"{ENVELOPE}.changes": sorted(data)}

    def _field(self, f: Field, value: Any) -> Any:
        if f.kind == "object":
            return self.primitive(f.nested or "", value)
        if f.kind == "objects":
            return [self.primitive(f.nested or "", v) for v in value]
        return KINDS[f.kind](value)

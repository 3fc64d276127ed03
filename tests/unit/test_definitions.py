"""Every resource definition and extension alias neutrino declares, checked as data.

The declarations under ``neutrino.resources`` are walked, not listed here, so
a resource or extension added tomorrow is checked without editing this file;
the running API (every service plugin and extension driver loaded) is then
compared with them: what it routes and lists must be what is declared.
"""
from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from falcon import inspect

import neutrino.resources
from neutrino.api.app import build_falcon
from neutrino.api.controller import Api
from neutrino.db import migrate
from neutrino.plugins import loader
from neutrino.resources.attributes import AUTO, UNSET, Attribute, AttributeMap, ResourceDef
from neutrino.resources.extensions import KNOWN
from neutrino.service import build_api, make_conf

SERVICE_PLUGINS = ("router", "port_forwarding", "auto_allocate", "qos", "segments", "trunk",
                   "metering", "service_type", "network_ip_availability",
                   "dhcp_agent_scheduler", "flavors",
                   "network_segment_range")
EXTENSION_DRIVERS = ("port_security", "dns", "qos")
# Endpoints of the API itself rather than of a resource: discovery and quotas.
OWN_ENDPOINTS = ("", "extensions", "quotas", "openapi.json")
# Defaults that mean "not given", left to the plugin, never validated.
NOT_GIVEN = (None, AUTO)
# The one extension declared by its driver: ``dns_name`` is checked against
# ``[DEFAULT] dns_domain``, so the driver builds the attributes from its options.
BUILT_FROM_OPTIONS = {"networks": {"dns_domain"}, "ports": {"dns_name", "dns_assignment"}}


def _modules() -> Iterator[Any]:
    for info in pkgutil.iter_modules(neutrino.resources.__path__):
        yield importlib.import_module(f"neutrino.resources.{info.name}")


def _is_attribute_map(value: Any) -> bool:
    return isinstance(value, dict) and bool(value) and all(
        isinstance(attrs, list) and attrs and all(isinstance(a, Attribute) for a in attrs)
        for attrs in value.values())


def _declared() -> tuple[dict[str, ResourceDef], dict[str, AttributeMap]]:
    """Module-level definitions (alone or in tuples) and attribute maps."""
    definitions: dict[str, ResourceDef] = {}
    maps: dict[str, AttributeMap] = {}
    for module in _modules():
        for name, value in vars(module).items():
            for item in value if isinstance(value, tuple) else (value,):
                if isinstance(item, ResourceDef):
                    seen = definitions.setdefault(item.plural, item)
                    assert seen is item, f"{item.plural} is declared twice"
            if _is_attribute_map(value):
                maps[f"{module.__name__.rpartition('.')[2]}.{name}"] = value
    return definitions, maps


DEFINITIONS, ATTRIBUTE_MAPS = _declared()
# Each definition's own attributes, and each extension's attributes per collection.
ATTRIBUTE_GROUPS: dict[str, list[Attribute]] = {
    **{plural: list(d.attributes.values()) for plural, d in DEFINITIONS.items()},
    **{f"{name}:{plural}": attrs for name, added in ATTRIBUTE_MAPS.items()
       for plural, attrs in added.items()},
}


def _from_resources(fn: Callable[..., Any]) -> bool:
    return getattr(fn, "__module__", "").startswith("neutrino.resources")


def _attribute_problems(a: Attribute) -> list[str]:
    problems = []
    if a.validate is not None and not (callable(a.validate) and _from_resources(a.validate)):
        problems.append(f"validator {a.validate!r} is not declared under neutrino.resources")
    if a.convert_filter is not None and not callable(a.convert_filter):
        problems.append("filter conversion is not callable")
    if a.convert_filter is not None and not a.is_filter:
        problems.append("converts filters but is no filter")
    if a.required and a.validate is None:
        problems.append("required on POST but never validated")
    if a.default is not UNSET and not (a.allow_post or a.allow_put):
        problems.append("has a default but is never written")
    if a.required and not a.allow_post:
        problems.append("required but not allowed on POST")
    if a.default not in NOT_GIVEN and a.default is not UNSET and a.validate is not None:
        try:
            a.validate(a.default)
        except Exception as exc:  # noqa: BLE001 - any failure is the finding
            problems.append(f"default {a.default!r} fails its own validator: {exc}")
    return [f"{a.name}: {p}" for p in problems]


@pytest.mark.parametrize("group", sorted(ATTRIBUTE_GROUPS))
def test_attributes_are_consistent(group: str) -> None:
    problems = [p for a in ATTRIBUTE_GROUPS[group] for p in _attribute_problems(a)]
    assert problems == []


PARENT_SHOWN = {"port_associations"}


@pytest.mark.parametrize("plural", sorted(DEFINITIONS))
def test_definition_is_consistent(plural: str) -> None:
    rdef = DEFINITIONS[plural]
    assert all(name == a.name for name, a in rdef.attributes.items())
    assert rdef.singular and rdef.plural
    assert set(rdef.actions.values()) <= {"GET", "PUT", "POST"}
    assert rdef.has_tags == ("tags" in rdef.attributes)
    if rdef.parent is not None:
        assert rdef.parent in DEFINITIONS, f"unknown parent {rdef.parent}"
        assert rdef.parent_key in rdef.attributes
        # the parent's id is in the URL, so not in the body, except where
        # upstream shows it (a local IP's port associations: ``local_ip_id``)
        assert rdef.attributes[rdef.parent_key].is_visible == (plural in PARENT_SHOWN)


@pytest.mark.parametrize("name", sorted(ATTRIBUTE_MAPS))
def test_extensions_extend_declared_resources(name: str) -> None:
    assert set(ATTRIBUTE_MAPS[name]) <= set(DEFINITIONS)


@pytest.mark.parametrize("alias", sorted(KNOWN))
def test_alias_is_described(alias: str) -> None:
    d = KNOWN[alias]
    assert d.alias == alias
    assert d.name.strip() and d.description.strip() and d.updated.strip()


# -- the running API against the declarations -------------------------------------


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Api:
    tmp: Path = tmp_path_factory.mktemp("definitions")
    url = f"sqlite:///{tmp / 'defs.sqlite'}"
    migrate.upgrade(url)
    conf = tmp / "neutrino.conf"
    conf.write_text(f"[DEFAULT]\nauth_strategy = noauth\n"
                    f"service_plugins = {','.join(SERVICE_PLUGINS)}\n"
                    f"[database]\nconnection = {url}\n"
                    f"[ml2]\nmechanism_drivers = openvswitch\n"
                    f"extension_drivers = {','.join(EXTENSION_DRIVERS)}\n")
    return build_api(make_conf(["--config-file", str(conf)]))


def test_every_listed_alias_is_described(api: Api) -> None:
    assert set(api.aliases) <= set(KNOWN)


def test_every_alias_a_plugin_supports_is_described() -> None:
    for name in SERVICE_PLUGINS:
        cls: Any = loader.load_class("neutrino.service_plugins", name)
        assert set(cls.supported_extension_aliases) <= set(KNOWN), name


def test_every_served_collection_is_declared(api: Api) -> None:
    assert set(api.resources) <= set(DEFINITIONS)
    for plural, served in api.resources.items():
        declared = DEFINITIONS[plural]
        assert (served.singular, served.url_plural, served.parent) == (
            declared.singular, declared.url_plural, declared.parent)
        extended = {a.name for name, added in ATTRIBUTE_MAPS.items()
                    for a in added.get(plural, [])}
        assert set(declared.attributes) <= set(served.attributes)
        undeclared = set(served.attributes) - set(declared.attributes) - extended
        assert undeclared == BUILT_FROM_OPTIONS.get(plural, set()), plural


def test_every_collection_has_an_owner(api: Api) -> None:
    assert set(api.owners) <= set(api.resources)


def test_every_route_is_a_declared_collection(api: Api) -> None:
    """What falcon routes, up to the first path field, is a declared
    collection (or one under its parent), an extension's own route or an
    endpoint of the API itself."""
    collections = {p: d for d in api.resources.values() if d.parent is None
                   for p in d.url_spellings}
    tagged = {p for d in api.resources.values() if d.has_tags and d.parent is None
              for p in d.tag_spellings}
    custom = {route.path.lstrip("/") for route in api.routes}
    for route in inspect.inspect_routes(build_falcon(api)):
        path = route.path.removeprefix("/v2.0").lstrip("/")
        if path in custom or path.split("/")[0] in OWN_ENDPOINTS:
            continue
        head = path.split("/{")[0]
        if head not in collections and head in tagged:
            assert path[len(head):] in ("/{rid}/tags", "/{rid}/tags/{tag}"), route.path
            continue
        assert head in collections, route.path
        rdef = collections[head]
        rest = [s for s in path[len(head):].split("/") if s and not s.startswith("{")]
        children = {p: d for d in api.resources.values() if d.parent == rdef.plural
                    for p in d.url_spellings}
        if rest and rest[0] in children:
            rdef, rest = children[rest[0]], rest[1:]
        tags = ["tags"] if rdef.has_tags and rdef.parent is None else []
        assert rest in ([], tags) or (len(rest) == 1 and rest[0] in rdef.actions), route.path

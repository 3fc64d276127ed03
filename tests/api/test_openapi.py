"""The OpenAPI document: complete for the routes served, valid OpenAPI 3.1,
served to any caller and listed nowhere a Neutron client looks."""
from __future__ import annotations

import re
from typing import Any, Iterator

import pytest
from openapi_spec_validator import validate

from neutrino.api import openapi_types as types
from neutrino.api.app import build_falcon
from neutrino.api.controller import Action
from neutrino.api.openapi import PATH, document
from neutrino.db import migrate
from neutrino.resources import validators as v
from neutrino.resources.attributes import attr
from neutrino.service import build_api, make_conf
from tests.conftest import SESSION_EXTRA, Client

_METHODS = ("GET", "POST", "PUT", "DELETE", "PATCH")


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """An API with every plugin the all-in-one loads, and the agent schedulers'."""
    tmp = tmp_path_factory.mktemp("openapi")
    url = f"sqlite:///{tmp / 'doc.sqlite'}"
    migrate.upgrade(url)
    conf = tmp / "n.conf"
    conf.write_text(f"[DEFAULT]\nauth_strategy = noauth\n{SESSION_EXTRA}"
                    f"[database]\nconnection = {url}\n")
    return build_api(make_conf(["--config-file", str(conf)]))


def _routes(api: Any) -> Iterator[tuple[str, str]]:
    """(template, method) of every responder the Falcon app routes."""
    app = build_falcon(api)
    nodes = list(app._router._roots)
    while nodes:
        node = nodes.pop()
        nodes.extend(node.children)
        if node.resource is None:
            continue
        inner = getattr(node.resource, "inner", node.resource)
        for method in _METHODS:
            if not hasattr(node.resource, f"on_{method.lower()}"):
                continue
            # An action answers 405 to any method but its own, by design.
            if isinstance(inner, Action) and method != inner.method:
                continue
            yield node.uri_template, method


def _shape(template: str) -> str:
    """The route's shape: its fields unnamed, and hyphens and underscores
    alike (a collection answers under both spellings, documented once)."""
    return re.sub(r"\{[^}]*\}", "{}", template).replace("_", "-")


def test_every_served_route_is_documented(api: Any) -> None:
    doc = document(api)
    documented = {(_shape(path), method.upper())
                  for path, ops in doc["paths"].items() for method in ops}
    served = {(_shape(t), m) for t, m in _routes(api)}
    assert served, "no routes found"
    assert served - documented == set()
    assert documented - served == set()


def test_document_is_valid_openapi_3_1(api: Any) -> None:
    doc = document(api)
    assert doc["openapi"].startswith("3.1")
    validate(doc)


def test_actions_filters_and_errors_are_described(api: Any) -> None:
    doc = document(api)
    action = doc["paths"]["/v2.0/routers/{id}/add_router_interface"]
    assert set(action) == {"put"}
    listing = doc["paths"]["/v2.0/networks"]["get"]
    names = {p["name"] for p in listing["parameters"]}
    assert {"limit", "marker", "sort_key", "sort_dir", "fields", "admin_state_up",
            "revision_number", "name"} <= names
    assert "subnets" in names and {"tags", "not-tags-any"} <= names
    assert listing["responses"]["404"] == {"$ref": "#/components/responses/Error"}
    error = doc["components"]["schemas"]["NeutronError"]["properties"]["NeutronError"]
    assert error["required"] == ["type", "message", "detail"]
    create = doc["components"]["schemas"]["SubnetCreate"]
    assert {"network_id", "ip_version"} <= set(create["required"])
    assert create["properties"]["ip_version"] == {"enum": [4, 6]}


@pytest.mark.parametrize("validator, schema", [
    (v.string(255), {"type": "string", "maxLength": 255}),
    (v.integer(0, 128), {"type": "integer", "minimum": 0, "maximum": 128}),
    (v.or_none(v.uuid), {"anyOf": [{"type": "string", "format": "uuid"}, {"type": "null"}]}),
    (v.or_none(v.boolean), {"type": ["boolean", "null"]}),
    (v.list_of(v.string(8)), {"type": "array", "items": {"type": "string", "maxLength": 8}}),
    (v.values("a", "b"), {"enum": ["a", "b"]}),
    (None, {}),
])
def test_types_come_from_validators(validator: Any, schema: dict[str, Any]) -> None:
    assert types.of_validator(validator) == schema


def test_an_unknown_validator_is_any_value() -> None:
    def opaque(value):  # type: ignore[no-untyped-def]
        return value
    assert types.of_validator(opaque) == {}
    assert types.of_filter(attr("x", opaque, is_filter=True)) == {"type": "string"}


def test_served_to_a_member_and_listed_nowhere(server: Any, project_id: str) -> None:
    member = Client(server.url, project_id, "member")
    status, doc = member.get(PATH)
    assert status == 200
    assert doc["openapi"].startswith("3.1") and "/v2.0/networks" in doc["paths"]
    _, root = member.get("/v2.0")
    assert all("openapi" not in r["collection"] for r in root["resources"])
    _, extensions = member.get("/v2.0/extensions")
    assert all("openapi" not in e["alias"] for e in extensions["extensions"])

"""The context hook: identity from headers, noauth admin, request ids."""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import falcon
import falcon.testing
import pytest

from neutrino.api.hooks.context import ContextHook
from neutrino.policy.engine import Policy
from neutrino.service import make_conf


class _Echo:
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        ctx = req.context.neutron
        resp.media = {"project": ctx.project_id, "user": ctx.user_id, "roles": ctx.roles,
                      "admin": ctx.is_admin, "request_id": ctx.request_id}


def _client(auth_strategy: str) -> falcon.testing.TestClient:
    conf = make_conf([])
    conf.set_override("auth_strategy", auth_strategy)
    api = SimpleNamespace(conf=conf, policy=Policy(conf))
    app = falcon.App(middleware=[ContextHook(api)])
    app.add_route("/", _Echo())
    return falcon.testing.TestClient(app)


def _get(client: falcon.testing.TestClient, **headers: str) -> tuple[dict[str, Any], Any]:
    result = client.simulate_get("/", headers=headers)
    return result.json, result.headers


def test_noauth_without_identity_headers_is_admin() -> None:
    body, _ = _get(_client("noauth"))
    assert body["admin"] is True and body["project"] is None


def test_noauth_headers_make_a_project_caller_with_implied_roles() -> None:
    body, _ = _get(_client("noauth"), **{"X-Project-Id": "p1", "X-User-Id": "u1",
                                         "X-Roles": "member"})
    assert (body["project"], body["user"], body["admin"]) == ("p1", "u1", False)
    assert body["roles"] == ["member", "reader"]


def test_noauth_admin_role_makes_an_admin() -> None:
    body, _ = _get(_client("noauth"), **{"X-Project-Id": "p1", "X-Roles": "admin"})
    assert body["admin"] is True
    assert set(body["roles"]) == {"admin", "manager", "member", "reader"}


def test_keystone_roles_are_taken_as_the_token_says() -> None:
    body, _ = _get(_client("keystone"), **{"X-Project-Id": "p1", "X-User-Id": "u",
                                           "X-Roles": "member"})
    assert body["roles"] == ["member"] and body["admin"] is False


@pytest.mark.parametrize("given", [None, "req-1b1c6a56-0000-4000-8000-000000000001"])
def test_every_request_gets_its_own_id_and_a_callers_id_is_not_reused(given: str | None) -> None:
    headers = {"X-Openstack-Request-Id": given} if given else {}
    body, resp_headers = _get(_client("noauth"), **headers)
    assert resp_headers["x-openstack-request-id"] == body["request_id"]
    assert body["request_id"].startswith("req-") and body["request_id"] != given

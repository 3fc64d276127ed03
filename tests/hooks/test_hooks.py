"""Unit tests of the request pipeline's hooks, each on its own."""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import falcon
import falcon.testing
import pytest

from neutrino import errors
from neutrino.api.hooks import body, quota
from neutrino.api.hooks.notifier import NotifierHook
from neutrino.api.hooks.ownership import check_ownership
from neutrino.api.hooks.translation import add_error_handlers
from neutrino.context import Context
from neutrino.resources import core

# -- exception translation -------------------------------------------------------

class _Raiser:
    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        raise self.exc


def _translated(exc: Exception | None, path: str = "/boom") -> falcon.testing.Result:
    app = falcon.App()
    add_error_handlers(app)
    if exc is not None:
        app.add_route("/boom", _Raiser(exc))
    return falcon.testing.TestClient(app).simulate_get(path)


def test_neutron_errors_become_neutron_error_bodies_with_their_code() -> None:
    result = _translated(errors.NetworkNotFound(net_id="n1"))
    assert result.status_code == 404
    assert result.json == {"NeutronError": {"type": "NetworkNotFound",
                                            "message": "Network n1 could not be found.",
                                            "detail": ""}}


def test_unknown_urls_are_404_neutron_errors() -> None:
    result = _translated(None, "/nowhere")
    assert result.status_code == 404
    assert result.json["NeutronError"]["type"] == "HTTPNotFound"


def test_unexpected_errors_are_500_without_internals() -> None:
    result = _translated(RuntimeError("secret detail"))
    assert result.status_code == 500
    assert "secret" not in result.text
    assert result.json["NeutronError"]["type"] == "HTTPInternalServerError"


# -- body validation ------------------------------------------------------------

def test_body_validation_fills_defaults_and_project() -> None:
    ctx = Context(project_id="p1", roles=["member", "reader"])
    data = body.for_create(core.core_resources()["networks"], ctx, {"name": "n"})
    assert data["admin_state_up"] is True and data["project_id"] == data["tenant_id"] == "p1"


@pytest.mark.parametrize("item, message", [
    ({"bogus": 1}, "Unrecognized attribute(s) 'bogus'"),
    ({"id": "x"}, "Attribute 'id' not allowed in POST"),
    ({"name": 5}, "Invalid input for name. Reason: '5' is not a valid string."),
])
def test_body_validation_refuses_what_upstream_refuses(item: dict[str, Any], message: str) -> None:
    with pytest.raises(errors.HTTPBadRequest) as exc:
        body.for_create(core.core_resources()["networks"], Context(project_id="p1"), item)
    assert exc.value.msg == message


def test_update_refuses_read_only_attributes() -> None:
    with pytest.raises(errors.HTTPBadRequest) as exc:
        body.for_update(core.core_resources()["networks"], {"network": {"status": "DOWN"}})
    assert exc.value.msg == "Cannot update read-only attribute status"


# -- ownership ------------------------------------------------------------------

class _Targets:
    def __init__(self, network: dict[str, Any] | None) -> None:
        self._network = network

    def network(self, net_id: str) -> dict[str, Any] | None:
        return self._network


class _Policy:
    def __init__(self, allow: bool) -> None:
        self.allow = allow

    def check(self, ctx: Any, action: str, target: dict[str, Any]) -> bool:
        return self.allow


def test_port_on_a_network_the_caller_cannot_see_is_404() -> None:
    api = SimpleNamespace(policy=_Policy(False))
    ctx = Context(project_id="p2", roles=["member", "reader"])
    with pytest.raises(errors.NetworkNotFound):
        check_ownership(api, core.PORT, ctx, {"network_id": "n", "project_id": "p2"},
                        _Targets({"project_id": "p1", "shared": False}))


def test_port_on_a_shared_network_passes_ownership() -> None:
    api = SimpleNamespace(policy=_Policy(True))
    ctx = Context(project_id="p2", roles=["member", "reader"])
    check_ownership(api, core.PORT, ctx, {"network_id": "n", "project_id": "p2"},
                    _Targets({"project_id": "p1", "shared": True}))


def test_subnets_are_left_to_policy() -> None:
    api = SimpleNamespace(policy=_Policy(False))
    check_ownership(api, core.SUBNET, Context(project_id="p2"),
                    {"network_id": "n", "project_id": "p2"}, _Targets(None))


# -- quota ----------------------------------------------------------------------

def test_quota_hook_counts_each_projects_share_of_a_bulk_request() -> None:
    ctx = Context(project_id="p1")
    quota.reserve(ctx, "port", [{"project_id": "p1"}, {"project_id": "p2"}, {"project_id": "p1"}])
    assert ctx.quota_request == {"p1": {"port": 2}, "p2": {"port": 1}}


# -- notifier -------------------------------------------------------------------

class _Recorder:
    enabled = True

    def __init__(self) -> None:
        self.sent: list[tuple[str, Any]] = []

    def info(self, ctx: Any, event: str, payload: Any) -> None:
        self.sent.append((event, payload))


def test_notifier_sends_upstreams_payloads() -> None:
    rec = _Recorder()
    hook, ctx = NotifierHook(rec), Context(project_id="p1")
    hook.create_start(ctx, "network", {"networks": [{}, {}]})
    hook.create_end(ctx, "network", [{"id": "a"}, {"id": "b"}])
    hook.delete_start(ctx, "network", "a")
    hook.delete_end(ctx, "network", "a", {"id": "a", "name": "x"})
    assert rec.sent == [
        ("network.create.start", {"networks": [{}, {}]}),
        ("network.create.end", {"network": {"id": "a"}}),
        ("network.create.end", {"network": {"id": "b"}}),
        ("network.delete.start", {"network_id": "a"}),
        ("network.delete.end", {"network_id": "a", "network": {"id": "a", "name": "x"}}),
    ]


def test_notifier_without_a_bus_sends_nothing() -> None:
    hook = NotifierHook(None)
    hook.create_start(Context(), "network", {})  # no error, nothing to send to
    assert not hook.enabled


# -- policy ---------------------------------------------------------------------

class _Plugin:
    """Answers network owner/sharing lookups and counts them."""

    def __init__(self) -> None:
        self.calls = 0

    def network_of(self, net_id: str, ctx: Any = None) -> dict[str, Any]:
        return self.networks_of([net_id], ctx)[net_id]

    def networks_of(self, ids: list[str], ctx: Any = None) -> dict[str, dict[str, Any]]:
        self.calls += 1
        return {i: {"project_id": "owner", "tenant_id": "owner", "shared": i == "shared"}
                for i in ids}


def _policy() -> Any:
    from neutrino.policy.engine import Policy
    from neutrino.service import make_conf
    return Policy(make_conf([]))


def test_targets_add_the_networks_owner_and_sharing_once_per_request() -> None:
    from neutrino.api.hooks.policy import Targets
    plugin = _Plugin()
    targets = Targets(plugin, Context(project_id="p"))
    items = [{"id": str(i), "network_id": "shared"} for i in range(50)]
    targets.prefetch(items)
    target = targets.of(items[0])
    assert target["network:project_id"] == "owner" and target["shared"] is True
    assert all(targets.of(i)["shared"] for i in items)
    assert plugin.calls == 1


def test_shaper_hides_admin_only_attributes_and_keeps_requested_fields() -> None:
    from neutrino.api.hooks.policy import Shaper, Targets
    api = SimpleNamespace(policy=_policy())
    member = Context(project_id="owner", roles=["member", "reader"])
    shaper = Shaper(api, core.core_resources()["networks"], member, Targets(_Plugin(), member))
    item = {"id": "n", "name": "x", "project_id": "owner", "provider:network_type": "vxlan"}
    assert shaper.visible(item)
    assert "provider:network_type" not in shaper.shape(item, None)
    assert shaper.shape(item, ["name", "provider:network_type"]) == {"name": "x"}
    admin = Context(project_id="a", roles=["admin", "member", "reader"], is_admin=True)
    assert "provider:network_type" in Shaper(api, core.core_resources()["networks"], admin,
                                             Targets(_Plugin(), admin)).shape(item, None)


def test_shaper_hides_rows_of_other_projects() -> None:
    from neutrino.api.hooks.policy import Shaper, Targets
    api = SimpleNamespace(policy=_policy())
    other = Context(project_id="else", roles=["member", "reader"])
    shaper = Shaper(api, core.core_resources()["networks"], other, Targets(_Plugin(), other))
    assert not shaper.visible({"id": "n", "project_id": "owner", "shared": False})
    assert shaper.visible({"id": "n", "project_id": "owner", "shared": True})

"""Service plugins' say in core transactions (neutrino.plugins.events)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from neutrino import errors
from neutrino.plugins import events as ev
from neutrino.plugins.base import ServicePlugin
from tests.inprocess import CountingApp


def test_subscribers_are_called_in_subscription_order_with_the_arguments() -> None:
    events, seen = ev.Events(), []
    events.subscribe("ports", ev.PRECOMMIT_DELETE, lambda *a: seen.append(("first", a)))
    events.subscribe("ports", ev.PRECOMMIT_DELETE, lambda *a: seen.append(("second", a)))
    events.notify("ports", ev.PRECOMMIT_DELETE, "conn", "ctx", {"id": "p"})
    events.notify("networks", ev.PRECOMMIT_DELETE, "conn", "ctx", {"id": "n"})
    assert seen == [("first", ("conn", "ctx", {"id": "p"})),
                    ("second", ("conn", "ctx", {"id": "p"}))]
    assert events.wants("ports", ev.PRECOMMIT_DELETE)
    assert not events.wants("ports", ev.PRECOMMIT_UPDATE)


def test_changes_announced_together_reach_batch_subscribers_once() -> None:
    """An agent's device list changes many ports: a subscriber that reads
    what changed (the versioned-object pushes) is called once for all."""
    events, each, batches = ev.Events(), [], []
    events.subscribe("ports", ev.AFTER_UPDATE, lambda *a: each.append(a))
    events.subscribe_batch("ports", ev.AFTER_UPDATE, batches.append)
    events.notify_many("ports", ev.AFTER_UPDATE, [(None, {"id": "a"}, {"id": "a"}),
                                                  (None, {"id": "b"}, {"id": "b"})])
    events.notify("ports", ev.AFTER_UPDATE, "ctx", {"id": "c"}, {"id": "c"})
    events.notify_many("ports", ev.AFTER_UPDATE, [])
    assert [a[1]["id"] for a in each] == ["a", "b", "c"]
    assert [[c[1]["id"] for c in batch] for batch in batches] == [["a", "b"], ["c"]]
    with pytest.raises(ValueError, match="after-commit"):
        events.subscribe_batch("ports", ev.PRECOMMIT_UPDATE, print)


def test_a_failing_batch_subscriber_does_not_stop_the_others() -> None:
    events, seen = ev.Events(), []
    events.subscribe_batch("ports", ev.AFTER_CREATE, lambda changes: 1 / 0)
    events.subscribe_batch("ports", ev.AFTER_CREATE, seen.append)
    events.notify("ports", ev.AFTER_CREATE, "ctx", {"id": "p"})
    assert seen == [[("ctx", {"id": "p"})]]


def test_an_unknown_event_is_refused_at_subscription() -> None:
    with pytest.raises(ValueError, match="unknown event 'after_lunch'"):
        ev.Events().subscribe("ports", "after_lunch", print)


class PortGuard(errors.Conflict):
    message = "Port %(port_id)s is guarded."


class GuardPlugin(ServicePlugin):
    """Guards ports named 'guarded' and records renames of networks."""

    service_type = "GUARD"

    def connect(self, core: Any) -> None:
        super().connect(core)
        self.renames: list[tuple[str, str]] = []
        core.events.subscribe("ports", ev.PRECOMMIT_DELETE, self._refuse_guarded)
        core.events.subscribe("networks", ev.PRECOMMIT_UPDATE, self._record)
        self.after: list[tuple[str, Any]] = []
        core.events.subscribe("ports", ev.AFTER_CREATE,
                              lambda ctx, port: self.after.append(("create", port["name"])))
        core.events.subscribe("ports", ev.AFTER_UPDATE, lambda ctx, old, new: self.after.append(
            ("update", (old["name"], new["name"]))))
        core.events.subscribe("ports", ev.AFTER_DELETE,
                              lambda ctx, port: self.after.append(("delete", port["name"])))
        core.events.subscribe("networks", ev.AFTER_CREATE, self._fail)

    def _fail(self, ctx: Any, network: dict[str, Any]) -> None:
        raise RuntimeError("a broken subscriber")

    def _refuse_guarded(self, conn: Any, ctx: Any, port: dict[str, Any]) -> None:
        if port["name"] == "guarded":
            raise PortGuard(port_id=port["id"])

    def _record(self, conn: Any, ctx: Any, original: dict[str, Any],
                changes: dict[str, Any]) -> None:
        if "name" in changes:
            self.renames.append((original["name"], changes["name"]))


@pytest.fixture
def app(tmp_path: Path) -> CountingApp:
    return CountingApp(tmp_path, "[DEFAULT]\nservice_plugins = "
                                 "tests.unit.test_events:GuardPlugin\n")


def _post(app: CountingApp, path: str, body: dict[str, Any]) -> dict[str, Any]:
    result = app.client.simulate_post(path, json=body)
    assert result.status_code == 201, result.text
    return result.json


def test_a_subscriber_refusing_a_delete_leaves_the_resource_in_place(app: CountingApp) -> None:
    net = _post(app, "/v2.0/networks", {"network": {"name": "n"}})["network"]
    guarded = _post(app, "/v2.0/ports", {"port": {"network_id": net["id"], "name": "guarded"}})
    free = _post(app, "/v2.0/ports", {"port": {"network_id": net["id"], "name": "free"}})
    refused = app.client.simulate_delete(f"/v2.0/ports/{guarded['port']['id']}")
    assert refused.status_code == 409
    assert refused.json["NeutronError"]["type"] == "PortGuard"
    assert app.client.simulate_get(f"/v2.0/ports/{guarded['port']['id']}").status_code == 200
    assert app.client.simulate_delete(f"/v2.0/ports/{free['port']['id']}").status_code == 204


def test_update_subscribers_see_the_original_and_the_change(app: CountingApp) -> None:
    net = _post(app, "/v2.0/networks", {"network": {"name": "before"}})["network"]
    result = app.client.simulate_put(f"/v2.0/networks/{net['id']}",
                                     json={"network": {"name": "after"}})
    assert result.status_code == 200
    assert _guard_of(app).renames == [("before", "after")]


def _guard_of(app: CountingApp) -> GuardPlugin:
    owners = [getattr(cb, "__self__", None)
              for cbs in app.api.plugin.events._subscribers.values() for cb in cbs]
    return next(o for o in owners if isinstance(o, GuardPlugin))


def test_after_commit_subscribers_see_each_change_once_it_is_made(app: CountingApp) -> None:
    net = _post(app, "/v2.0/networks", {"network": {"name": "n"}})["network"]  # one fails
    port = _post(app, "/v2.0/ports", {"port": {"network_id": net["id"], "name": "a"}})["port"]
    app.client.simulate_put(f"/v2.0/ports/{port['id']}", json={"port": {"name": "b"}})
    assert app.client.simulate_delete(f"/v2.0/ports/{port['id']}").status_code == 204
    assert _guard_of(app).after == [("create", "a"), ("update", ("a", "b")), ("delete", "b")]


def test_a_failing_after_commit_subscriber_does_not_fail_the_committed_change(
        app: CountingApp) -> None:
    created = app.client.simulate_post("/v2.0/networks", json={"network": {"name": "kept"}})
    assert created.status_code == 201
    shown = app.client.simulate_get(f"/v2.0/networks/{created.json['network']['id']}")
    assert shown.json["network"]["name"] == "kept"

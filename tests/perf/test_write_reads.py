"""An update or delete reads its resource once before writing: the request's
read for policy stands for the transaction's own when the row, locked,
still has the revision that read showed (``CorePlugin._as_seen``)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from neutrino.context import Context
from neutrino.plugins import events as ev
from tests.inprocess import CountingApp


class App(CountingApp):
    def __init__(self, tmp: Path) -> None:
        super().__init__(tmp, "[ml2]\nextension_drivers = port_security\n")
        self.originals: list[dict[str, Any]] = []
        self.api.plugin.events.subscribe("networks", ev.AFTER_UPDATE, self._updated)

    def _updated(self, ctx: Any, original: dict[str, Any], current: dict[str, Any]) -> None:
        self.originals.append(original)

    def post(self, plural: str, body: dict[str, Any]) -> dict[str, Any]:
        res = self.client.simulate_post(f"/v2.0/{plural}", json={plural[:-1]: body})
        assert res.status_code == 201, res.text
        return res.json[plural[:-1]]

    def reads_of(self, method: str, path: str, body: Any = None) -> list[str]:
        """The request's statements, ``BEGIN`` (SQLite's own) left out."""
        seen, _ = self.recorded(path, {}, method, body)
        return [" ".join(s.split()) for s in seen if not s.startswith("BEGIN")]


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    yield App(tmp_path_factory.mktemp("write-reads"))


def _by_id(statements: list[str], table: str) -> int:
    return sum(1 for s in statements
               if s.startswith(f"SELECT {table}.id") and f"WHERE {table}.id = ?" in s)


def test_a_network_update_reads_it_for_policy_locks_it_and_reads_it_back(app: App) -> None:
    net = app.post("networks", {"name": "before"})
    statements = app.reads_of("PUT", f"/v2.0/networks/{net['id']}",
                              {"network": {"name": "after"}})
    assert _by_id(statements, "networks") == 3
    assert len(statements) == 4  # and the UPDATE
    shown = app.client.simulate_get(f"/v2.0/networks/{net['id']}").json["network"]
    assert (shown["name"], shown["revision_number"]) == ("after", net["revision_number"] + 1)


def test_the_drivers_original_is_the_network_the_request_read(app: App) -> None:
    net = app.post("networks", {"name": "old"})
    app.originals.clear()
    res = app.client.simulate_put(f"/v2.0/networks/{net['id']}", json={"network": {"name": "new"}})
    assert res.status_code == 200, res.text
    [original] = app.originals
    assert {k: original[k] for k in net} == net


def test_a_network_changed_since_the_request_read_it_is_read_again(app: App) -> None:
    net = app.post("networks", {"name": "first"})
    app.client.simulate_put(f"/v2.0/networks/{net['id']}", json={"network": {"name": "second"}})
    app.originals.clear()
    app.statements = 0
    # What a request read before the rename: its revision is no longer the row's.
    updated = app.api.plugin.update(Context.admin(), "networks", net["id"], {"name": "third"},
                                    seen=net)
    stale = app.statements
    assert updated["name"] == "third"
    [original] = app.originals
    assert original["name"] == "second"
    assert original["revision_number"] == net["revision_number"] + 1
    app.statements = 0
    app.api.plugin.update(Context.admin(), "networks", net["id"], {"name": "fourth"},
                          seen=updated)
    assert stale == app.statements + 1  # the transaction's own read


def test_a_network_delete_reads_it_once_for_policy_and_locks_it(app: App) -> None:
    net = app.post("networks", {"name": "gone"})
    statements = app.reads_of("DELETE", f"/v2.0/networks/{net['id']}")
    assert _by_id(statements, "networks") == 2
    assert app.client.simulate_get(f"/v2.0/networks/{net['id']}").status_code == 404


def _subnet(app: App, cidr: str) -> dict[str, Any]:
    net = app.post("networks", {"name": "s"})
    return app.post("subnets", {"network_id": net["id"], "ip_version": 4, "cidr": cidr,
                                "dns_nameservers": ["192.0.2.53"], "tags": ["t"]})


def test_a_subnet_update_reads_it_once_fewer(app: App) -> None:
    """For policy, locked, the handler's checks, the read-back: the
    transaction's read of the original is the request's."""
    subnet = _subnet(app, "10.20.0.0/24")
    statements = app.reads_of("PUT", f"/v2.0/subnets/{subnet['id']}",
                              {"subnet": {"name": "renamed"}})
    assert _by_id(statements, "subnets") == 4
    shown = app.client.simulate_get(f"/v2.0/subnets/{subnet['id']}").json["subnet"]
    assert {**subnet, "name": "renamed", "revision_number": subnet["revision_number"] + 1,
            "updated_at": shown["updated_at"]} == shown


def test_a_subnet_delete_reads_it_once_for_policy_and_locks_it(app: App) -> None:
    subnet = _subnet(app, "10.21.0.0/24")
    statements = app.reads_of("DELETE", f"/v2.0/subnets/{subnet['id']}")
    assert _by_id(statements, "subnets") == 2
    assert app.client.simulate_get(f"/v2.0/subnets/{subnet['id']}").status_code == 404


def test_a_subnet_on_a_segment_is_read_again(app: App) -> None:
    """Its peer routes change without its revision (as upstream's)."""
    subnets = app.api.plugin.handlers["subnets"]
    assert subnets.follows_revision({"segment_id": None})
    assert not subnets.follows_revision({"segment_id": "a-segment"})


"""A worker builds few long lists at once (``neutrino/api/long_lists.py``):
eight clients listing a whole collection together each held a page of
rows and dicts, and the allocator kept their high-water mark (issue 37).
Filtered lists and short pages are not held back."""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from neutrino.api.long_lists import AT_ONCE
from tests.inprocess import CountingApp

CLIENTS = 6
WAIT = 60.0  # seconds before a stuck test gives up (never reached when it passes)


class Inside:
    """The networks plugin's ``list`` held open: how many requests are in
    it at once, until ``release``."""

    def __init__(self, app: CountingApp) -> None:
        plugin = app.api.plugin_for("networks")
        listing = plugin.list
        self.cond = threading.Condition()
        self.now = self.most = self.done = 0
        self.released = threading.Event()

        def held(*args: Any, **kwargs: Any) -> Any:
            with self.cond:
                self.now += 1
                self.most = max(self.most, self.now)
                self.cond.notify_all()
            self.released.wait(WAIT)
            try:
                return listing(*args, **kwargs)
            finally:
                with self.cond:
                    self.now -= 1
                    self.done += 1
                    self.cond.notify_all()
        plugin.list = held

    def wait_for(self, predicate: Any) -> None:
        with self.cond:
            assert self.cond.wait_for(predicate, WAIT)


def _clients(app: CountingApp, path: str) -> list[threading.Thread]:
    codes: list[int] = []

    def get() -> None:
        codes.append(app.client.simulate_get(path).status_code)
    threads = [threading.Thread(target=get, daemon=True) for _ in range(CLIENTS)]
    for t in threads:
        t.start()
    return threads


@pytest.fixture()
def app(tmp_path: Path) -> CountingApp:
    app = CountingApp(tmp_path)
    assert app.client.simulate_post("/v2.0/networks", json={"network": {"name": "n"}}).status_code == 201
    return app


def test_few_whole_collection_lists_are_built_at_once(app: CountingApp) -> None:
    inside = Inside(app)
    threads = _clients(app, "/v2.0/networks")
    # (the others wait at the gate, counted there, before the list)
    gate = app.api.long_lists
    inside.wait_for(lambda: inside.now == AT_ONCE and gate.waited == CLIENTS - AT_ONCE)
    assert inside.most == AT_ONCE
    inside.released.set()
    inside.wait_for(lambda: inside.done == CLIENTS)
    for t in threads:
        t.join(WAIT)
    assert inside.most == AT_ONCE


@pytest.mark.parametrize("path", ["/v2.0/networks?name=n", "/v2.0/networks?limit=10"])
def test_filtered_lists_and_short_pages_are_not_held_back(app: CountingApp, path: str) -> None:
    inside = Inside(app)
    threads = _clients(app, path)
    inside.wait_for(lambda: inside.now == CLIENTS)
    inside.released.set()
    for t in threads:
        t.join(WAIT)
    assert inside.most == CLIENTS

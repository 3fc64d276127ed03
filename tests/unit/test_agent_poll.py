"""An agent's reconcile loop (``agents.base.poll``): a pass every interval,
and at once when something woke it; the interval stays the longest wait."""
from __future__ import annotations

import threading
from typing import Iterator

import pytest

from neutrino.agents.base import poll
from tests.waiting import wait_for

LONG = 3600.0  # an interval no test waits out: a second pass means a wake-up


class Loop:
    """``poll`` in a thread, counting passes; ``during`` runs inside a pass."""

    def __init__(self, wake: threading.Event | None) -> None:
        self.stop, self.wake = threading.Event(), wake
        self.passes = 0
        self.during: list[object] = []
        self.resyncs = 0
        self.thread = threading.Thread(target=poll, args=(
            self.stop, LONG, self.step, self.resync, wake), daemon=True)

    def step(self) -> None:
        self.passes += 1
        for action in list(self.during):
            self.during.remove(action)
            if isinstance(action, Exception):
                raise action
            action()  # type: ignore[operator]

    def resync(self) -> None:
        self.resyncs += 1


@pytest.fixture
def loop() -> Iterator[Loop]:
    running = Loop(threading.Event())
    running.thread.start()
    yield running
    running.stop.set()
    running.thread.join(5)
    assert not running.thread.is_alive()


def test_a_wake_up_starts_the_next_pass_at_once(loop: Loop) -> None:
    assert wait_for(lambda: loop.passes == 1, 5)
    loop.wake.set()  # type: ignore[union-attr]
    assert wait_for(lambda: loop.passes == 2, 5)


def test_news_that_came_during_a_pass_wakes_the_one_after_it(loop: Loop) -> None:
    assert wait_for(lambda: loop.passes == 1, 5)
    loop.during.append(loop.wake.set)  # type: ignore[union-attr]
    loop.wake.set()  # type: ignore[union-attr]
    assert wait_for(lambda: loop.passes == 3, 5)


def test_a_failed_pass_resyncs_and_a_wake_up_still_counts(loop: Loop) -> None:
    assert wait_for(lambda: loop.passes == 1, 5)
    loop.during.append(RuntimeError("switch away"))
    loop.wake.set()  # type: ignore[union-attr]
    assert wait_for(lambda: loop.resyncs == 1, 5)
    loop.wake.set()  # type: ignore[union-attr]
    assert wait_for(lambda: loop.passes == 3, 5)


@pytest.mark.parametrize("wake", [None, threading.Event()], ids=["no wake", "wake"])
def test_a_stop_ends_the_wait(wake: threading.Event | None) -> None:
    running = Loop(wake)
    running.thread.start()
    assert wait_for(lambda: running.passes == 1, 5)
    running.stop.set()
    running.thread.join(5)
    assert not running.thread.is_alive() and running.passes == 1

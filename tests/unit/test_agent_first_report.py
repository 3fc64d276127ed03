"""An agent's first answered state report (``Agent.first_reported``): once,
when the server first answers, not at a failed report nor at later ones."""
from __future__ import annotations

from typing import Any

from neutrino.agents.base import Agent
from neutrino.service import make_conf


class Answering:
    """The server's ``report_state``: fails while ``failing``, then answers."""

    def __init__(self, failing: int) -> None:
        self.failing = failing

    def prepare(self, **kwargs: Any) -> "Answering":
        return self

    def call(self, context: Any, method: str, **kwargs: Any) -> str:
        if self.failing:
            self.failing -= 1
            raise TimeoutError("no answer")
        return "alive"


class Counting(Agent):
    agent_type, binary, topic = "Test agent", "test-agent", "test"

    def __init__(self, server: Answering) -> None:
        super().__init__(make_conf([]), host="h1")
        self._client = server
        self.firsts = 0

    def configurations(self) -> dict[str, Any]:
        return {}

    def first_reported(self) -> None:
        self.firsts += 1


def test_the_first_answered_report_is_told_once() -> None:
    agent = Counting(Answering(failing=1))
    assert agent.report_state(timeout=1) is None  # no answer: not yet
    assert agent.firsts == 0 and agent.state()["start_flag"] is True
    assert agent.report_state(timeout=1) == "alive"
    assert agent.report_state() == "alive"
    assert agent.firsts == 1 and agent.state()["start_flag"] is False

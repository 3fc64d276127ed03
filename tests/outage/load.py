"""Requests that keep coming while something the server needs is away.

A few threads create, show, list and delete networks in a loop; every
answer is kept with the phase of the test it was sent in, for the test to
say which answers each phase may have.
"""
from __future__ import annotations

import json
import threading
import uuid
from dataclasses import dataclass, field
from typing import Any

import requests

THREADS = 4
NEUTRON_ERROR_KEYS = {"type", "message", "detail"}


@dataclass
class Answer:
    phase: str            # when the request was sent
    method: str
    path: str
    status: int           # -1: no answer at all (the connection failed)
    text: str
    answered_in: str = ""  # the phase when its answer came

    def neutron_error(self) -> dict[str, Any] | None:
        """The ``NeutronError`` of the body, when the body is exactly one."""
        try:
            body = json.loads(self.text)
        except ValueError:
            return None
        error = body.get("NeutronError") if isinstance(body, dict) else None
        if not isinstance(error, dict) or set(error) != NEUTRON_ERROR_KEYS:
            return None
        return error


@dataclass
class Load:
    url: str
    phase: str = "before"
    answers: list[Answer] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _threads: list[threading.Thread] = field(default_factory=list)

    def start(self) -> "Load":
        for n in range(THREADS):
            thread = threading.Thread(target=self._run, args=(n,), daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def finish(self) -> list[Answer]:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=120)
        assert not any(t.is_alive() for t in self._threads), "a client hangs"
        return self.answers

    def count(self, phase: str, ok: bool | None = None) -> int:
        with self._lock:
            return sum(1 for a in self.answers if a.phase == phase
                       and (ok is None or (a.status < 300) == ok))

    def _send(self, session: requests.Session, method: str, path: str,
              body: Any = None) -> Answer:
        phase = self.phase  # the phase the request was sent in
        try:
            resp = session.request(method, self.url + path, json=body, timeout=60)
            answer = Answer(phase, method, path, resp.status_code, resp.text)
        except requests.RequestException as exc:
            answer = Answer(phase, method, path, -1, repr(exc))
        answer.answered_in = self.phase
        with self._lock:
            self.answers.append(answer)
        return answer

    def _run(self, n: int) -> None:
        session = requests.Session()
        session.headers.update({"X-Project-Id": f"project{n}", "X-User-Id": f"user{n}",
                                "X-Roles": "member"})
        while not self._stop.is_set():
            made = self._send(session, "POST", "/v2.0/networks",
                              {"network": {"name": f"n-{uuid.uuid4().hex[:8]}"}})
            self._send(session, "GET", "/v2.0/networks?limit=5")
            if made.status == 201:
                net_id = json.loads(made.text)["network"]["id"]
                self._send(session, "GET", f"/v2.0/networks/{net_id}")
                self._send(session, "DELETE", f"/v2.0/networks/{net_id}")
            if made.status < 0 or made.status == 503:
                self._stop.wait(0.05)  # a client backs off when refused

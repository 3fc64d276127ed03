"""``/healthcheck``, as oslo.middleware's healthcheck answers it behind
upstream's api-paste: ``OK`` (200, or 204 to HEAD) while everything the
server needs works, else 503 naming what is down. Anyone may ask; an admin
asking for JSON gets each failure's details too.

Each probe answers for one thing the API depends on; a slow one is asked
at most once per ``[healthcheck] cache_time`` by each worker, so load
balancers polling often do not load the database or the bus.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Callable

import falcon

from neutrino.fresh import Fresh

# A probe answers None when what it checks works, else why it does not.
Check = Callable[[], "str | None"]


@dataclass
class Probe:
    """One dependency: the reason given when it is down, and its check."""
    reason: str
    check: Check
    cache_time: float = 0.0
    _fresh: Fresh[str | None] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._fresh = Fresh(self._answer, self.cache_time)

    def _answer(self) -> str | None:
        try:
            return self.check()
        except Exception as exc:  # noqa: BLE001 - a failing probe is a finding
            return f"{type(exc).__name__}: {exc}"

    def failure(self) -> str | None:
        """The check's answer, reused while it is fresh; one thread asks at a time."""
        return self._fresh.get()


def disabled_by(path: str) -> Check:
    """oslo.middleware's ``disable_by_file`` backend: down while ``path`` exists."""
    def check() -> str | None:
        return f"{path} exists" if os.path.exists(path) else None
    return check


class Healthcheck:
    def __init__(self, probes: list[Probe]) -> None:
        self.probes = probes

    def _failures(self) -> list[tuple[Probe, str]]:
        found = [(probe, probe.failure()) for probe in self.probes]
        return [(probe, detail) for probe, detail in found if detail is not None]

    def on_head(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.status = falcon.HTTP_503 if self._failures() else falcon.HTTP_204
        resp.content_type = falcon.MEDIA_TEXT

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        failures = self._failures()
        resp.status = falcon.HTTP_503 if failures else falcon.HTTP_200
        reasons = [probe.reason for probe, _ in failures] or ["OK"]
        if not _wants_json(req):
            resp.content_type = falcon.MEDIA_TEXT
            resp.text = "\n".join(reasons)
            return
        resp.content_type = falcon.MEDIA_JSON
        ctx = getattr(req.context, "neutron", None)
        if ctx is None or not ctx.is_admin:
            resp.text = json.dumps({"detailed": False, "reasons": reasons})
            return
        resp.text = json.dumps({"detailed": True, "reasons": [
            {"reason": probe.reason, "details": detail} for probe, detail in failures]
            or [{"reason": "OK", "details": ""}]})


def _wants_json(req: falcon.Request) -> bool:
    """JSON when asked for by name and preferred to text; text otherwise."""
    return (falcon.MEDIA_JSON in (req.get_header("Accept") or "")
            and req.client_prefers([falcon.MEDIA_TEXT, falcon.MEDIA_JSON]) == falcon.MEDIA_JSON)

"""Drives schemathesis over every operation of the OpenAPI document.

Cases are drawn once per operation (positive and negative data) and sent
to each server twice: as drawn and, after the first pass created objects,
with the ids of objects that exist in the path, so that updates, deletes and actions reach
the plugins instead of stopping at "not found". Every answer is checked
here and recorded, never raised: one run reports all the failures it saw.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any, Iterable

import requests
import schemathesis
from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from schemathesis import GenerationMode

# Methods in the order the second pass runs them: deletes last, so the
# objects the other operations use are still there.
_ORDER = {"GET": 0, "POST": 1, "PUT": 2, "DELETE": 3}


@dataclass
class Report:
    requests: int = 0
    operations: set[str] = field(default_factory=set)
    server_errors: list[str] = field(default_factory=list)
    unshaped_errors: list[str] = field(default_factory=list)
    not_generated: list[str] = field(default_factory=list)
    stopped_early: bool = False

    def summary(self) -> str:
        return (f"{self.requests} requests, {len(self.operations)} operations, "
                f"{len(self.server_errors)} 5xx, {len(self.unshaped_errors)} errors not "
                f"Neutron-shaped, {len(self.not_generated)} operations not generated"
                + (", stopped at the time budget" if self.stopped_early else ""))


def neutron_shaped(body: Any) -> bool:
    error = body.get("NeutronError") if isinstance(body, dict) else None
    return (isinstance(error, dict) and
            all(isinstance(error.get(k), str) for k in ("type", "message", "detail")))


def _modes(op: Any) -> tuple[GenerationMode, ...]:
    """Negative data needs something typed to break: a body, a query or a
    header; a path of plain strings has none (any text is a string)."""
    typed = op.body or op.query or op.headers
    return (GenerationMode.POSITIVE, GenerationMode.NEGATIVE) if typed else \
        (GenerationMode.POSITIVE,)


@dataclass
class Generated:
    """The cases drawn for one operation, replayed on every server."""

    label: str
    path: str
    method: str
    cases: list[Any]


def generate(document: dict[str, Any], examples: int, derandomize: bool) -> list[Generated]:
    """Cases for every operation, drawn once: drawing costs more than
    sending, and every backend and identity gets the same requests."""
    schema = schemathesis.openapi.from_dict(document)
    out = []
    for result in schema.get_all_operations():
        # An operation schemathesis cannot read fails the run: the document is ours.
        op = result.ok()  # type: ignore[union-attr]
        cases: list[Any] = []
        for mode in _modes(op):
            cases += _draw(op, mode, examples, derandomize)
        out.append(Generated(f"{op.method.upper()} {op.path}", op.path, op.method.upper(),
                             cases))
    return out


def _draw(op: Any, mode: GenerationMode, examples: int, derandomize: bool) -> list[Any]:
    drawn: list[Any] = []

    @settings(max_examples=examples, deadline=None, database=None, derandomize=derandomize,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck),
              verbosity=Verbosity.quiet)
    @given(case=op.as_strategy(mode))
    def collect(case: Any) -> None:
        drawn.append(case)
    try:
        collect()
    except Exception:  # Hypothesis gave up on this schema; what it drew still counts
        pass
    return drawn


class Fuzzer:
    def __init__(self, url: str, headers: dict[str, str], deadline: float) -> None:
        self.url, self.headers, self.deadline = url, headers, deadline
        self.session = requests.Session()
        self.report = Report()

    def run(self, generated: list[Generated]) -> Report:
        for item in generated:
            if not item.cases:
                self.report.not_generated.append(item.label)
        self._pass(generated, lambda item: None)
        with_ids = [g for g in generated if "{" in g.path]
        self._pass(sorted(with_ids, key=lambda g: _ORDER.get(g.method, 9)), self._existing_ids)
        return self.report

    def _pass(self, generated: Iterable[Generated], ids_for: Any) -> None:
        for item in generated:
            if time.monotonic() > self.deadline:
                self.report.stopped_early = True
                return
            fixed = ids_for(item)
            for case in item.cases:
                self._call(item.label, case, fixed)

    def _call(self, label: str, case: Any, fixed: dict[str, str] | None) -> None:
        drawn = case.path_parameters
        if fixed:
            case.path_parameters = {**(drawn or {}), **fixed}
        try:
            self._send(label, case)
        finally:
            case.path_parameters = drawn

    def _send(self, label: str, case: Any) -> None:
        try:
            response = case.call(base_url=self.url, session=self.session,
                                 headers=self.headers, timeout=60)
        except Exception as exc:  # a request the client library refuses to send
            if "serializ" in str(exc).lower() or "header" in str(exc).lower():
                return
            self.report.server_errors.append(f"{label}: no answer: {exc!r}\n"
                                             f"  {case.as_curl_command(self.headers)}")
            return
        self.report.requests += 1
        self.report.operations.add(label)
        status = response.status_code
        if status < 400:
            return
        try:
            body = response.json()
        except ValueError:
            body = None
        where = f"{label} -> {status} {response.content[:300]!r}\n" \
                f"  {case.as_curl_command(self.headers)[:1500]}"
        # 501 is a deliberate answer (upstream's NotImplementedError for an
        # update its plugin does not implement), not a crash.
        if status >= 500 and status != 501:
            self.report.server_errors.append(where)
        elif not neutron_shaped(body):
            self.report.unshaped_errors.append(where)

    # -- the second pass: ids of objects that exist -------------------------

    def _existing_ids(self, item: Generated) -> dict[str, str] | None:
        """Path parameters naming existing objects, found by listing each
        collection on the path; None when a collection has nothing yet."""
        found: dict[str, str] = {}
        path = item.path
        for match in re.finditer(r"\{([^}]+)\}", path):
            name = match.group(1)
            if name == "tag":
                continue
            prefix = path[:match.start()].rstrip("/")
            for key, known in found.items():
                prefix = prefix.replace(f"{{{key}}}", known)
            first = self._first_id(prefix, name)
            if first is None:
                return None
            found[name] = first
        return found or None

    def _first_id(self, collection: str, name: str) -> str | None:
        try:
            body = self.session.get(self.url + collection, headers=self.headers,
                                    timeout=60).json()
        except (requests.RequestException, ValueError):
            return None
        items = next((x for x in body.values() if isinstance(x, list)), None) \
            if isinstance(body, dict) else None
        for item in items or ():
            if not isinstance(item, dict):
                continue
            for key in (name, "id", "network_id", "alias", "name", "project_id"):
                if isinstance(item.get(key), str) and item[key]:
                    return item[key]
        return None

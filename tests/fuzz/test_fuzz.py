"""Fuzzing every operation of the OpenAPI document against a real server.

On each backend, in a fresh database, a server is fuzzed by schemathesis as
an admin and as a member of another project: no answer may be a 5xx, every
error must be a ``NeutronError``, and afterwards nothing may be
half-created (``consistency``). ``make test`` runs a short, seeded pass;
``make fuzz`` a long random one (``NEUTRINO_FUZZ_EXAMPLES``,
``NEUTRINO_FUZZ_SECONDS``, ``NEUTRINO_FUZZ_RANDOM``).
"""
from __future__ import annotations

import functools
import json
import os
import time
import uuid
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import quote

import pytest
import requests

from neutrino.api.openapi import PATH
from tests.conftest import SESSION_EXTRA, Server, migrated_database
from tests.fuzz import consistency
from tests.fuzz.fuzzer import Fuzzer, Generated, Report, generate

EXAMPLES = int(os.environ.get("NEUTRINO_FUZZ_EXAMPLES", "2"))
# Per backend and identity: the bound that keeps ``make test`` short.
SECONDS = float(os.environ.get("NEUTRINO_FUZZ_SECONDS", "60"))
RANDOM = os.environ.get("NEUTRINO_FUZZ_RANDOM", "") not in ("", "0")

# The all-in-one's plugins, with segmentation ranges so networks allocate ids.
FUZZ_EXTRA = (SESSION_EXTRA.replace("[ml2]\n", "[ml2]\ntenant_network_types = vxlan\n")
              + "[ml2_type_vlan]\nnetwork_vlan_ranges = physnet1:100:120\n"
              + "[ml2_type_vxlan]\nvni_ranges = 1:200\n")


@pytest.fixture(params=["sqlite", "postgresql", "mariadb"])
def fuzzed(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Server, str]]:
    with migrated_database(request.param, tmp_path) as url:
        home = tmp_path / "server"
        home.mkdir()
        srv = Server(home, db_url=url, extra=FUZZ_EXTRA).start()
        try:
            yield srv, url
        finally:
            srv.stop()


def _identities() -> dict[str, dict[str, str]]:
    project = uuid.uuid4().hex
    return {"admin": {},
            "member": {"X-Project-Id": project, "X-User-Id": f"user-{project}",
                       "X-Roles": "member"}}


def test_no_server_error_and_nothing_half_created(fuzzed: tuple[Server, str]) -> None:
    srv, url = fuzzed
    document = requests.get(srv.url + PATH, timeout=60).json()
    generated = _generated(json.dumps(document, sort_keys=True))
    reports: dict[str, Report] = {}
    for who, headers in _identities().items():
        reports[who] = Fuzzer(srv.url, headers, time.monotonic() + SECONDS).run(generated)
    problems = [f"{who}: {line}" for who, report in reports.items()
                for line in report.server_errors + report.unshaped_errors]
    problems += consistency.orphans(url)
    problems += consistency.quota_mismatches(url, lambda p: _details(srv.url, p))
    summary = "; ".join(f"{who}: {r.summary()}" for who, r in reports.items())
    print(summary)
    assert all(r.requests for r in reports.values()), summary
    assert not problems, f"{summary}\n" + "\n".join(problems)


@functools.cache
def _generated(document: str) -> list[Generated]:
    """Drawn once for every backend (the document is the same)."""
    return generate(json.loads(document), EXAMPLES, derandomize=not RANDOM)


def _details(base: str, project: str) -> dict[str, Any]:
    # Fuzzed project ids hold any character: quoted whole, or "a?b" reads "a".
    body = requests.get(f"{base}/v2.0/quotas/{quote(project, safe='')}/details",
                        timeout=60).json()
    return body.get("quota", {})

"""The README's noauth block, run as written against a server of its own
(only its URL replaced): the CLI without Keystone, the Networking API's
extensions with ``--network``, and quotas through the API by project id."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from tests.conftest import ROOT, Client, Server


def noauth_block() -> str:
    readme = (ROOT / "README.md").read_text()
    found = re.search(r"<!-- noauth[^>]*-->\s*```sh\n(.*?)```", readme, re.S)
    assert found, "README has no noauth block"
    return found.group(1)


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = Server(tmp_path_factory.mktemp("noauth"),
                    extra="service_plugins = router\n").start()
    yield server
    server.stop()


def test_the_readme_noauth_block_lists_extensions_and_sets_quotas(srv: Server) -> None:
    script = noauth_block()
    assert "http://127.0.0.1:9696" in script
    script = script.replace("http://127.0.0.1:9696", srv.url)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-e", "-c", script], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=300)
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])
    out = done.stdout
    aliases = re.findall(r"^[a-z][a-z0-9_-]+$", out, re.M)
    assert {"quotas", "router", "security-group"} <= set(aliases), out
    assert len(aliases) == len(set(aliases)), "each extension once"
    answers = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    shown, updated, details, listed = answers[:4]
    assert shown["quota"]["network"] == 100
    assert updated["quota"]["network"] == 20 and updated["quota"]["port"] == 100
    assert details["quota"]["network"] == {"limit": 20, "used": 0, "reserved": 0}
    assert [q["project_id"] for q in listed["quotas"]] == ["p1"]
    after = Client(srv.url).get("/v2.0/quotas/p1")[1]
    assert after["quota"]["network"] == 100  # the DELETE put p1 back on the defaults

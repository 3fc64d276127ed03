"""``docs/operators-guide.md``, "A single host with Keystone", run block by
block as one terminal session would: a Keystone of its own (from PyPI, as
``conftest`` builds it), the guide's ``openstack`` commands against it, its
``neutron.conf`` written as shown, ``neutrino db upgrade`` and ``neutrino
serve`` as shown, then the member's and the admin's commands through the
catalog.

Only what must differ on a test machine is replaced: Keystone's and
neutrino's ports, the configuration and state paths, and the RabbitMQ
virtual host.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest
import requests

from tests.conftest import ROOT, free_port
from tests.keystone.conftest import Keystone, ensure_keystone_venv
from tests.rpc.bus import bus
from tests.rpc.conftest import fresh_vhost

GUIDE = ROOT / "docs" / "operators-guide.md"
BLOCK = re.compile(r"<!-- guide: (\S+)([^>]*)-->\s*```(\w+)\n(.*?)```", re.S)


def guide_blocks() -> dict[str, tuple[str, str]]:
    """Each marked block of the guide: name -> (what the marker adds, text)."""
    return {name: (extra.strip(), text) for name, extra, _, text in BLOCK.findall(
        GUIDE.read_text())}


class Session:
    """One shell session through the guide: what a block exports, the next sees."""

    def __init__(self, tmp: Path, replacements: list[tuple[str, str]]) -> None:
        self.tmp = tmp
        self.exported = tmp / "exported.sh"
        self.exported.write_text("")
        self.replacements = replacements
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
        self.env["PATH"] = f"{Path(sys.executable).parent}:{self.env['PATH']}"

    def text(self, block: str) -> str:
        for old, new in self.replacements:
            block = block.replace(old, new)
        return block

    def run(self, block: str) -> str:
        script = f"source {self.exported}\n{self.text(block)}\nexport -p > {self.exported}\n"
        done = subprocess.run(["bash", "-e", "-c", script], capture_output=True, text=True,
                              cwd=self.tmp, env=self.env, timeout=600)
        assert done.returncode == 0, (self.text(block), done.stdout[-3000:],
                                      done.stderr[-3000:])
        return done.stdout


@pytest.fixture(scope="module")
def keystone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Keystone]:
    """A Keystone of the guide's own: its commands create users and services."""
    ensure_keystone_venv()
    ks = Keystone(tmp_path_factory.mktemp("guide-keystone")).start()
    try:
        ks.bootstrap_catalog()
        yield ks
    finally:
        ks.stop()


def test_a_single_host_with_keystone_as_the_guide_says(
        keystone: Keystone, tmp_path: Path) -> None:
    blocks = guide_blocks()
    port = free_port()
    conf_path = blocks["keystone-conf"][0]
    assert conf_path == "/etc/neutron/neutron.conf"
    with fresh_vhost() as vhost:
        session = Session(tmp_path, [
            ("http://127.0.0.1:5000", keystone.url),
            ("127.0.0.1:9696", f"127.0.0.1:{port}"),
            ("bind_port = 9696", f"bind_port = {port}"),
            (conf_path, str(tmp_path / "neutron.conf")),
            ("/var/lib/neutron", str(tmp_path / "var")),
            ("rabbit://guest:guest@127.0.0.1:5672/", bus(vhost)),
        ])
        session.run(blocks["keystone-register"][1])
        (tmp_path / "neutron.conf").write_text(session.text(blocks["keystone-conf"][1]))
        upgraded = session.run(blocks["keystone-upgrade"][1])
        assert re.search(r"database at \d{4}_", upgraded), upgraded
        serve = shlex.split(session.text(blocks["keystone-serve"][1]).strip())
        assert serve[0] == "neutrino"
        log = tmp_path / "server.log"
        with open(log, "ab") as out:
            server = subprocess.Popen(serve, stdout=out, stderr=out, cwd=tmp_path,
                                      env=session.env)
        try:
            _wait_up(f"http://127.0.0.1:{port}/", server, log)
            used = session.run(blocks["keystone-use"][1])
            lines = used.splitlines()
            assert "networks 5" in lines, used  # the demo project's network quota
            assert "demo-net" in lines and "quotas" in lines, used
        finally:
            server.terminate()
            assert server.wait(60) == 0, log.read_text()[-3000:]


def _wait_up(url: str, server: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert server.poll() is None, log.read_text()[-3000:]
        try:
            if requests.get(url, timeout=1).ok:
                return
        except requests.RequestException:
            pass
        time.sleep(0.2)
    raise AssertionError(f"neutrino did not answer: {log.read_text()[-3000:]}")

"""Running ``docs/operators-guide.md``'s blocks as a terminal session would.

A block marked ``<!-- guide: NAME extra -->`` is what a test runs, after
replacing only what must differ on a test machine (ports, paths,
credentials, the RabbitMQ virtual host). Every section's test reads the
blocks from the page itself, so the page cannot drift from what is proven.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import requests

from tests.conftest import ROOT

GUIDE = ROOT / "docs" / "operators-guide.md"
BLOCK = re.compile(r"<!-- guide: (\S+)([^>]*)-->\s*```(\w+)\n(.*?)```", re.S)


def guide_blocks() -> dict[str, tuple[str, str]]:
    """Each marked block of the guide: name -> (what the marker adds, text)."""
    return {name: (extra.strip(), text) for name, extra, _, text in BLOCK.findall(
        GUIDE.read_text())}


class Session:
    """One shell session through the guide: what a block exports, the next sees.
    With ``netns``, the shell runs in that network namespace (another host)."""

    def __init__(self, tmp: Path, replacements: list[tuple[str, str]],
                 netns: str | None = None) -> None:
        self.tmp = tmp
        self.netns = netns
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
        shell = ["bash", "-e", "-c", script]
        if self.netns:
            shell = ["ip", "netns", "exec", self.netns, *shell]
        done = subprocess.run(shell, capture_output=True, text=True,
                              cwd=self.tmp, env=self.env, timeout=600)
        assert done.returncode == 0, (self.text(block), done.stdout[-3000:],
                                      done.stderr[-3000:])
        return done.stdout


def wait_up(url: str, server: subprocess.Popen[bytes], log: Path) -> None:
    """Until ``url`` answers; fails with the log's tail if the server exits first."""
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

"""ruff and mypy as tests, so that `make test` (and CI, which runs it) fails
on a lint or type error. Both read their configuration from pyproject.toml:
what is linted, which rules, which packages are typed and how strictly."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The tools installed beside the interpreter running the suite (the test
# extra), not whatever another PATH entry holds.
BIN = Path(sys.executable).parent


def run(tool: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / tool), *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)


def test_ruff_finds_nothing() -> None:
    done = run("ruff", "check", "--no-cache", "--output-format", "concise", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_typed_packages_pass_mypy() -> None:
    done = run("mypy")
    assert done.returncode == 0, done.stdout + done.stderr

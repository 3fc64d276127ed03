"""The package layers hold: ``lint-imports`` checks the contracts of
``[tool.importlinter]`` in pyproject.toml (server layers, agents off the
server's packages, the server's packages off the agents), so an import the
wrong way fails the suite."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_no_module_imports_a_layer_above_it() -> None:
    lint_imports = Path(sys.executable).with_name("lint-imports")
    # This tree's neutrino, whichever one the virtualenv has installed.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    out = subprocess.run([str(lint_imports), "--no-cache"], capture_output=True, text=True,
                         timeout=300, cwd=ROOT, env=env)
    assert out.returncode == 0, out.stdout + out.stderr

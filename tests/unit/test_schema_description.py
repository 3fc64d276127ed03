"""``neutrino db current`` and the server's refusal name an empty database so."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from neutrino.db import migrate
from tests.conftest import ROOT


def test_an_empty_database_is_called_empty_not_none(tmp_path: Path) -> None:
    conf = tmp_path / "n.conf"
    conf.write_text(f"[database]\nconnection = sqlite:///{tmp_path / 'n.sqlite'}\n")
    done = subprocess.run([sys.executable, "-m", "neutrino.cmd.main", "db", "current",
                           "--config-file", str(conf)], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "empty (no neutrino schema)"
    assert "None" not in done.stdout + done.stderr


def test_a_migrated_database_is_called_by_its_revision() -> None:
    assert migrate.describe("0036_local_ips") == "0036_local_ips"

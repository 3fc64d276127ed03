"""``neutrino agent dhcp``: the command exists and refuses a bad configuration
with one clear line."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "neutrino.cmd.main", *args],
                          capture_output=True, text=True, timeout=60)


def test_an_unknown_interface_driver_stops_the_dhcp_agent_naming_the_option(
        tmp_path: Path) -> None:
    conf = tmp_path / "dhcp_agent.ini"
    conf.write_text(f"[DEFAULT]\nstate_path = {tmp_path}\ninterface_driver = nosuch\n")
    done = run("agent", "dhcp", "--config-file", str(conf))
    assert done.returncode == 2
    assert "configuration error: interface_driver 'nosuch'" in done.stderr


def test_agent_kinds_are_checked() -> None:
    done = run("agent", "frobnicate")
    assert done.returncode == 2 and "invalid choice: 'frobnicate'" in done.stderr

"""A real Placement for the placement report tests.

Placement comes from PyPI into its own virtualenv, ``.venv-placement`` at
the top of the work tree (its pins are not ours), made with the machine's
``python -m venv`` and pip on first use and reused while
``.venv-placement/.neutrino-stamp`` names the same version; a failed
install fails the tests, never skips them. Each run serves Placement with
gunicorn from that venv (one worker: SQLite) on a free loopback port, with
a SQLite database of its own made at start-up (``sync_on_startup``) and
``auth_strategy = noauth2``: a request's ``X-Auth-Token`` names its user,
``admin`` is an admin. Only the gunicorn process this fixture started is
stopped, by its PID.

Build by hand: ``.venv/bin/python tests/placement/conftest.py``.
"""
from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pytest
import requests

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # when run as a script
    sys.path.insert(0, str(ROOT))

from tests.conftest import free_port  # noqa: E402
from tests.keystone.conftest import _base_python, _env  # noqa: E402

PLACEMENT_VERSION = os.environ.get("NEUTRINO_TEST_PLACEMENT_VERSION", "16.0.0")
VENV = Path(os.environ.get("NEUTRINO_TEST_PLACEMENT_VENV", ROOT / ".venv-placement"))
STAMP = VENV / ".neutrino-stamp"
LOCK = VENV.parent / (VENV.name + ".lock")
EXTRA_PACKAGES = ("gunicorn==27.0.1",)
INSTALL_TIMEOUT = 1800
MICROVERSION = "placement 1.37"


class PlacementSetupError(AssertionError):
    """Placement could not be installed or started: the tests fail."""


def _stamp_text() -> str:
    return f"openstack-placement=={PLACEMENT_VERSION} {' '.join(EXTRA_PACKAGES)}\n"


def _run(cmd: list[str], what: str) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=INSTALL_TIMEOUT,
                          env=_env())
    if proc.returncode != 0:
        raise PlacementSetupError(f"{what} failed (exit {proc.returncode}): {' '.join(cmd)}\n"
                                  f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")


def ensure_placement_venv() -> None:
    """Build (or rebuild) the venv unless current; a file lock makes
    concurrent runs wait for one build."""
    LOCK.parent.mkdir(parents=True, exist_ok=True)
    with open(LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if STAMP.is_file() and STAMP.read_text() == _stamp_text() \
                and (VENV / "bin" / "gunicorn").exists():
            return
        _run([_base_python(), "-m", "venv", "--clear", str(VENV)], "creating the Placement venv")
        pip = [str(VENV / "bin" / "python"), "-m", "pip", "install", "--quiet"]
        _run([*pip, "--upgrade", "pip"], "upgrading pip in the Placement venv")
        _run([*pip, f"openstack-placement=={PLACEMENT_VERSION}", *EXTRA_PACKAGES],
             f"installing openstack-placement=={PLACEMENT_VERSION} from PyPI")
        STAMP.write_text(_stamp_text())


class Placement:
    """A running Placement; ``call`` talks to it as its admin."""

    def __init__(self, state: Path) -> None:
        self.state = state
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = state / "gunicorn.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.session = requests.Session()
        self.session.headers.update({"X-Auth-Token": "admin",
                                     "OpenStack-API-Version": MICROVERSION})

    def start(self) -> "Placement":
        (self.state / "placement.conf").write_text(
            "[DEFAULT]\ndebug = False\n[api]\nauth_strategy = noauth2\n"
            f"[placement_database]\nconnection = sqlite:///{self.state / 'placement.db'}\n"
            "sync_on_startup = True\n")
        env = {**_env(), "OS_PLACEMENT_CONFIG_DIR": str(self.state)}
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [str(VENV / "bin" / "gunicorn"), "--bind", f"127.0.0.1:{self.port}",
                 "--workers", "1", "placement.wsgi.api:application"],
                stdout=log, stderr=log, cwd=self.state, env=env)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise PlacementSetupError(f"placement exited: {self.log.read_text()[-3000:]}")
            try:
                if self.session.get(self.url + "/resource_providers", timeout=2).ok:
                    return self
            except requests.RequestException:
                pass
            time.sleep(0.2)
        self.stop()
        raise PlacementSetupError(f"placement did not start: {self.log.read_text()[-3000:]}")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def call(self, method: str, path: str, body: Any = None) -> Any:
        resp = self.session.request(method, self.url + path, json=body, timeout=30)
        assert resp.status_code < 400, (method, path, resp.status_code, resp.text)
        return resp.json() if resp.content else None


@pytest.fixture(scope="module")
def placement(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Placement]:
    ensure_placement_venv()
    server = Placement(tmp_path_factory.mktemp("placement")).start()
    yield server
    server.stop()


if __name__ == "__main__":
    ensure_placement_venv()
    print(f"Placement venv ready: {VENV}")

"""A real OpenStack service from PyPI for the tests that talk to one
(Keystone, Barbican, Placement): its virtualenv and its gunicorn.

Each service comes into a virtualenv of its own at the top of the work tree
(its pins are not ours), made with the machine's ``python -m venv`` and pip.
The venv is built on first use and reused while its ``.neutrino-stamp``
names the packages it was built with; a file lock beside it makes concurrent
runs wait for one build. A failed install fails the tests; a service may ask
to be skipped instead when PyPI cannot be reached at all.

Each run serves the service with gunicorn from its venv, one sync worker
(the services' SQLite databases allow one writer) on a free loopback port;
only the gunicorn process a fixture started is stopped, by its PID.
"""
from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import requests

from tests.conftest import free_port, stop_process

INSTALL_TIMEOUT = 1800
GUNICORN = "gunicorn==27.0.1"


class ServiceSetupError(AssertionError):
    """A service could not be installed or started: the tests fail."""


class PypiUnreachable(Exception):
    """The install failed and PyPI does not answer: the tests are skipped."""


def clean_env() -> dict[str, str]:
    """Our environment, less what would put our venv's packages into theirs."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")
           and not k.startswith("OS_")}
    env["PYTHONWARNINGS"] = "ignore"
    return env


def base_python() -> str:
    """The machine's python, even when we run inside our own venv."""
    return getattr(sys, "_base_executable", None) or shutil.which("python3") or sys.executable


def run(cmd: list[str], what: str, error: type[AssertionError] = ServiceSetupError,
        timeout: float = INSTALL_TIMEOUT, **kw: Any) -> None:
    """Run a set-up command in the clean environment; ``error`` when it fails."""
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          env=clean_env(), **kw)
    if proc.returncode != 0:
        raise error(
            f"{what} failed (exit {proc.returncode}): {' '.join(cmd)}\n"
            f"--- stdout ---\n{proc.stdout[-4000:]}\n--- stderr ---\n{proc.stderr[-4000:]}")


@dataclass(frozen=True)
class PypiVenv:
    """A service's venv: ``packages`` (the service pinned first) at ``path``.

    ``upgrade``: what pip upgrades in the new venv before the install;
    ``skip_unreachable``: a failed install raises ``PypiUnreachable`` when the
    service's own package cannot even be downloaded; ``programs``: what the
    venv's ``bin`` must hold to be used.
    """

    path: Path
    packages: tuple[str, ...]
    error: type[AssertionError] = ServiceSetupError
    upgrade: tuple[str, ...] = ()
    skip_unreachable: bool = False
    programs: tuple[str, ...] = ("gunicorn",)

    @property
    def stamp(self) -> Path:
        return self.path / ".neutrino-stamp"

    @property
    def stamp_text(self) -> str:
        return " ".join(self.packages) + "\n"

    def bin(self, name: str) -> Path:
        return self.path / "bin" / name

    def current(self) -> bool:
        return (self.stamp.is_file() and self.stamp.read_text() == self.stamp_text
                and all(self.bin(name).exists() for name in self.programs))

    def ensure(self, then: Callable[[], None] | None = None) -> None:
        """Build (or rebuild) the venv unless current, then ``then`` (a
        service's own one-time set-up), both under the lock."""
        lock_path = self.path.parent / (self.path.name + ".lock")
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        with open(lock_path, "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not self.current():
                self._build()
            if then is not None:
                then()

    def _build(self) -> None:
        if self.path.exists():
            shutil.rmtree(self.path)
        name = self.packages[0]
        run([base_python(), "-m", "venv", str(self.path)], f"creating the venv of {name}",
            self.error)
        pip = [str(self.bin("python")), "-m", "pip"]
        if self.upgrade:
            run([*pip, "install", "--quiet", "--upgrade", *self.upgrade],
                f"upgrading {' '.join(self.upgrade)} in the venv of {name}", self.error)
        try:
            run([*pip, "install", "--quiet", *self.packages], f"installing {name} from PyPI",
                self.error)
        except AssertionError as exc:
            if self.skip_unreachable and subprocess.run(
                    [*pip, "download", "--no-deps", "--quiet", "-d", str(self.path / "probe"),
                     name], capture_output=True, timeout=300, env=clean_env()).returncode != 0:
                raise PypiUnreachable(f"{name} cannot be fetched from PyPI:\n{exc}") from exc
            raise
        self.stamp.write_text(self.stamp_text)


class Gunicorn:
    """A service's API served by gunicorn from its venv, one sync worker, on
    a free loopback port, its output in ``state/gunicorn.log``.

    ``service_log``: the service's own log in ``state``, shown with
    gunicorn's when it fails to start.
    """

    name = "service"
    service_log = ""

    def __init__(self, venv: PypiVenv, state: Path) -> None:
        self.venv, self.state = venv, state
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = state / "gunicorn.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def serve(self, app: str, env: dict[str, str], ready: Callable[[], bool],
              wait: float = 180) -> None:
        """Start gunicorn on ``app`` (``module:callable`` in ``state``) and
        wait until ``ready`` says the API answers."""
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [str(self.venv.bin("gunicorn")), "--bind", f"127.0.0.1:{self.port}",
                 "--workers", "1", "--worker-class", "sync",
                 # importing a service takes seconds on a busy machine
                 "--timeout", "300", "--graceful-timeout", "5",
                 "--no-control-socket", "--chdir", str(self.state),
                 "--error-logfile", "-", app],
                stdout=log, stderr=log, cwd=self.state, env={**clean_env(), **env})
        error = self.venv.error
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise error(f"{self.name} exited: {self.logs()}")
            if b"exited with code" in self.log.read_bytes():
                self.stop()
                raise error(f"{self.name}'s worker died: {self.logs()}")
            try:
                if ready():
                    return
            except requests.RequestException:
                pass
            time.sleep(0.2)
        self.stop()
        raise error(f"{self.name} did not answer on {self.url}: {self.logs()}")

    def logs(self) -> str:
        out = self.log.read_text(errors="replace")[-3000:]
        own = self.state / self.service_log if self.service_log else None
        if own is not None and own.exists():
            out += f"\n--- {self.service_log} ---\n" + own.read_text(errors="replace")[-3000:]
        return out

    def stop(self) -> None:
        stop_process(self.proc, 30)


def authtoken_section(keystone_url: str, username: str, password: str, project: str,
                      region: str) -> str:
    """A ``[keystone_authtoken]`` section: a service user's password credentials
    in the Default domain, for keystonemiddleware and neutrino alike."""
    return f"""
[keystone_authtoken]
www_authenticate_uri = {keystone_url}
auth_url = {keystone_url}
auth_type = password
username = {username}
password = {password}
project_name = {project}
user_domain_name = Default
project_domain_name = Default
region_name = {region}
"""

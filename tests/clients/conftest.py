"""Fixtures for driving a neutrino server with real OpenStack clients.

No Keystone: the ``server`` fixture runs with ``auth_strategy = noauth``, where
a caller without identity headers is admin.  Both clients are told to skip
authentication and to talk to the server directly:

* CLI: ``openstack --os-auth-type none --os-endpoint <server.url> ...``
* SDK: ``openstack.connection.Connection(auth_type="none", endpoint=url,
  network_endpoint_override=url)`` (without ``cloud=`` it reads neither
  ``clouds.yaml`` nor ``OS_*`` variables)

Importing the CLI costs seconds, so by default command lines go to one
long-lived subprocess (``osc_batch.py``) that runs each through
``openstackclient.shell.main`` -- the function behind the ``openstack``
console script -- with fresh output buffers.  ``NEUTRINO_CLI_FRESH=1`` runs
every command as its own ``python -m openstackclient.shell`` process instead,
and ``CLI.run_fresh`` always does.

The CLI runs in a subprocess with a scrubbed environment: no ``OS_*``
variables, ``HOME`` pointing at a temporary directory and
``OS_CLIENT_CONFIG_FILE`` pointing at an empty ``clouds.yaml`` so that no
user or system cloud configuration can leak in.
"""
from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest

OPENSTACK = [sys.executable, "-m", "openstackclient.shell"]
CLI_TIMEOUT = 120


class CLIError(AssertionError):
    pass


class CLI:
    """Runs ``openstack`` against one server."""

    def __init__(self, url: str, home: Path) -> None:
        self.url = url
        home.mkdir(parents=True, exist_ok=True)
        clouds = home / "clouds.yaml"
        clouds.write_text("clouds: {}\n")
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "OS_CLIENT_CONFIG_FILE": str(clouds),
            "LANG": "C.UTF-8",
        }
        self.base = ["--os-auth-type", "none", "--os-endpoint", url]
        self.fresh = os.environ.get("NEUTRINO_CLI_FRESH") == "1"
        self._proc: subprocess.Popen[str] | None = None

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Runs one command line; raises unless it exits 0 (when ``check``)."""
        argv = [*self.base, *args]
        if self.fresh:
            proc = self.run_fresh(*args)
        else:
            rc, out, err = self._batch(argv)
            proc = subprocess.CompletedProcess(argv, rc, out, err)
        if check and proc.returncode != 0:
            raise CLIError(f"openstack {' '.join(args)} exited {proc.returncode}:\n"
                           f"stdout: {proc.stdout}\nstderr: {proc.stderr}")
        return proc

    def run_fresh(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Runs one command line in a new ``python -m openstackclient.shell``."""
        return subprocess.run([*OPENSTACK, *self.base, *args], env=self.env,
                              capture_output=True, text=True, timeout=CLI_TIMEOUT)

    def _batch(self, argv: list[str]) -> tuple[int, str, str]:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(
                [sys.executable, str(Path(__file__).with_name("osc_batch.py"))],
                env=self.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, text=True)
            ready = self._proc.stdout.readline()
            if not ready:
                raise CLIError("the openstack CLI driver did not start")
        self._proc.stdin.write(json.dumps({"argv": argv}) + "\n")
        self._proc.stdin.flush()
        line = self._proc.stdout.readline()
        if not line:
            raise CLIError(f"the openstack CLI driver died running {argv}")
        reply = json.loads(line)
        return reply["rc"], reply["stdout"], reply["stderr"]

    def close(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()

    def json(self, *args: str) -> Any:
        """Runs a command with ``-f json`` and returns the parsed output."""
        out = self.run(*args, "-f", "json").stdout
        try:
            return json.loads(out)
        except ValueError as exc:  # pragma: no cover - diagnostic
            raise CLIError(f"openstack {' '.join(args)} printed no JSON: {out!r}") from exc

    def value(self, *args: str) -> list[str]:
        """Runs a command with ``-f value`` and returns its non-empty lines."""
        out = self.run(*args, "-f", "value").stdout
        return [line for line in out.splitlines() if line.strip()]


@contextlib.contextmanager
def open_cli(server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[CLI]:
    """The CLI against ``server``, closed after."""
    c = CLI(server.url, tmp_path_factory.mktemp("cli-home"))
    try:
        yield c
    finally:
        c.close()


@contextlib.contextmanager
def open_conn(server: Any) -> Iterator[Any]:
    """An openstacksdk connection to ``server``, closed after."""
    import openstack
    c = openstack.connection.Connection(
        auth_type="none", endpoint=server.url, network_endpoint_override=server.url)
    try:
        yield c
    finally:
        c.close()


@pytest.fixture(scope="session")
def cli(server, tmp_path_factory: pytest.TempPathFactory) -> Iterator[CLI]:
    with open_cli(server, tmp_path_factory) as c:
        yield c


@pytest.fixture(scope="session")
def conn(server) -> Iterator[Any]:
    with open_conn(server) as c:
        yield c


@pytest.fixture
def name() -> str:
    """A unique name prefix, so tests never see each other's resources."""
    return f"cl-{uuid.uuid4().hex[:8]}"


class Cleanup:
    """Deletes what a test created, newest first, ignoring what is gone."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.items: list[tuple[str, str]] = []

    def add(self, kind: str, ident: str) -> str:
        self.items.append((kind, ident))
        return ident

    def run(self) -> None:
        net = self.conn.network
        delete = {"port": net.delete_port, "subnet": net.delete_subnet,
                  "network": net.delete_network, "subnetpool": net.delete_subnet_pool}
        for kind, ident in reversed(self.items):
            try:
                delete[kind](ident, ignore_missing=True)
            except Exception:  # noqa: BLE001 - best effort; the server may be the bug
                pass


@pytest.fixture
def cleanup(conn: Any) -> Iterator[Cleanup]:
    c = Cleanup(conn)
    yield c
    c.run()

"""Several ``neutrino serve`` instances behind HAProxy, from the files in
``etc/several-servers/`` -- the same files the README's "Several servers"
section shows, so the documented deployment is the tested one.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import psutil
import requests

from tests.conftest import ROOT, Server, free_port, stop_process

TEMPLATES = ROOT / "etc" / "several-servers"
PLACEHOLDER = re.compile(r"@([a-z0-9_]+)@")


def render(name: str, **values: object) -> str:
    """The template ``name`` with every ``@key@`` replaced; a key left
    unfilled is an error, so a new placeholder cannot go unnoticed."""
    text = (TEMPLATES / name).read_text()

    def fill(match: re.Match[str]) -> str:
        return str(values[match.group(1)])
    return PLACEHOLDER.sub(fill, text)


def api_server(home: Path, database: str, transport_url: str) -> Server:
    """A ``Server`` (tests/conftest.py) whose configuration is the template."""
    home.mkdir(parents=True, exist_ok=True)
    srv = Server(home, db_url=database)
    srv.conf.write_text(render("neutron.conf", server_port=srv.port, database=database,
                               transport_url=transport_url, state_path=home / "var"))
    return srv


def kill_hard(srv: Server) -> list[int]:
    """SIGKILL the server's master and every process under it (workers, the
    RPC process), by PID, as a crashed host would lose them; returns the PIDs."""
    assert srv.proc is not None
    master = psutil.Process(srv.proc.pid)
    victims = [master, *master.children(recursive=True)]
    for proc in victims:
        try:
            os.kill(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    srv.proc.wait(timeout=30)
    deadline = time.monotonic() + 30
    while any(_running(p) for p in victims):
        assert time.monotonic() < deadline, [p for p in victims if _running(p)]
        time.sleep(0.05)
    return [p.pid for p in victims]


def _running(proc: psutil.Process) -> bool:
    """Alive and not a zombie: an orphan's zombie stays until whoever adopted
    it reaps it, which in a container may be never."""
    try:
        return proc.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


class Balancer:
    """HAProxy in the foreground (``-db``) on a free port, config from the template."""

    def __init__(self, home: Path, servers: list[Server]) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.conf = home / "haproxy.cfg"
        self.conf.write_text(render("haproxy.cfg", balancer_port=self.port,
                                    **{f"server{i + 1}_port": s.port
                                       for i, s in enumerate(servers)}))
        self.log = home / "haproxy.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> "Balancer":
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(["haproxy", "-db", "-f", str(self.conf)],
                                         stdout=log, stderr=log)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"haproxy exited: {self.log.read_text()[-2000:]}")
            try:
                if requests.get(self.url + "/", timeout=2).status_code == 200:
                    return self
            except requests.RequestException:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError("haproxy did not start")

    def stop(self) -> None:
        stop_process(self.proc, 10)

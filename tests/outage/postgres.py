"""A PostgreSQL server of the test's own, to stop and start at will.

``initdb`` and ``pg_ctl`` from the installed PostgreSQL, a data directory
and a socket directory in a temporary directory, a free loopback port;
nothing is shared with the machine's own server, which is never touched.
PostgreSQL refuses to run as root, so everything runs as ``postgres``, in
a directory that user owns.
"""
from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import psycopg

from tests.conftest import free_port
from tests.waiting import until

OWNER = "postgres"
DATABASE = "neutron"


def _bin(tool: str) -> str | None:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{tool}"))
    return found[-1] if found else None


def available() -> str | None:
    """Why a private PostgreSQL cannot run here, or None."""
    if _bin("pg_ctl") is None or _bin("initdb") is None:
        return "no pg_ctl/initdb under /usr/lib/postgresql/*/bin"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root without runuser"
    return None


class PrivatePostgres:
    """``start``, ``stop`` and ``start`` again; ``close`` removes it all."""

    def __init__(self) -> None:
        self.home = Path(tempfile.mkdtemp(prefix="neutrino-pg-"))
        self.data = self.home / "data"
        self.log = self.home / "postgres.log"
        self.port = free_port()
        self.url = f"postgresql://{OWNER}@127.0.0.1:{self.port}/{DATABASE}"
        if os.geteuid() == 0:
            shutil.chown(self.home, OWNER, OWNER)
        self._run(_bin("initdb"), "-D", str(self.data), "-A", "trust", "-U", OWNER,
                  "--no-sync")

    def _run(self, *argv: str | None) -> None:
        prefix = ["runuser", "-u", OWNER, "--"] if os.geteuid() == 0 else []
        subprocess.run([*prefix, *map(str, argv)], check=True, capture_output=True,
                       timeout=120)

    def start(self) -> None:
        options = (f"-p {self.port} -c listen_addresses=127.0.0.1 "
                   f"-k {self.home} -c fsync=off -c max_connections=200")
        self._run(_bin("pg_ctl"), "start", "-D", str(self.data), "-l", str(self.log),
                  "-o", options, "-w", "-t", "60")
        until(self.answers, timeout=60)

    def create_database(self) -> None:
        with psycopg.connect(self.url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{DATABASE}"')

    def stop(self) -> None:
        """A fast shutdown: sessions are ended, as a database host going down
        for maintenance would end them."""
        if (self.data / "postmaster.pid").exists():
            self._run(_bin("pg_ctl"), "stop", "-D", str(self.data), "-m", "fast",
                      "-w", "-t", "60")

    def answers(self) -> bool:
        try:
            with psycopg.connect(self.url.rsplit("/", 1)[0] + "/postgres", connect_timeout=2):
                return True
        except psycopg.Error:
            return False

    def close(self) -> None:
        try:
            self.stop()
        finally:
            shutil.rmtree(self.home, ignore_errors=True)

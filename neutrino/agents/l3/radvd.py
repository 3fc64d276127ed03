"""One router's radvd in its namespace; files under ``<ra_confs>/<router>``.

The configuration comes from ``ra.config`` (pure); here it is written (read
only: radvd refuses a configuration others may write), radvd started with
its own pid file, reloaded with SIGHUP when the configuration changed, and
stopped with SIGTERM (radvd's last advertisements then carry a zero router
lifetime, so instances drop it as their default router at once).
"""
from __future__ import annotations

import os
import pwd
import signal
import subprocess
import time
from pathlib import Path

from neutrino.agents.l3 import ra
from neutrino.agents.pidfile import pid_of, terminate

START_WAIT = 5.0  # seconds for a started radvd to write its pid file


class Radvd:
    def __init__(self, confs_path: str, router_id: str) -> None:
        self.dir = Path(confs_path) / router_id
        self.conf = self.dir / "radvd.conf"
        self.pid_file = self.dir / "radvd.pid"
        self.log_file = self.dir / "radvd.log"

    def pid(self) -> int | None:
        """The running radvd's pid (None when it is not running; a pid reused by
        another process does not count)."""
        return pid_of(self.pid_file, str(self.conf))

    def _write(self, text: str) -> bool:
        """Whether the configuration changed."""
        if self.conf.exists() and self.conf.read_text() == text:
            return False
        tmp = self.dir / "radvd.conf.new"
        tmp.unlink(missing_ok=True)
        tmp.write_text(text)
        tmp.chmod(0o444)
        os.replace(tmp, self.conf)
        return True

    def ensure(self, namespace: str, text: str, settings: ra.Settings) -> None:
        """Running with ``text`` as its configuration: started, or reloaded on a change."""
        self.dir.mkdir(parents=True, exist_ok=True)
        changed = self._write(text)
        pid = self.pid()
        if pid is not None:
            if changed:
                os.kill(pid, signal.SIGHUP)
            return
        argv = ra.command(str(self.conf), str(self.pid_file), str(self.log_file), settings,
                          pwd.getpwuid(os.geteuid()).pw_name)
        subprocess.run(["ip", "netns", "exec", namespace, *argv], check=True, timeout=30,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE)
        deadline = time.monotonic() + START_WAIT
        while self.pid() is None and time.monotonic() < deadline:
            time.sleep(0.05)  # it daemonizes: the pid file comes a moment later
        if self.pid() is None:
            raise RuntimeError(f"radvd did not start in {namespace}: "
                               f"{self._log_tail()}")

    def _log_tail(self) -> str:
        try:
            return " | ".join(self.log_file.read_text().splitlines()[-3:])
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        """Stopped and its files removed; absent is fine."""
        pid = self.pid()
        if pid is not None:  # its goodbye advertisements go out first
            terminate(pid, lambda: self.pid() is not None, 5, kill=False)
        for path in (self.conf, self.pid_file, self.log_file, self.dir / "radvd.conf.new"):
            path.unlink(missing_ok=True)
        try:
            self.dir.rmdir()
        except OSError:
            pass

"""One strongSwan charon per router, in its ``qrouter-`` namespace (the host
adapter of the ``vpnaas`` extension).

charon keeps its pid file at a fixed path under ``/run``; each router's
charon gets a mount namespace of its own with the router's own directory
bound over ``/run`` (as upstream's netns wrapper binds ``/etc`` and
``/var/run``), so that several run side by side. Its configuration, VICI
socket and log are in ``<config_base_dir>/<router id>/``. swanctl loads the
configuration; the SAs are read over VICI (strongSwan's ``vici`` library).
"""
from __future__ import annotations

import logging
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

from neutrino.agents.l3.ipsec_plan import CharonFiles
from neutrino.agents.l3.model import namespace_name
from neutrino.agents.pidfile import pid_of, terminate

LOG = logging.getLogger(__name__)
START_TIMEOUT = 10.0
STOP_TIMEOUT = 10.0
# swanctl reads a strongswan.conf too: only what it needs, so that it does
# not look for the host's plugins and credentials
SWANCTL_CONF = "swanctl {\n  load = pem pkcs1 x509 pubkey openssl random nonce\n}\n"


class Charon:
    """The charon of one router."""

    def __init__(self, base_dir: str, router_id: str, charon_path: str = "/usr/lib/ipsec/charon",
                 swanctl_path: str = "swanctl") -> None:
        self.router_id = router_id
        self.dir = Path(base_dir) / router_id
        self.ns = namespace_name(router_id)
        self.charon_path = charon_path
        self.swanctl_path = swanctl_path

    @property
    def uri(self) -> str:
        return f"unix://{self.dir}/charon.vici"

    @property
    def _pid_file(self) -> Path:
        return self.dir / "run" / "charon.pid"

    def files(self) -> CharonFiles | None:
        try:
            return CharonFiles((self.dir / "strongswan.conf").read_text(),
                               (self.dir / "swanctl.conf").read_text())
        except OSError:
            return None

    def pid(self) -> int | None:
        return pid_of(self._pid_file, "charon")

    def write(self, files: CharonFiles) -> None:
        (self.dir / "run").mkdir(parents=True, exist_ok=True)
        for name in ("x509", "x509ca", "private", "rsa", "ecdsa", "pkcs8", "pubkey"):
            (self.dir / name).mkdir(exist_ok=True)  # swanctl --load-all looks in them
        (self.dir / "strongswan.conf").write_text(files.strongswan_conf)
        (self.dir / "swanctl-client.conf").write_text(SWANCTL_CONF)
        swanctl = self.dir / "swanctl.conf"
        swanctl.write_text(files.swanctl_conf)
        os.chmod(swanctl, 0o600)  # it holds the pre-shared keys

    def start(self) -> None:
        """charon in the router's namespace, with the router's /run."""
        self._pid_file.unlink(missing_ok=True)
        (self.dir / "charon.vici").unlink(missing_ok=True)
        script = f"mount --bind {self.dir / 'run'} /run && exec {self.charon_path}"
        env = {**os.environ, "STRONGSWAN_CONF": str(self.dir / "strongswan.conf")}
        with open(self.dir / "charon.out", "ab") as out:
            subprocess.Popen(["ip", "netns", "exec", self.ns, "unshare", "--mount",
                              "--propagation", "private", "sh", "-c", script],
                             stdout=out, stderr=out, env=env, start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if (self.dir / "charon.vici").exists() and self.pid() is not None:
                return
            time.sleep(0.1)
        raise RuntimeError(f"router {self.router_id}: charon did not start; see "
                           f"{self.dir / 'charon.out'}")

    def load(self) -> None:
        """Load swanctl.conf: its connections start (or wait) as it says."""
        env = {**os.environ, "STRONGSWAN_CONF": str(self.dir / "swanctl-client.conf")}
        done = subprocess.run([self.swanctl_path, "--load-all", "--noprompt", "--file",
                               str(self.dir / "swanctl.conf"), "--uri", self.uri],
                              capture_output=True, text=True, env=env, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"router {self.router_id}: swanctl --load-all failed: "
                               f"{done.stdout[-2000:]} {done.stderr[-2000:]}")

    def installed(self) -> set[str]:
        """The connections (by name) with an installed CHILD_SA."""
        # deferred: only hosts running the vpnaas extension need strongSwan's library
        import vici
        out: set[str] = set()
        sock = None
        try:
            sock = _socket(self.dir / "charon.vici")
            for sa in vici.Session(sock).list_sas():
                for name, ike in sa.items():
                    children: dict[str, Any] = ike.get("child-sas", {}) or {}
                    for child in children.values():
                        if _text(child.get("state")) == "INSTALLED":
                            out.add(_text(child.get("name")) or _text(name))
        except (OSError, vici.exception.SessionException) as exc:
            LOG.warning("router %s: reading charon's SAs failed: %s", self.router_id, exc)
        finally:
            if sock is not None:
                sock.close()
        return out

    def stop(self) -> None:
        pid = self.pid()
        if pid is not None:
            terminate(pid, lambda: self.pid() is not None, STOP_TIMEOUT)

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def _socket(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX)
    sock.settimeout(5)
    try:
        sock.connect(str(path))
    except OSError:
        sock.close()
        raise
    return sock


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value or "")

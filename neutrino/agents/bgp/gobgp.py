"""Speakers run by GoBGP: one ``gobgpd`` per hosted speaker.

Each speaker's daemon has a directory under ``$state_path/bgp/<speaker>``
with its configuration (global AS and router id; one neighbor per peer,
``auth-password`` for MD5), its pid file, its log and the unix socket of
its API. Peers are changed by rewriting the configuration and sending
SIGHUP (gobgpd adds, updates and deletes neighbors on reload); routes are
added to and deleted from its global RIB with the ``gobgp`` command. A
stopped daemon takes its sessions and routes with it, and ``clear`` ends
daemons a previous run of the agent left.
"""
from __future__ import annotations

import json
import logging
import shutil
import signal
import subprocess
import time
from pathlib import Path

from neutrino.agents.bgp.plan import Peer
from neutrino.agents.bgp.speaker import Speakers
from neutrino.agents.pidfile import cmdline, pid_of, terminate

LOG = logging.getLogger(__name__)

START_WAIT_S = 15.0
STOP_WAIT_S = 10.0


class GoBgpError(RuntimeError):
    pass


def _afi(ip_version: int) -> str:
    return "ipv6-unicast" if ip_version == 6 else "ipv4-unicast"


def config_text(local_as: int, router_id: str, listen_port: int, ip_version: int,
                peers: list[Peer]) -> str:
    """gobgpd's TOML configuration (strings quoted as JSON, which TOML reads)."""
    lines = ["[global.config]", f"  as = {int(local_as)}",
             f"  router-id = {json.dumps(router_id)}", f"  port = {int(listen_port)}"]
    for peer in sorted(peers, key=lambda p: p.ip):
        lines += ["", "[[neighbors]]", "  [neighbors.config]",
                  f"    neighbor-address = {json.dumps(peer.ip)}",
                  f"    peer-as = {int(peer.remote_as)}"]
        if peer.password:
            lines.append(f"    auth-password = {json.dumps(peer.password)}")
        lines += ["  [[neighbors.afi-safis]]", "    [neighbors.afi-safis.config]",
                  f"      afi-safi-name = {json.dumps(_afi(ip_version))}"]
    return "\n".join(lines) + "\n"


class _Daemon:
    def __init__(self, root: Path, local_as: int, ip_version: int) -> None:
        self.dir = root
        self.local_as = local_as
        self.ip_version = ip_version
        self.peers: dict[str, Peer] = {}
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def conf(self) -> Path:
        return self.dir / "gobgpd.toml"

    @property
    def socket(self) -> Path:
        return self.dir / "api.sock"

    @property
    def pidfile(self) -> Path:
        return self.dir / "gobgpd.pid"


def _is_gobgpd(pid: int) -> bool:
    return "gobgpd" in "\0".join(cmdline(pid) or ())


def _end(pid: int) -> None:
    """SIGTERM, then SIGKILL after a grace, a gobgpd this driver started."""
    terminate(pid, lambda: _is_gobgpd(pid), STOP_WAIT_S)


class GoBgpSpeakers(Speakers):
    def __init__(self, state_dir: Path, router_id: str, listen_port: int = 179,
                 gobgpd: str = "gobgpd", gobgp: str = "gobgp") -> None:
        if not router_id:
            raise ValueError("[BGP] bgp_router_id: the speakers' router id is required")
        self.root = state_dir
        self.router_id = router_id
        self.listen_port = listen_port
        self.gobgpd, self.gobgp = gobgpd, gobgp
        self.daemons: dict[str, _Daemon] = {}

    # -- the daemon ----------------------------------------------------------------------

    def _write(self, daemon: _Daemon) -> None:
        tmp = daemon.conf.with_suffix(".tmp")
        tmp.write_text(config_text(daemon.local_as, self.router_id, self.listen_port,
                                   daemon.ip_version, list(daemon.peers.values())))
        tmp.chmod(0o600)  # peers' passwords
        tmp.replace(daemon.conf)

    def _cli(self, daemon: _Daemon, *args: str) -> str:
        done = subprocess.run([self.gobgp, "--target", f"unix://{daemon.socket}", *args],
                              capture_output=True, text=True, timeout=30)
        if done.returncode != 0:
            raise GoBgpError(f"gobgp {' '.join(args)}: {done.stderr.strip() or done.stdout}")
        return done.stdout

    def start(self, speaker_id: str, local_as: int, ip_version: int) -> None:
        daemon = _Daemon(self.root / speaker_id, local_as, ip_version)
        shutil.rmtree(daemon.dir, ignore_errors=True)
        daemon.dir.mkdir(parents=True, mode=0o700)
        self._write(daemon)
        with open(daemon.dir / "gobgpd.log", "ab") as log:
            daemon.proc = subprocess.Popen(
                [self.gobgpd, "-f", str(daemon.conf), "-t", "toml", "-p", "--pprof-disable",
                 "--api-hosts", f"unix://{daemon.socket}"],
                stdout=log, stderr=log, start_new_session=True)
        daemon.pidfile.write_text(str(daemon.proc.pid))
        self.daemons[speaker_id] = daemon
        deadline = time.monotonic() + START_WAIT_S
        while True:
            if daemon.proc.poll() is not None:
                self.daemons.pop(speaker_id)
                raise GoBgpError(f"gobgpd of speaker {speaker_id} exited "
                                 f"({daemon.proc.returncode}); see {daemon.dir}/gobgpd.log")
            try:
                self._cli(daemon, "global")
                break
            except (GoBgpError, subprocess.TimeoutExpired):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        LOG.info("BGP speaker %s started: AS %s, router id %s (gobgpd %s)", speaker_id,
                 local_as, self.router_id, daemon.proc.pid)

    def stop(self, speaker_id: str) -> None:
        daemon = self.daemons.pop(speaker_id, None)
        if daemon is None:
            return
        if daemon.proc is not None:
            _end(daemon.proc.pid)
            daemon.proc.wait(STOP_WAIT_S)
        shutil.rmtree(daemon.dir, ignore_errors=True)
        LOG.info("BGP speaker %s stopped", speaker_id)

    def _reload(self, daemon: _Daemon) -> None:
        self._write(daemon)
        assert daemon.proc is not None
        daemon.proc.send_signal(signal.SIGHUP)

    def add_peer(self, speaker_id: str, peer: Peer) -> None:
        daemon = self.daemons[speaker_id]
        daemon.peers[peer.ip] = peer
        self._reload(daemon)
        LOG.info("BGP speaker %s: peering with %s (AS %s%s)", speaker_id, peer.ip,
                 peer.remote_as, ", MD5" if peer.password else "")

    def remove_peer(self, speaker_id: str, peer: Peer) -> None:
        daemon = self.daemons[speaker_id]
        if daemon.peers.pop(peer.ip, None) is not None:
            self._reload(daemon)
            LOG.info("BGP speaker %s: no longer peering with %s", speaker_id, peer.ip)

    def advertise(self, speaker_id: str, destination: str, next_hop: str) -> None:
        daemon = self.daemons[speaker_id]
        family = "ipv6" if daemon.ip_version == 6 else "ipv4"
        self._cli(daemon, "global", "rib", "add", "-a", family, destination,
                  "nexthop", next_hop)
        LOG.info("BGP speaker %s: advertising %s via %s", speaker_id, destination, next_hop)

    def withdraw(self, speaker_id: str, destination: str) -> None:
        daemon = self.daemons[speaker_id]
        family = "ipv6" if daemon.ip_version == 6 else "ipv4"
        self._cli(daemon, "global", "rib", "del", "-a", family, destination)
        LOG.info("BGP speaker %s: withdrew %s", speaker_id, destination)

    def gone(self, speaker_ids: list[str]) -> list[str]:
        out = []
        for speaker_id in speaker_ids:
            daemon = self.daemons.get(speaker_id)
            if daemon is None or daemon.proc is None or daemon.proc.poll() is not None:
                LOG.warning("gobgpd of BGP speaker %s is gone; starting it again", speaker_id)
                self.daemons.pop(speaker_id, None)
                out.append(speaker_id)
        return out

    def clear(self) -> None:
        for speaker_id in list(self.daemons):
            self.stop(speaker_id)
        if not self.root.is_dir():
            return
        for pidfile in self.root.glob("*/gobgpd.pid"):
            pid = pid_of(pidfile, "gobgpd")
            if pid is not None:
                LOG.info("ending gobgpd %s a previous run left (%s)", pid, pidfile.parent.name)
                _end(pid)
            shutil.rmtree(pidfile.parent, ignore_errors=True)

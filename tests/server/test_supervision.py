"""The server keeps its children running: a killed API worker is replaced
while the others serve, a killed RPC process is restarted and reported by
``/healthcheck`` meanwhile, a child that keeps dying is started again ever
more slowly, each death logged at ERROR with how the child ended."""
from __future__ import annotations

import os
import re
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import psutil
import pytest
import requests

from tests.conftest import Client, Server, free_port
from tests.rpc.bus import agent_conf, bus
from tests.rpc.conftest import fresh_vhost
from tests.rpc.test_state_reports import RecordingAgent, shown
from tests.waiting import until, wait_for

# Children that keep dying wait 0.2, 0.4, 0.8, 0.8 ... s (the first death is
# answered at once): short enough for a test to see the cap.
QUICK_BACKOFF = ("child_respawn_delay = 0.2\nchild_respawn_max_delay = 0.8\n"
                 "child_healthy_after = 30\n")
EXPECTED_DELAYS = [0.0, 0.2, 0.4, 0.8, 0.8]


@dataclass
class Outcome:
    started: float
    ended: float
    error: str | None


@dataclass
class Load:
    """Clients sending requests in a loop from threads, each on a
    connection of its own, recording when each started and ended."""
    url: str
    threads: int = 6
    outcomes: list[Outcome] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _workers: list[threading.Thread] = field(default_factory=list)

    def __enter__(self) -> "Load":
        for n in range(self.threads):
            thread = threading.Thread(target=self._loop, name=f"load-{n}", daemon=True)
            thread.start()
            self._workers.append(thread)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in self._workers:
            thread.join(30)

    def _loop(self) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            try:
                resp = requests.get(self.url + "/v2.0/networks", timeout=10,
                                    headers={"Connection": "close"})
                error = None if resp.status_code == 200 else f"status {resp.status_code}"
            except requests.RequestException as exc:
                error = f"{type(exc).__name__}: {exc}"
            self.outcomes.append(Outcome(started, time.monotonic(), error))

    def failures(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.error is not None]

    def answered_after(self, moment: float) -> int:
        return sum(1 for o in self.outcomes if o.started > moment and o.error is None)


def _children(pid: int) -> set[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return {int(p) for p in path.read_text().split()} if path.exists() else set()


def _kill(pid: int) -> tuple[float, float]:
    """SIGKILL ``pid``: the moment just before, and the first moment it is
    seen gone (reaped by the master), until which it may still hold
    connections. Its main thread turns zombie before its other threads have
    exited and closed its listening socket, so that is not yet the end."""
    before = time.monotonic()
    os.kill(pid, signal.SIGKILL)
    while Path(f"/proc/{pid}").exists():
        time.sleep(0.0005)
    return before, time.monotonic()


def _deaths(log: str, child: str) -> list[tuple[int, str, float]]:
    """(pid, exit status, wait before the next start) of each death logged at ERROR."""
    found = re.findall(rf" ERROR \S+ {re.escape(child)} \(pid (\d+)\) died: (.+?); "
                       r"starting it again in ([\d.]+) s", log)
    return [(int(pid), status, float(delay)) for pid, status, delay in found]


def _health(url: str, **headers: str) -> tuple[int, str]:
    resp = requests.get(url + "/healthcheck", timeout=10, headers=headers)
    return resp.status_code, resp.text


# -- API workers ---------------------------------------------------------------

KILLS = 3


def test_a_killed_api_worker_is_replaced_while_the_others_serve(tmp_path: Path) -> None:
    srv = Server(tmp_path, workers=2).start()
    try:
        master = srv.proc.pid
        workers = until(lambda: found if len(found := _children(master)) == 2 else None, 30)
        windows: list[tuple[float, float]] = []
        killed_in: list[float] = []
        with Load(srv.url) as load:
            # Both workers serve before one is killed (one may still be loading).
            until(lambda: all(f" {pid} INFO neutrino.access" in srv.log.read_text()
                              for pid in workers), 30)
            for _ in range(KILLS):
                victim = sorted(workers)[0]
                before, after = _kill(victim)
                windows.append((before, after))
                killed_in.append(after - before)
                # Replaced within a second: a new child of the master.
                replaced = wait_for(lambda: _children(master) - workers - {victim}, 1.0, 0.02)
                spawned_in = time.monotonic() - before
                assert replaced, f"no new worker within 1 s of killing {victim}"
                (new,) = replaced
                # ... which serves once it has loaded the app.
                until(lambda: f" {new} INFO neutrino.access" in srv.log.read_text(), 30)
                assert load.answered_after(after) > 0  # the other worker served meanwhile
                workers = (workers - {victim}) | {new}
                print(f"kill {len(windows)}: replacement spawned in {spawned_in:.2f} s, "
                      f"{load.answered_after(after)} requests answered until it served")
        # Only what was in flight on a killed worker failed, its connection
        # cut: begun before the worker was gone, not ended before the kill.
        # Until its exit has closed its listening socket (granian gives each
        # worker one of its own) the kernel still queues connections there,
        # and resets them with it; net.ipv4.tcp_migrate_req would hand them
        # to another worker instead.
        failed_per_kill = [sum(1 for o in load.failures() if o.started <= after and o.ended >= before)
                           for before, after in windows]
        stray = [o for o in load.failures()
                 if not any(o.started <= after and o.ended >= before for before, after in windows)]
        assert not stray, (stray, windows)
        assert all((o.error or "").startswith("ConnectionError") for o in load.failures())
        print(f"requests failed per worker kill: {failed_per_kill}; the kill took "
              + ", ".join(f"{1000 * t:.1f} ms" for t in killed_in))
        log = srv.log.read_text()
        assert [status for _, status, _ in _deaths(log, "API worker-1")
                ] + [status for _, status, _ in _deaths(log, "API worker-2")] == \
            ["killed by signal SIGKILL"] * KILLS
        assert srv.proc.poll() is None
    finally:
        srv.stop()


# A test-only fault: the worker or process named in FAIL_CHILD exits with
# code 3 as it starts, every time (installed as a sitecustomize module, so
# nothing of it is in neutrino).
FAULT = """\
import os, multiprocessing.process as mp

_run = mp.BaseProcess.run
_which = os.environ.get("FAIL_CHILD", "")


def run(self):
    name = self.name
    if name == "granian-worker":
        name = f"worker-{self._args[0]}"
    if name == _which:
        os._exit(3)
    return _run(self)


mp.BaseProcess.run = run
"""


def _faulty_env(tmp_path: Path, which: str) -> dict[str, str]:
    fault = tmp_path / "fault"
    fault.mkdir()
    (fault / "sitecustomize.py").write_text(FAULT)
    path = os.pathsep.join(p for p in (str(fault), os.environ.get("PYTHONPATH")) if p)
    return {"PYTHONPATH": path, "FAIL_CHILD": which}


def test_an_api_worker_that_keeps_dying_backs_off_while_the_others_serve(
        tmp_path: Path) -> None:
    """granian alone stopped the whole server when a worker died twice in a
    few seconds."""
    srv = Server(tmp_path, workers=2, extra=QUICK_BACKOFF,
                 env=_faulty_env(tmp_path, "worker-2")).start()
    try:
        deaths = until(lambda: d if len(d := _deaths(srv.log.read_text(), "API worker-2")) >= 6
                       else None, 60)
        assert [delay for _, _, delay in deaths[:5]] == EXPECTED_DELAYS
        assert {status for _, status, _ in deaths} == {"exit code 3"}
        assert requests.get(srv.url + "/v2.0/networks", timeout=10).status_code == 200
        assert srv.proc.poll() is None
    finally:
        srv.stop()


# -- the RPC process -----------------------------------------------------------

def _rpc_pid(srv: Server) -> int:
    return int(re.findall(r"RPC process started \(pid (\d+)\)", srv.log.read_text())[-1])


@pytest.fixture
def vhost() -> Iterator[str]:
    with fresh_vhost() as name:
        yield name


def test_a_killed_rpc_process_is_restarted_and_reported_meanwhile(
        tmp_path: Path, vhost: str) -> None:
    srv = Server(tmp_path, workers=2, extra=f"transport_url = {bus(vhost)}\n"
                                             "agent_down_time = 5\n").start()
    admin = Client(srv.url, roles="admin")
    agent = RecordingAgent(agent_conf(tmp_path, vhost, "host-rpc-kill",
                                      "[AGENT]\nreport_interval = 0.5\n"))
    try:
        agent.register()
        agent.start_reporting()
        until(lambda: (shown(admin, "host-rpc-kill") or {}).get("alive"))
        until(lambda: _health(srv.url)[0] == 200)
        victim = _rpc_pid(srv)
        seen: list[tuple[int, str]] = []
        with Load(srv.url, threads=4) as load:
            until(lambda: load.answered_after(0) > 20)
            _kill(victim)
            # Down, named, until the new process serves; then healthy again.
            until(lambda: seen.append(_health(srv.url)) or seen[-1][0] == 503, 10, 0.02)
            until(lambda: seen.append(_health(srv.url)) or seen[-1][0] == 200, 60, 0.05)
        assert any(answer == (503, "RPC process not running") for answer in seen), seen
        # The API never depended on it.
        assert load.failures() == []
        restarted = _rpc_pid(srv)
        assert restarted != victim and Path(f"/proc/{restarted}").exists()
        assert _deaths(srv.log.read_text(), "RPC process") == [
            (victim, "killed by signal SIGKILL", 0.0)]
        # The agent's reports reach the new process.
        beat = shown(admin, "host-rpc-kill")["heartbeat_timestamp"]
        row = until(lambda: r if (r := shown(admin, "host-rpc-kill"))["heartbeat_timestamp"]
                    != beat else None, 20)
        assert row["alive"] is True
    finally:
        agent.stop()
        srv.stop()
    assert srv.proc.returncode == 0
    assert "did not stop" not in srv.log.read_text()


def test_an_rpc_process_that_keeps_dying_backs_off_and_is_reported(tmp_path: Path) -> None:
    srv = Server(tmp_path, extra="transport_url = rabbit://guest:guest@127.0.0.1:5672/\n"
                                 + QUICK_BACKOFF,
                 env=_faulty_env(tmp_path, "neutrino-rpc")).start()
    try:
        deaths = until(lambda: d if len(d := _deaths(srv.log.read_text(), "RPC process")) >= 6
                       else None, 60)
        assert [delay for _, _, delay in deaths[:5]] == EXPECTED_DELAYS
        assert {status for _, status, _ in deaths} == {"exit code 3"}
        assert _health(srv.url) == (503, "RPC process not running")
        assert requests.get(srv.url + "/v2.0/networks", timeout=10).status_code == 200
    finally:
        srv.stop()


# -- /healthcheck ----------------------------------------------------------------

NO_CACHE = "[healthcheck]\ncache_time = 0\n"


def test_healthcheck_names_an_unreachable_database(tmp_path: Path) -> None:
    srv = Server(tmp_path, extra=NO_CACHE).start()
    member = {"X-Project-Id": "p1", "X-User-Id": "u1", "X-Roles": "member"}
    try:
        assert _health(srv.url) == (200, "OK")
        state, away = tmp_path / "var", tmp_path / "var-away"
        state.rename(away)  # the database file is gone from where it was
        try:
            assert _health(srv.url) == (503, "database unreachable")
            assert requests.head(srv.url + "/healthcheck", timeout=10).status_code == 503
            as_member = requests.get(srv.url + "/healthcheck", timeout=10,
                                     headers={"Accept": "application/json", **member})
            assert as_member.json() == {"detailed": False, "reasons": ["database unreachable"]}
            as_admin = requests.get(srv.url + "/healthcheck", timeout=10,
                                    headers={"Accept": "application/json"}).json()
            assert as_admin["detailed"] is True
            (reason,) = as_admin["reasons"]
            assert reason["reason"] == "database unreachable"
            assert "neutrino.sqlite" in reason["details"]
        finally:
            away.rename(state)
        assert _health(srv.url) == (200, "OK")
        assert requests.head(srv.url + "/healthcheck", timeout=10).status_code == 204
        assert requests.get(srv.url + "/healthcheck", timeout=10,
                            headers={"Accept": "application/json", **member}).json() == {
            "detailed": False, "reasons": ["OK"]}
    finally:
        srv.stop()


def test_healthcheck_names_a_disconnected_bus(tmp_path: Path) -> None:
    closed = free_port()
    srv = Server(tmp_path, extra=f"transport_url = rabbit://guest:guest@127.0.0.1:{closed}/\n"
                                 + NO_CACHE).start()
    try:
        status, text = _health(srv.url)
        assert status == 503
        # The RPC process cannot serve without its bus either.
        assert text.splitlines() == ["message bus disconnected", "RPC process not running"]
    finally:
        srv.stop()


def test_healthcheck_answers_503_while_the_disable_file_exists(tmp_path: Path) -> None:
    """oslo.middleware's disable_by_file backend, as upstream's api-paste.ini
    configures it: an operator drains a server from its balancer."""
    disable = tmp_path / "healthcheck_disable"
    srv = Server(tmp_path, extra=f"[healthcheck]\ndisable_by_file_path = {disable}\n").start()
    try:
        assert _health(srv.url) == (200, "OK")
        disable.touch()
        assert _health(srv.url) == (503, "DISABLED BY FILE")
        assert requests.get(srv.url + "/v2.0/networks", timeout=10).status_code == 200
        disable.unlink()
        assert _health(srv.url) == (200, "OK")
    finally:
        srv.stop()


def test_a_stopped_server_leaves_no_process_behind_after_casting(
        tmp_path: Path, vhost: str) -> None:
    """Each worker's request threads may be held by the bus library (a cast
    reconnecting); a stop still ends every process the server started."""
    srv = Server(tmp_path, workers=2, extra=f"transport_url = {bus(vhost)}\n").start()
    admin = Client(srv.url, roles="admin")
    try:
        for n in range(4):
            net = admin.post("/v2.0/networks", {"network": {"name": f"cast-{n}"}})[1]["network"]
            admin.post("/v2.0/subnets", {"subnet": {"network_id": net["id"], "ip_version": 4,
                                                    "cidr": f"10.{n}.0.0/24"}})
            admin.post("/v2.0/ports", {"port": {"network_id": net["id"]}})
        assert srv.proc is not None
        children = psutil.Process(srv.proc.pid).children(recursive=True)
        assert children
    finally:
        srv.stop()
    assert wait_for(lambda: not any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE
                                    for p in children), 30), \
        [p.pid for p in children if p.is_running()]

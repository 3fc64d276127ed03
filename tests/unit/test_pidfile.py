"""Which pid an agent believes its daemon's pid file (``agents/pidfile``):
a real process of this test's own making stands for the daemon."""
from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from neutrino.agents.l3.keepalived import Keepalived
from neutrino.agents.pidfile import cmdline, pid_of, read_pid, terminate

SLEEP = "import time; print('ready', flush=True); time.sleep(600)"


@pytest.fixture
def sleeper(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    """A process whose command line names ``tmp_path/daemon.conf``, returned
    once it runs (before its exec, its command line is still pytest's)."""
    proc = subprocess.Popen([sys.executable, "-c", SLEEP, str(tmp_path / "daemon.conf")],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    yield proc
    proc.kill()
    proc.wait()


def test_the_pid_of_a_process_naming_its_marker_is_believed(
        tmp_path: Path, sleeper: subprocess.Popen[str]) -> None:
    pid_file = tmp_path / "daemon.pid"
    pid_file.write_text(f"{sleeper.pid}\n")
    assert read_pid(pid_file) == sleeper.pid
    assert pid_of(pid_file, str(tmp_path / "daemon.conf")) == sleeper.pid
    assert cmdline(sleeper.pid) == [sys.executable, "-c", SLEEP, str(tmp_path / "daemon.conf")]


def test_a_pid_now_another_processs_is_not_believed(
        tmp_path: Path, sleeper: subprocess.Popen[str]) -> None:
    pid_file = tmp_path / "daemon.pid"
    pid_file.write_text(f"{sleeper.pid}\n")
    assert pid_of(pid_file, str(tmp_path / "other.conf")) is None


def test_a_pid_file_of_an_ended_process_or_none_at_all_reads_as_no_daemon(
        tmp_path: Path) -> None:
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)
    pid_file = tmp_path / "daemon.pid"
    pid_file.write_text(ended.stdout)
    assert pid_of(pid_file, "python") is None
    pid_file.write_text("")
    assert read_pid(pid_file) is None
    pid_file.write_text("not a pid\n")
    assert read_pid(pid_file) is None
    assert read_pid(tmp_path / "absent.pid") is None


def test_haproxy_s_several_pids_read_as_the_first(tmp_path: Path) -> None:
    pid_file = tmp_path / "haproxy.pid"
    pid_file.write_text("41\n42\n")
    assert read_pid(pid_file) == 41


def test_keepalived_is_not_taken_for_a_process_that_reused_its_pid(
        tmp_path: Path, sleeper: subprocess.Popen[str]) -> None:
    """The pid file keepalived left behind now names another process: the
    agent must neither count the router's keepalived as running nor signal it."""
    keepalived = Keepalived(str(tmp_path), "r1")
    keepalived.dir.mkdir()
    keepalived.pid_file.write_text(f"{sleeper.pid}\n")
    assert keepalived.pid() is None


@pytest.fixture
def stubborn() -> Iterator[subprocess.Popen[str]]:
    """A process that ignores SIGTERM (a daemon stuck on its way out),
    returned once it does."""
    proc = subprocess.Popen([sys.executable, "-c", (
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "print('ready', flush=True); time.sleep(600)")], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    yield proc
    proc.kill()
    proc.wait()


def test_a_daemon_still_running_after_its_grace_is_killed(
        stubborn: subprocess.Popen[str]) -> None:
    terminate(stubborn.pid, lambda: stubborn.poll() is None, 0.2)
    assert stubborn.wait(timeout=30) == -signal.SIGKILL


def test_without_kill_a_daemon_still_running_after_its_grace_is_left_running(
        stubborn: subprocess.Popen[str]) -> None:
    terminate(stubborn.pid, lambda: stubborn.poll() is None, 0.2, kill=False)
    assert stubborn.poll() is None


def test_a_daemon_that_heeds_sigterm_ends_by_it(sleeper: subprocess.Popen[str]) -> None:
    terminate(sleeper.pid, lambda: sleeper.poll() is None, 30)
    assert sleeper.wait(timeout=30) == -signal.SIGTERM

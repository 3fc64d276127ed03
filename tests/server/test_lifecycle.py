"""The server process: start-up refusals, workers, request ids, shutdown."""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Callable

import requests

from tests.conftest import Server
from tests.waiting import wait_for


def _run_serve(tmp_path: Path, conf_text: str) -> subprocess.CompletedProcess[str]:
    conf = tmp_path / "bad.conf"
    conf.write_text(conf_text)
    return subprocess.run([sys.executable, "-m", "neutrino.cmd.main", "serve",
                           "--config-file", str(conf)], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)


def test_invalid_option_value_stops_startup_with_one_line_naming_it(tmp_path: Path) -> None:
    result = _run_serve(tmp_path, "[DEFAULT]\nbind_port = not-a-port\n")
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if "configuration error" in line]
    assert len(lines) == 1 and "bind_port" in lines[0]


def test_invalid_choice_stops_startup(tmp_path: Path) -> None:
    result = _run_serve(tmp_path, "[DEFAULT]\nauth_strategy = kerberos\n")
    assert result.returncode == 2
    assert "auth_strategy" in result.stderr


def test_unknown_core_plugin_names_both_attempts(tmp_path: Path) -> None:
    result = _run_serve(tmp_path, f"[DEFAULT]\nauth_strategy = noauth\ncore_plugin = no.such:Plugin\n"
                                  f"state_path = {tmp_path}/var\n")
    assert result.returncode == 2
    line = result.stderr.strip().splitlines()[-1]
    assert "not an alias" in line and "not an importable class" in line


def test_every_response_carries_a_request_id(server: Server) -> None:
    for path in ("/", "/v2.0/networks", "/v2.0/networks/no-such-id", "/v2.0/nowhere"):
        resp = requests.get(server.url + path, timeout=10)
        assert resp.headers["x-openstack-request-id"].startswith("req-"), path


def test_access_log_records_each_request(server: Server) -> None:
    requests.get(server.url + "/v2.0/networks?name=access-log-probe", timeout=10)
    wait_for(lambda: "name=access-log-probe" in server.log.read_text(), 5)
    line = [row for row in server.log.read_text().splitlines() if "access-log-probe" in row][-1]
    assert '"GET /v2.0/networks?name=access-log-probe" status: 200' in line


def test_an_empty_access_log_turns_the_access_log_off_in_the_workers(tmp_path: Path) -> None:
    srv = Server(tmp_path, extra="access_log =\n").start()
    try:
        requests.get(srv.url + "/v2.0/networks?name=no-access-line", timeout=10)
        srv.stop()
        log = srv.log.read_text()
        assert "loaded core plugin" in log  # the worker's other lines are there
        assert "no-access-line" not in log
    finally:
        srv.stop()


def test_an_access_log_file_gets_each_request_once(tmp_path: Path) -> None:
    access = tmp_path / "access.log"
    srv = Server(tmp_path, extra=f"access_log = {access}\n").start()
    try:
        requests.get(srv.url + "/v2.0/networks?name=file-access-line", timeout=10)
    finally:
        srv.stop()
    lines = [line for line in access.read_text().splitlines() if "file-access-line" in line]
    assert len(lines) == 1
    assert "file-access-line" not in srv.log.read_text()


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def _children_once(pid: int, done: Callable[[set[int]], bool], timeout: float) -> set[int]:
    """The process's children as soon as ``done`` holds of them, or at the timeout."""
    seen: list[set[int]] = []

    def found() -> bool:
        seen.append(set(_children(pid)))
        return done(seen[-1])
    wait_for(found, timeout)
    return seen[-1]


def test_api_workers_sets_the_number_of_worker_processes(tmp_path: Path) -> None:
    srv = Server(tmp_path, workers=3).start()
    try:
        assert srv.proc is not None
        assert len(_children_once(srv.proc.pid, lambda found: len(found) >= 3, 10)) == 3
    finally:
        srv.stop()


def test_a_server_stopped_while_its_workers_load_stops_them_without_killing(
        tmp_path: Path) -> None:
    srv = Server(tmp_path, workers=3)
    srv.launch()
    try:
        # granian's master says so as it forks the last worker; loading the
        # app takes each of them most of a second more.
        assert wait_for(lambda: "Spawning worker-3" in srv.log.read_text(), 60)
        srv.proc.terminate()
        assert srv.proc.wait(timeout=60) == 0
        log = srv.log.read_text()
        assert "refused to gracefully stop" not in log, log
    finally:
        srv.stop()


SLOW_FORKS = "import os, time\nos.register_at_fork(after_in_child=lambda: time.sleep(1))\n"


def test_a_stop_just_after_a_worker_forks_reaches_that_worker(tmp_path: Path) -> None:
    """A worker's first moments after the fork (multiprocessing's
    bootstrap) run the master's signal handlers, which would swallow the
    stop; here they are stretched to a second so the stop lands in them."""
    slow = tmp_path / "slow-forks"
    slow.mkdir()
    (slow / "sitecustomize.py").write_text(SLOW_FORKS)
    path = os.pathsep.join(p for p in (str(slow), os.environ.get("PYTHONPATH")) if p)
    srv = Server(tmp_path, workers=2, env={"PYTHONPATH": path})
    srv.launch()
    try:
        assert wait_for(lambda: "Spawning worker-2" in srv.log.read_text(), 60)
        srv.proc.terminate()
        assert srv.proc.wait(timeout=60) == 0
        log = srv.log.read_text()
        assert "refused to gracefully stop" not in log, log
    finally:
        srv.stop()


def test_sigterm_stops_the_server_gracefully(tmp_path: Path) -> None:
    srv = Server(tmp_path).start()
    assert srv.proc is not None
    assert requests.get(srv.url + "/v2.0/networks", timeout=10).status_code == 200
    os.kill(srv.proc.pid, signal.SIGTERM)
    assert srv.proc.wait(timeout=30) == 0
    assert "Shutting down" in srv.log.read_text()


def test_sighup_replaces_the_workers_and_the_api_keeps_answering(tmp_path: Path) -> None:
    """As with upstream's servers, HUP is how an operator restarts the
    workers (new code, rotated logs) without stopping the service."""
    srv = Server(tmp_path, workers=2).start()
    try:
        assert srv.proc is not None
        before = _children_once(srv.proc.pid, lambda found: len(found) >= 2, 10)
        assert len(before) == 2
        os.kill(srv.proc.pid, signal.SIGHUP)
        now = _children_once(srv.proc.pid,
                             lambda found: len(found) == 2 and not found & before, 30)
        assert len(now) == 2 and not now & before, (before, now)
        assert requests.get(srv.url + "/v2.0/networks", timeout=10).status_code == 200
    finally:
        srv.stop()


def test_keystone_mode_requires_a_token_but_not_for_versions(tmp_path: Path) -> None:
    srv = Server(tmp_path, auth_strategy="keystone",
                 extra="[keystone_authtoken]\nwww_authenticate_uri = http://127.0.0.1:5999\n"
                       "auth_url = http://127.0.0.1:5999\n").start()
    try:
        assert requests.get(srv.url + "/", timeout=10).status_code == 200
        resp = requests.get(srv.url + "/v2.0/networks", timeout=10)
        assert resp.status_code == 401
        assert resp.headers["WWW-Authenticate"].startswith("Keystone uri=")
    finally:
        srv.stop()


def test_building_the_api_loads_no_message_bus_library(tmp_path: Path) -> None:
    """An API worker casts through oslo.messaging only once it has something
    to cast; importing it (and eventlet, dnspython) at start-up was a third
    of the start-up time and ~15 MB per process. Every service plugin, with
    a bus configured."""
    conf = tmp_path / "n.conf"
    conf.write_text(f"[DEFAULT]\nauth_strategy = noauth\ntransport_url = rabbit://guest:guest@127.0.0.1:5672/\n"
                    "service_plugins = router,port_forwarding,auto_allocate,qos,metering,segments,"
                    "trunk,network_segment_range\n"
                    f"[database]\nconnection = sqlite:///{tmp_path / 'n.sqlite'}\n"
                    "[ml2]\nextension_drivers = port_security,qos,dns\n"
                    "mechanism_drivers = openvswitch,l2population\n")
    code = ("import sys\nfrom neutrino.service import build_wsgi, make_conf\n"
            f"build_wsgi(make_conf(['--config-file', {str(conf)!r}]))\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('oslo_messaging', 'eventlet', 'dns')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_a_worker_loads_no_http_client_until_it_talks_to_another_service(
        tmp_path: Path) -> None:
    """keystoneauth and requests (for the compute service and Placement)
    were imported with the options, about 6 MB in the master and so in
    every API worker (issue 37 caps a worker at 80 MB after the bench);
    a worker that has nothing to tell them does without. Every service
    plugin, as ``make bench`` serves them and more."""
    conf = tmp_path / "n.conf"
    conf.write_text("[DEFAULT]\nauth_strategy = noauth\n"
                    "service_plugins = router,port_forwarding,auto_allocate,qos,metering,segments,"
                    "trunk,network_segment_range\n"
                    f"[database]\nconnection = sqlite:///{tmp_path / 'n.sqlite'}\n"
                    "[ml2]\nextension_drivers = port_security,qos,dns\n"
                    "mechanism_drivers = openvswitch,l2population\n")
    code = ("import sys\nimport neutrino.cmd.serve\n"
            "from neutrino.service import build_wsgi, make_conf\n"
            f"build_wsgi(make_conf(['--config-file', {str(conf)!r}]))\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & "
            "{'keystoneauth1', 'requests', 'urllib3'}))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_a_server_imports_no_other_commands_modules(tmp_path: Path) -> None:
    """``neutrino serve`` imports what serving the API needs; the agents',
    the all-in-one's, the audit's, the tracer's and the upstream importer's
    modules (about 1.4 MB) would be in every API worker forked from it, and
    issue 37 caps a worker at 80 MB after the bench."""
    conf = tmp_path / "n.conf"
    conf.write_text("[DEFAULT]\nauth_strategy = noauth\n"
                    "service_plugins = router,qos,segments,metering,trunk,port_forwarding\n"
                    f"[database]\nconnection = sqlite:///{tmp_path / 'n.sqlite'}\n"
                    "[ml2]\nextension_drivers = port_security,qos\n")
    code = ("import sys\nimport neutrino.cmd.main\nfrom neutrino.cmd import serve\n"
            "from neutrino.service import make_conf\n"
            f"serve.load_app(make_conf(['--config-file', {str(conf)!r}]))\n"
            "others = ('neutrino.agents', 'neutrino.aio', 'neutrino.cmd.agents', "
            "'neutrino.cmd.audit', 'neutrino.cmd.trace', 'neutrino.db.upstream')\n"
            "print(sorted(m for m in sys.modules if m.startswith(others)))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"


def _at_the_fork(tmp_path: Path, conf_text: str, probe: str) -> str:
    """What ``probe`` (an expression) gives in a master about to fork its
    workers (``serve.run`` up to ``Server.run``), ``conf_text`` its config."""
    conf = tmp_path / "n.conf"
    conf.write_text(conf_text + f"[database]\nconnection = sqlite:///{tmp_path / 'n.sqlite'}\n")
    code = ("import gc\nfrom neutrino.api.controller import Api\nfrom neutrino.cmd import serve\n"
            "from neutrino.service import make_conf\n"
            "def forking(self):\n"
            f"    print({probe})\n"
            "serve.Server.run = forking\n"
            f"serve.run(make_conf(['--config-file', {str(conf)!r}]))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()[-1]


def test_the_master_forks_its_workers_without_an_api_of_its_own(tmp_path: Path) -> None:
    """The master builds the API to refuse a bad configuration at start;
    each worker builds its own after the fork, so the master's, kept, was
    in every worker's memory besides its own (issue 37)."""
    assert _at_the_fork(
        tmp_path, "[DEFAULT]\nauth_strategy = noauth\n"
        "service_plugins = router,qos,segments,metering,trunk,port_forwarding\n"
        "[ml2]\nextension_drivers = port_security,qos\n",
        "sum(isinstance(o, Api) for o in gc.get_objects())") == "0"


def test_the_master_forks_its_workers_with_what_it_holds_frozen(tmp_path: Path) -> None:
    """A worker's collections walk every object they track, writing to
    each: the master's, inherited with the fork, were then copied page by
    page into every worker. Frozen in the master, they stay shared."""
    assert _at_the_fork(tmp_path, "[DEFAULT]\nauth_strategy = noauth\n",
                        "gc.get_freeze_count() > 10_000") == "True"


def test_a_new_sqlite_database_is_migrated_without_alembic_in_the_server(tmp_path: Path) -> None:
    """The all-in-one's database is upgraded in place at start, in a child
    process: Alembic and the scripts loaded in the server would be in every
    worker forked from it."""
    db = tmp_path / "n.sqlite"
    conf = tmp_path / "n.conf"
    conf.write_text(f"[DEFAULT]\nauth_strategy = noauth\n[database]\nconnection = sqlite:///{db}\n")
    code = ("import sys\nfrom neutrino.cmd.serve import check_schema\n"
            "from neutrino.db import migrate\nfrom neutrino.service import make_conf\n"
            f"check_schema(make_conf(['--config-file', {str(conf)!r}]))\n"
            f"print(migrate.is_current('sqlite:///{db}'), 'alembic' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "True False"


def test_a_failed_in_place_upgrade_stops_start_up(tmp_path: Path) -> None:
    """The child's failure is the server's: it does not start on a database
    it could not migrate (here one that has a table of the schema already,
    made by something else)."""
    with sqlite3.connect(tmp_path / "n.sqlite") as db:
        db.execute("CREATE TABLE networks (id TEXT)")
    done = _run_serve(tmp_path, f"[DEFAULT]\nauth_strategy = noauth\n"
                                f"[database]\nconnection = sqlite:///{tmp_path / 'n.sqlite'}\n")
    assert done.returncode != 0
    assert "upgrading the schema failed" in done.stderr, done.stderr

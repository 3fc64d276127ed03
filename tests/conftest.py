"""Shared fixtures: real servers in subprocesses, real databases.

Every server a test starts is a real ``neutrino serve`` process on a free
loopback port; every database is created for the test run and dropped
after it, on the machine's own PostgreSQL and MariaDB.
"""
from __future__ import annotations

import atexit
import contextlib
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Iterator

import pytest
import requests

ROOT = Path(__file__).resolve().parent.parent
PG_ADMIN_URL = os.environ.get("NEUTRINO_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")
MYSQL_HOST = os.environ.get("NEUTRINO_TEST_MYSQL_HOST", "127.0.0.1")
# Every database the suite opens, in-process or in the servers it starts,
# refuses a commit that changed a port's own child rows without its row
# (``neutrino/db/writes.py``: the row memo's rule).
os.environ.setdefault("NEUTRINO_CHECK_REVISIONS", "1")


# Servers' ports come from a range of each xdist worker's own, below the
# kernel's ephemeral range: a port the kernel hands out for "any port" is
# anyone's (another worker's next server, a client's outgoing connection)
# as soon as it is free again, and neutrino's workers bind with SO_REUSEPORT,
# so a second server on a port one stopped and is about to restart on binds
# without an error and takes half its connections.
PORT_SPAN = 4000
_WORKER = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").lstrip("gw") or 0)
_next_port = iter(range(random.randrange(PORT_SPAN), 1 << 30))


def free_port() -> int:
    base = 16000 + (_WORKER % 4) * PORT_SPAN
    for _ in range(PORT_SPAN):
        port = base + next(_next_port) % PORT_SPAN
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    raise RuntimeError(f"no free port in {base}-{base + PORT_SPAN - 1}")


def stop_process(proc: subprocess.Popen[bytes] | None, grace: float) -> None:
    """SIGTERM a process this suite started (unless gone), SIGKILL after ``grace`` seconds."""
    if proc is not None and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _at_head(db_url: str) -> bool:
    """The database's schema is the newest: a server's ``db upgrade`` (a
    process of its own, a second or two) would change nothing."""
    from neutrino.db import migrate
    try:
        return migrate.current(db_url) == migrate.newest_script()
    except Exception:  # no such database, no server: the upgrade says so
        return False


class Server:
    """A running ``neutrino serve``; ``url`` is its API root."""

    def __init__(self, tmp: Path, db_url: str | None = None, extra: str = "",
                 auth_strategy: str = "noauth", workers: int = 1,
                 env: dict[str, str] | None = None) -> None:
        self.env = {**os.environ, **(env or {})}
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.tmp = tmp
        self.conf = tmp / "neutron.conf"
        db_line = f"[database]\nconnection = {db_url}\n" if db_url else ""
        self.conf.write_text(
            f"[DEFAULT]\nbind_host = 127.0.0.1\nbind_port = {self.port}\n"
            f"auth_strategy = {auth_strategy}\napi_workers = {workers}\n"
            f"state_path = {tmp / 'var'}\n{extra}\n{db_line}")
        self.log = tmp / "server.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def command(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "neutrino.cmd.main", *args, "--config-file", str(self.conf)]

    def launch(self) -> subprocess.Popen[bytes]:
        """Start ``serve`` without waiting for it to answer (a test that
        signals it while it starts); ``start`` waits."""
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(self.command("serve"), stdout=log, stderr=log,
                                         cwd=self.tmp, env=self.env)
        return self.proc

    def start(self) -> "Server":
        found = re.search(r"^connection\s*=\s*(\S+)", self.conf.read_text(), re.MULTILINE)
        url = found.group(1) if found else None
        if url and "sqlite" not in url and not _at_head(url):
            subprocess.run(self.command("db", "upgrade"), check=True, capture_output=True,
                           env=self.env)
        self.proc = self.launch()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {self.log.read_text()[-3000:]}")
            try:
                requests.get(self.url + "/", timeout=1)
                return self
            except (requests.ConnectionError, requests.Timeout):
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("server did not start")

    def stop(self) -> None:
        stop_process(self.proc, 20)


# What the session server loads besides the core: as etc/neutrino-aio.conf.
SESSION_EXTRA = ("service_plugins = router,port_forwarding,conntrack_helper,ndp_proxy,auto_allocate,qos,"
                 "metering,segments,trunk,flavors,network_segment_range\n"
                 "[ml2]\nextension_drivers = port_security,qos\nmechanism_drivers = openvswitch\n"
                 # The admin client's one project makes networks, subnets, ports
                 # and RBAC entries for every test of the session (as in the
                 # conformance setup); quota tests run servers of their own.
                 "[quotas]\nquota_network = -1\nquota_subnet = -1\nquota_port = -1\n"
                 "quota_rbac_policy = -1\n")


def with_plugin(plugin: str) -> str:
    """The session server's configuration with ``plugin`` loaded too, first
    of its service plugins: a package's own server."""
    return SESSION_EXTRA.replace("service_plugins = ", f"service_plugins = {plugin},", 1)


def serving(tmp: Path, extra: str = SESSION_EXTRA) -> Iterator[Server]:
    """A noauth server on SQLite for a fixture to ``yield from``; stopped
    after, even after a failure."""
    srv = Server(tmp, extra=extra).start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One noauth server on SQLite shared by the API tests of a session."""
    yield from serving(tmp_path_factory.mktemp("server"))


class Client:
    """requests with identity headers, returning (status, json)."""

    def __init__(self, url: str, project: str | None = None, roles: str = "member",
                 user: str | None = None) -> None:
        self.url = url
        self.session = requests.Session()
        if project:
            self.session.headers.update({"X-Project-Id": project,
                                         "X-User-Id": user or f"user-{project}",
                                         "X-Roles": roles})

    def req(self, method: str, path: str, body: object = None, **kw: object):
        resp = self.session.request(method, self.url + path, json=body, timeout=30, **kw)
        try:
            data = resp.json() if resp.content else None
        except ValueError:
            data = resp.text
        return resp.status_code, data

    def get(self, path: str, **kw: object):
        return self.req("GET", path, **kw)

    def post(self, path: str, body: object, **kw: object):
        return self.req("POST", path, body, **kw)

    def put(self, path: str, body: object = None, **kw: object):
        return self.req("PUT", path, body, **kw)

    def delete(self, path: str, **kw: object):
        return self.req("DELETE", path, **kw)


@pytest.fixture
def admin(server: Server) -> Client:
    return Client(server.url)


@pytest.fixture
def project_id() -> str:
    return uuid.uuid4().hex


@pytest.fixture
def member(server: Server, project_id: str) -> Client:
    return Client(server.url, project_id, "member")


@pytest.fixture
def other(server: Server) -> Client:
    return Client(server.url, uuid.uuid4().hex, "member")


# -- databases -----------------------------------------------------------------

def _pg_create(template: str | None = None) -> tuple[str, object]:
    import psycopg
    name = f"neutrino_t_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))

    def drop() -> None:
        with psycopg.connect(PG_ADMIN_URL, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    return f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}", drop


def _mysql_create(scheme: str = "mysql") -> tuple[str, object]:
    """A fresh MariaDB database; ``mysql://`` is the URL an operator writes
    (mysqlclient), ``mysql+pymysql://`` the one neutron.conf often carries."""
    import pymysql
    name = f"neutrino_t_{uuid.uuid4().hex[:10]}"
    conn = pymysql.connect(host=MYSQL_HOST, user="root", password="", autocommit=True)
    with conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4")
    conn.close()

    def drop() -> None:
        c = pymysql.connect(host=MYSQL_HOST, user="root", password="", autocommit=True)
        with c.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS `{name}`")
        c.close()
    return f"{scheme}://root@{MYSQL_HOST}:3306/{name}", drop


def create_database(backend: str, tmp_path: Path) -> tuple[str, object]:
    """An empty database: ``sqlite``, ``postgresql``, ``mariadb`` (through
    mysqlclient) or ``mariadb-pymysql``."""
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 'test.sqlite'}", (lambda: None)
    if backend == "postgresql":
        return _pg_create()
    return _mysql_create("mysql+pymysql" if backend == "mariadb-pymysql" else "mysql")


@contextlib.contextmanager
def migrated_database(backend: str, tmp_path: Path) -> Iterator[str]:
    """``create_database``, migrated, dropped afterwards: a copy of this
    process's migrated template of the backend (``_Templates``)."""
    url, drop = _TEMPLATES.copy(backend, tmp_path)
    try:
        yield url
    finally:
        drop()  # type: ignore[operator]


class _Templates:
    """One database per backend migrated once per test process, copied for
    each test that asks for a migrated database: running the migrations
    took one to two seconds a database, a copy a fraction of that.
    SQLite copies the file, PostgreSQL creates from the template, MariaDB
    (which has no templates) runs the template's ``SHOW CREATE TABLE``
    statements and copies the rows the migrations wrote. The templates are
    dropped when the process exits."""

    def __init__(self) -> None:
        self._made: dict[str, tuple[str, object]] = {}
        self._mysql_script: dict[str, str] = {}

    def _template(self, backend: str) -> str:
        if backend not in self._made:
            from neutrino.db import migrate
            home = Path(tempfile.mkdtemp(prefix="neutrino-template-"))
            url, drop = create_database(backend, home)
            migrate.upgrade(url)
            def drop_all() -> None:
                drop()  # type: ignore[operator]
                shutil.rmtree(home, ignore_errors=True)
            self._made[backend] = (url, drop_all)
            if not self._made.keys() - {backend}:
                atexit.register(self.drop)
        return self._made[backend][0]

    def copy(self, backend: str, tmp_path: Path) -> tuple[str, object]:
        template = self._template(backend)
        if backend == "sqlite":
            url, drop = create_database(backend, tmp_path)
            shutil.copyfile(template.removeprefix("sqlite:///"), url.removeprefix("sqlite:///"))
            return url, drop
        if backend == "postgresql":
            return _pg_create(template=template.rsplit("/", 1)[1])
        url, drop = create_database(backend, tmp_path)
        self._mysql_fill(template.rsplit("/", 1)[1], url.rsplit("/", 1)[1])
        return url, drop

    def _mysql_fill(self, template: str, name: str) -> None:
        import pymysql
        from pymysql.constants import CLIENT
        if template not in self._mysql_script:
            conn = pymysql.connect(host=MYSQL_HOST, user="root", password="", database=template)
            with conn.cursor() as cur:
                cur.execute("SHOW FULL TABLES")
                tables = [name for name, kind in cur.fetchall() if kind == "BASE TABLE"]
                script = ["SET FOREIGN_KEY_CHECKS=0"]
                filled = []
                for table in tables:
                    cur.execute(f"SHOW CREATE TABLE `{table}`")
                    script.append(cur.fetchone()[1])
                    if cur.execute(f"SELECT 1 FROM `{table}` LIMIT 1"):
                        filled.append(table)
                script += [f"INSERT INTO `{table}` SELECT * FROM `{template}`.`{table}`"
                           for table in filled]
            conn.close()
            self._mysql_script[template] = ";\n".join([*script, "SET FOREIGN_KEY_CHECKS=1"])
        conn = pymysql.connect(host=MYSQL_HOST, user="root", password="", database=name,
                               autocommit=True, client_flag=CLIENT.MULTI_STATEMENTS)
        try:
            with conn.cursor() as cur:
                cur.execute(self._mysql_script[template])
                while cur.nextset():
                    pass
        finally:
            conn.close()

    def drop(self) -> None:
        for _, drop in self._made.values():
            with contextlib.suppress(Exception):
                drop()  # type: ignore[operator]
        self._made.clear()


_TEMPLATES = _Templates()


def pytest_unconfigure(config: pytest.Config) -> None:
    """The templates go when the test process ends (an xdist worker ends
    without running ``atexit``'s functions)."""
    _TEMPLATES.drop()


@pytest.fixture(params=["sqlite", "postgresql", "mariadb"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, migrated database on each backend."""
    with migrated_database(request.param, tmp_path) as url:
        yield url


@pytest.fixture(scope="session")
def upstream_neutron() -> Path:
    """Upstream Neutron 29's venv (its agents, server and versioned objects),
    built unless there: ``tests/upstream_venv.py``."""
    from tests import upstream_venv
    return upstream_venv.ensure()


# Modules that take minutes (emulated hosts, several servers, the all-in-one),
# longest first. pytest-xdist hands out whole files in collection order, so a
# long module collected last would leave the other worker idle at the end;
# starting them first lets the short files fill in around them.
LONG_MODULES = (
    "tests/fullstack/test_stack.py", "tests/scaleout/", "tests/aio/",
    "tests/guide/test_three_hosts.py",
    "tests/fullstack/test_ovs_agent.py", "tests/fullstack/test_metadata.py",
    "tests/fullstack/test_ovs_extras.py", "tests/lbagent/", "tests/fullstack/",
    "tests/l3host/", "tests/metering/", "tests/dhcpagent/",
    "tests/dbimport/test_upstream_import.py",
)


def _rank(item: pytest.Item) -> int:
    path = item.nodeid.split("::", 1)[0]
    for rank, prefix in enumerate(LONG_MODULES):
        if path.startswith(prefix):
            return rank
    return len(LONG_MODULES)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=_rank)  # stable: each module keeps its own order

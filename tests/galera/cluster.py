"""A three-node MariaDB Galera cluster of the test's own, on loopback.

Each node is a ``mariadbd`` from Debian's ``mariadb-server`` with the
``galera-4`` provider, its datadir, socket, configuration file and ports
in a temporary directory: nothing is shared with the machine's own MariaDB
(no ``/etc/mysql`` file is read, its socket and port are never used). The
first node bootstraps the cluster (``--wsrep-new-cluster``); the others
start from a copy of its datadir taken after a clean shutdown, so they
join at its position and receive only the few transactions since (an
incremental transfer), not a full copy. The nodes run as the ``mysql``
user, as Debian runs MariaDB: the state transfer script's rsync daemon,
started by root, would write as ``nobody``. Every process is stopped by
its PID.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pymysql

from tests.conftest import free_port
from tests.waiting import until, wait_for

PROVIDER = "/usr/lib/galera/libgalera_smm.so"
USER = "neutrino"  # over TCP, with a password: the way a deployment connects
PASSWORD = "galera-test"
OWNER = "mysql"  # the system user the nodes run as
START_TIMEOUT = 120.0


@dataclass
class Node:
    home: Path
    name: str
    port: int = field(default_factory=free_port)          # SQL
    gcomm_port: int = field(default_factory=free_port)    # group communication
    ist_port: int = field(default_factory=free_port)      # incremental state transfer
    sst_port: int = field(default_factory=free_port)      # full state transfer (rsync)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def datadir(self) -> Path:
        return self.home / "data"

    @property
    def socket(self) -> Path:
        return self.home / "mysqld.sock"

    @property
    def config(self) -> Path:
        return self.home / "my.cnf"

    @property
    def log(self) -> Path:
        return self.home / "mariadbd.log"

    def url(self, database: str) -> str:
        """The ``[database] connection`` of a server that writes to this node."""
        return f"mysql://{USER}:{PASSWORD}@127.0.0.1:{self.port}/{database}"

    def write_config(self, members: list["Node"]) -> None:
        cluster = ",".join(f"127.0.0.1:{m.gcomm_port}" for m in members)
        self.config.write_text(f"""\
[mysqld]
user = {OWNER}
datadir = {self.datadir}
socket = {self.socket}
pid-file = {self.home / 'mariadbd.pid'}
log-error = {self.log}
port = {self.port}
bind-address = 127.0.0.1
skip-name-resolve
performance_schema = OFF
innodb_buffer_pool_size = 64M
innodb_log_file_size = 16M
innodb_flush_log_at_trx_commit = 2
binlog_format = ROW
default_storage_engine = InnoDB
innodb_autoinc_lock_mode = 2
max_connections = 400
wsrep_on = ON
wsrep_provider = {PROVIDER}
wsrep_cluster_name = neutrino_test
wsrep_cluster_address = gcomm://{cluster}
wsrep_node_name = {self.name}
wsrep_node_address = 127.0.0.1:{self.gcomm_port}
wsrep_node_incoming_address = 127.0.0.1:{self.port}
wsrep_sst_receive_address = 127.0.0.1:{self.sst_port}
wsrep_provider_options = "base_port={self.gcomm_port};gmcast.listen_addr=tcp://127.0.0.1:{self.gcomm_port};ist.recv_addr=127.0.0.1:{self.ist_port};gcache.size=64M;gcache.recover=yes;pc.wait_prim_timeout=PT30S"
""")

    def install(self) -> None:
        subprocess.run(["mariadb-install-db", f"--defaults-file={self.config}",
                        "--auth-root-authentication-method=socket", "--skip-test-db"],
                       check=True, capture_output=True, timeout=120)

    def start(self, bootstrap: bool = False) -> None:
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                ["mariadbd", f"--defaults-file={self.config}",
                 *(["--wsrep-new-cluster"] if bootstrap else [])],
                stdout=log, stderr=log, start_new_session=True)

    def status(self, variable: str) -> str | None:
        """A ``wsrep_%`` status value, through the node's own socket."""
        try:
            conn = pymysql.connect(unix_socket=str(self.socket), user="root",
                                   connect_timeout=2)
        except pymysql.Error:
            return None
        try:
            with conn.cursor() as cur:
                cur.execute("SHOW GLOBAL STATUS LIKE %s", (variable,))
                row = cur.fetchone()
            return row[1] if row else None
        finally:
            conn.close()

    def synced(self) -> bool:
        if self.proc is not None and self.proc.poll() is not None:
            raise RuntimeError(f"{self.name} exited: {self.log.read_text()[-3000:]}")
        return self.status("wsrep_local_state_comment") == "Synced"

    def root(self) -> pymysql.Connection:
        return pymysql.connect(unix_socket=str(self.socket), user="root", autocommit=True)

    def stop(self) -> None:
        """SIGTERM by PID (a clean shutdown leaves the cluster), SIGKILL if it hangs."""
        if self.proc is None or self.proc.poll() is not None:
            return
        os.kill(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


class Cluster:
    """Three nodes; ``start`` returns when all three are Synced."""

    def __init__(self, home: Path, size: int = 3) -> None:
        self.nodes = [Node(home / f"node{n}", f"node{n}") for n in range(1, size + 1)]

    def start(self) -> "Cluster":
        for node in self.nodes:
            node.home.mkdir(parents=True)
            node.write_config(self.nodes)
            _own(node.home)
        first, *others = self.nodes
        first.install()
        first.start(bootstrap=True)
        until(first.synced, timeout=START_TIMEOUT, interval=0.3)
        with first.root() as conn, conn.cursor() as cur:
            for host in ("127.0.0.1", "localhost"):
                cur.execute(f"CREATE USER '{USER}'@'{host}' IDENTIFIED BY '{PASSWORD}'")
                cur.execute(f"GRANT ALL PRIVILEGES ON *.* TO '{USER}'@'{host}'")
        first.stop()  # records its position in grastate.dat
        for node in others:
            shutil.copytree(first.datadir, node.datadir)
            _own(node.home)
        first.start(bootstrap=True)
        until(first.synced, timeout=START_TIMEOUT, interval=0.3)
        for node in others:
            node.start()
        for node in others:
            until(node.synced, timeout=START_TIMEOUT, interval=0.3)
        size = wait_for(lambda: first.status("wsrep_cluster_size") == str(len(self.nodes)))
        assert size, "the nodes did not form one cluster"
        return self

    def create_database(self, name: str) -> None:
        with self.nodes[0].root() as conn, conn.cursor() as cur:
            cur.execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4")

    def conflicts(self) -> int:
        """Transactions that lost to another node's so far: certification
        failures and those aborted for a replicated one (both are 1213 to
        the client)."""
        return sum(int(node.status(name) or 0) for node in self.nodes
                   for name in ("wsrep_local_cert_failures", "wsrep_local_bf_aborts"))

    def drop_database(self, name: str) -> None:
        with self.nodes[0].root() as conn, conn.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS `{name}`")

    def stop(self) -> None:
        """The joiners first, the bootstrap node last."""
        for node in reversed(self.nodes):
            node.stop()


def _own(path: Path) -> None:
    """Give ``path`` and all under it to ``OWNER``."""
    for entry in [path, *path.rglob("*")]:
        shutil.chown(entry, OWNER, OWNER)


def available() -> str | None:
    """Why the cluster cannot run here, or None."""
    if not os.path.exists(PROVIDER):
        return f"no Galera provider at {PROVIDER} (Debian package galera-4)"
    for tool in ("mariadbd", "mariadb-install-db", "rsync"):
        if shutil.which(tool) is None:
            return f"{tool} not found (Debian package mariadb-server)"
    return None

"""``docs/operators-guide.md``, "Upgrading neutrino in place".

The guide's claim is proven twice. Statically: every migration after the
boundary the guide names only adds (tables, columns that may stay empty,
indexes), and the boundary itself does not, so the guide names the newest
one that matters. Live: a server of the previous release (this
repository's newest commit whose schema head is older than ours, taken from
git) serves a PostgreSQL (and a MariaDB) database while the guide's ``neutrino db
upgrade`` brings it to our head; it keeps creating and showing resources,
then the guide's ``neutrino serve`` replaces it and sees everything.
"""
from __future__ import annotations

import ast
import os
import re
import shlex
import subprocess
import sys
import tarfile
from io import BytesIO
from pathlib import Path
from typing import Iterator

import pytest

from neutrino.db import migrate
from tests.conftest import ROOT, Client, create_database, free_port, stop_process
from tests.guide.blocks import GUIDE, Session, guide_blocks, wait_up

VERSIONS = migrate.MIGRATIONS / "versions"
# What an upgrade() may call and still only add to the schema.
ADDING = {"create_table", "create_index", "add_column", "create_foreign_key",
          "batch_alter_table", "f", "get_bind", "execute"}
# Column and SQL-expression builders inside those calls.
BUILDERS = {"Column", "ForeignKey", "ForeignKeyConstraint", "PrimaryKeyConstraint",
            "UniqueConstraint", "Index", "String", "Boolean", "Integer", "BigInteger",
            "DateTime", "Text", "Enum", "SmallInteger", "text", "true", "false",
            "Float", "CheckConstraint", "LargeBinary", "Numeric", "Date", "JSON"}
# Plain Python the scripts' helpers use to build those arguments.
PLAIN = {"tuple", "list", "dict", "zip", "range", "len", "join", "format", "replace"}


def _scripts() -> list[Path]:
    return sorted(p for p in VERSIONS.glob("[0-9]*.py"))


def _functions(path: Path) -> dict[str, ast.FunctionDef]:
    """The script's module-level functions (upgrade() and its helpers)."""
    return {node.name: node for node in ast.parse(path.read_text()).body
            if isinstance(node, ast.FunctionDef)}


def _calls(path: Path) -> list[ast.Call]:
    """Every call upgrade() makes, through the script's own helpers."""
    functions = _functions(path)
    assert "upgrade" in functions, f"{path.name} has no upgrade()"
    seen, todo, calls = {"upgrade"}, [functions["upgrade"]], []
    while todo:
        for node in ast.walk(todo.pop()):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", None)
            if name in functions and name not in seen:
                seen.add(name)
                todo.append(functions[name])
            elif name not in functions:
                calls.append(node)
    return calls


def _not_adding(path: Path) -> list[str]:
    """What ``path``'s upgrade() does besides adding to the schema."""
    calls = _calls(path)
    added = [node for call in calls
             if isinstance(call.func, ast.Attribute) and call.func.attr == "add_column"
             for arg in call.args for node in ast.walk(arg)]
    found = []
    for call in calls:
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "?")
        if name not in ADDING | BUILDERS | PLAIN:
            found.append(name)
        elif name == "execute":
            sql = call.args[0] if call.args else None
            text = sql.value if isinstance(sql, ast.Constant) else None
            if not (isinstance(text, str) and re.match(r"ALTER TABLE \w+ ADD COLUMN ", text)):
                found.append(f"execute {ast.unparse(call.args[0]) if call.args else ''}")
        elif name == "Column" and any(node is call for node in added):
            # a column of an existing table: rows the old release inserts leave it out
            kw = {k.arg: k.value for k in call.keywords}
            nullable = kw.get("nullable")
            if (isinstance(nullable, ast.Constant) and nullable.value is False
                    and "server_default" not in kw):
                found.append("add_column NOT NULL without a default")
    return found


def _guide_boundary() -> str:
    found = re.search(r"if the command\s+prints `(\d{4}_\w+)` or a newer revision",
                      GUIDE.read_text())
    assert found, "the guide's upgrade section names no boundary revision"
    return found.group(1)


def test_every_migration_after_the_guides_boundary_only_adds() -> None:
    boundary = _guide_boundary()
    stems = [p.stem for p in _scripts()]
    assert boundary in stems, boundary
    after = [p for p in _scripts() if p.stem > boundary]
    contracting = {p.stem: _not_adding(p) for p in after if _not_adding(p)}
    assert not contracting, (
        f"these migrations do more than add, so upgrading past them with servers of the "
        f"previous release running is not safe: say so in docs/operators-guide.md: "
        f"{contracting}")
    # the guide names the newest boundary, not an over-cautious older one
    assert _not_adding(VERSIONS / f"{boundary}.py"), boundary
    # the examples the guide gives of older, contracting migrations are such
    section = GUIDE.read_text().split("## Upgrading neutrino in place", 1)[1]
    for named in set(re.findall(r"`(\d{4}_\w+)`", section)):
        assert _not_adding(VERSIONS / f"{named}.py"), named


def _previous_release(dest: Path) -> tuple[Path, str]:
    """neutrino's package as of the newest commit (first parents from here)
    whose schema head is older than ours, and that head."""
    head = migrate.newest_script()

    def git(*args: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, timeout=60)
    listed = git("log", "--first-parent", "--format=%H", "--", "neutrino/db/migrations/versions")
    if listed.returncode != 0:
        pytest.skip("needs the repository's history (git) for the previous release")
    for commit in listed.stdout.decode().split():
        names = git("ls-tree", "--name-only", commit,
                    "neutrino/db/migrations/versions/").stdout.decode().split()
        stems = [Path(n).stem for n in names if re.match(r".*/\d{4}_\w+\.py$", n)]
        if stems and max(stems) < head:
            archive = git("archive", "--format=tar", commit, "neutrino")
            assert archive.returncode == 0, archive.stderr
            with tarfile.open(fileobj=BytesIO(archive.stdout)) as tar:
                tar.extractall(dest, filter="data")
            return dest, max(stems)
    pytest.skip("no commit with an older schema head in this repository's history")


@pytest.fixture(params=["postgresql", "mariadb"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    url, drop = create_database(request.param, tmp_path)
    try:
        yield url
    finally:
        drop()  # type: ignore[operator]


def test_a_server_of_the_previous_release_keeps_serving_while_the_database_is_upgraded(
        database: str, tmp_path: Path) -> None:
    previous, old_head = _previous_release(tmp_path / "previous")
    new_head = migrate.newest_script()
    port = free_port()
    etc = tmp_path / "etc"
    etc.mkdir()
    (etc / "neutron.conf").write_text(
        f"[DEFAULT]\nbind_host = 127.0.0.1\nbind_port = {port}\napi_workers = 1\n"
        f"auth_strategy = noauth\nservice_plugins = router\nstate_path = {tmp_path / 'var'}\n"
        f"[database]\nconnection = {database}\n")
    blocks = guide_blocks()
    session = Session(tmp_path, [("/etc/neutron", str(etc))])
    url = f"http://127.0.0.1:{port}"
    # the previous release: its package first on the path, run from outside this tree
    old_env = {**session.env, "PYTHONPATH": str(previous)}
    old = [sys.executable, "-m", "neutrino.cmd.main"]
    conf = ["--config-file", str(etc / "neutron.conf")]
    made = subprocess.run([*old, "db", "upgrade", *conf], capture_output=True, text=True,
                          cwd=tmp_path, env=old_env, timeout=300)
    assert made.stdout.strip() == f"database at {old_head}", (made.stdout, made.stderr)

    serve = shlex.split(session.text(blocks["upgrade-serve"][1]).strip())
    assert serve[:2] == ["neutrino", "serve"], serve
    # the new release refuses the old schema, naming the command that fixes it
    refused = subprocess.run(serve, capture_output=True, text=True, cwd=tmp_path,
                             env=session.env, timeout=120)
    assert refused.returncode != 0
    assert "neutrino db upgrade" in refused.stdout + refused.stderr, refused

    admin = Client(url, roles="admin")
    log = tmp_path / "old-server.log"
    with open(log, "ab") as out:
        server = subprocess.Popen([*old, "serve", *conf], stdout=out, stderr=out,
                                  cwd=tmp_path, env=old_env)
    try:
        wait_up(f"{url}/", server, log)
        before = _network(admin, "before", "10.20.1.0/24")
        assert session.run(blocks["upgrade-current"][1]).strip() == old_head
        upgraded = session.run(blocks["upgrade-db"][1])
        assert upgraded.strip() == f"database at {new_head}", upgraded
        # the previous release's server still creates, shows and lists
        during = _network(admin, "during", "10.20.2.0/24")
        first = _port(admin, during)
        assert admin.get(f"/v2.0/networks/{before}")[0] == 200
        assert _names(admin) == {"before", "during"}
        assert server.poll() is None, log.read_text()[-3000:]
        server.terminate()
        assert server.wait(60) == 0, log.read_text()[-3000:]

        log = tmp_path / "new-server.log"
        with open(log, "ab") as out:
            server = subprocess.Popen(serve, stdout=out, stderr=out, cwd=tmp_path,
                                      env=session.env)
        wait_up(f"{url}/", server, log)
        assert _names(admin) == {"before", "during"}
        second = _port(admin, during)  # the same pool, no collision
        assert second != first
        _network(admin, "after", "10.20.3.0/24")
        assert _names(admin) == {"before", "during", "after"}
    finally:
        stop_process(server, 60)
    assert os.path.exists(log)


def _network(admin: Client, name: str, cidr: str) -> str:
    status, net = admin.post("/v2.0/networks", {"network": {"name": name}})
    assert status == 201, net
    status, sub = admin.post("/v2.0/subnets", {"subnet": {
        "network_id": net["network"]["id"], "ip_version": 4, "cidr": cidr}})
    assert status == 201, sub
    return str(net["network"]["id"])


def _port(admin: Client, network_id: str) -> str:
    status, port = admin.post("/v2.0/ports", {"port": {"network_id": network_id}})
    assert status == 201, port
    return str(port["port"]["fixed_ips"][0]["ip_address"])


def _names(admin: Client) -> set[str]:
    status, body = admin.get("/v2.0/networks")
    assert status == 200, body
    return {n["name"] for n in body["networks"]}

"""A real Keystone for the keystone-auth tests, and a neutrino behind it.

Keystone comes from PyPI into its own virtualenv, ``.venv-keystone`` at the
top of the work tree, built and reused as ``tests/pypi_service.py`` says.
A failed install fails the tests -- it never skips them.

``keystone-manage`` imports all of Keystone for each sub-command, so the
one-time part of the set-up (``db_sync``, ``fernet_setup``,
``credential_setup``, ``bootstrap``) is done once into
``.venv-keystone/state-template`` and copied for every run.  The template
holds the admin user, project and the roles bootstrap makes (admin ⇒
manager ⇒ member ⇒ reader, and service) but no endpoint, since the port is
only known at run time; the run adds the identity service and its
endpoints through the v3 API.

Each run serves Keystone from a temporary directory (SQLite database, keys,
logs) with gunicorn from the Keystone venv (``pypi_service.Gunicorn``).

Build or rebuild by hand: ``.venv/bin/python tests/keystone/conftest.py``.
"""
from __future__ import annotations

import grp
import os
import pwd
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import pytest
import requests

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # when run as a script
    sys.path.insert(0, str(ROOT))

from tests.conftest import Server  # noqa: E402
from tests.pypi_service import (  # noqa: E402
    GUNICORN,
    Gunicorn,
    PypiVenv,
    ServiceSetupError,
    authtoken_section,
    run,
)

KEYSTONE_VERSION = os.environ.get("NEUTRINO_TEST_KEYSTONE_VERSION", "30.0.0")
KS_VENV = Path(os.environ.get("NEUTRINO_TEST_KEYSTONE_VENV", ROOT / ".venv-keystone"))
TEMPLATE = KS_VENV / "state-template"
TEMPLATE_STAMP = TEMPLATE / ".neutrino-stamp"

REGION = "RegionOne"
ADMIN_USER, ADMIN_PROJECT = "admin", "admin"
SERVICE_USER, SERVICE_PROJECT = "neutron", "service"
PASSWORD = "secret"


class KeystoneSetupError(ServiceSetupError):
    """Keystone could not be installed or started: the tests fail."""


VENV = PypiVenv(KS_VENV, (f"keystone=={KEYSTONE_VERSION}", GUNICORN), KeystoneSetupError,
                upgrade=("pip", "setuptools", "wheel"))


def _write_conf(state: Path) -> Path:
    conf = state / "keystone.conf"
    conf.write_text(f"""\
[DEFAULT]
log_file = {state / 'keystone.log'}
debug = False

[database]
connection = sqlite:///{state / 'keystone.db'}

[token]
provider = fernet

[fernet_tokens]
key_repository = {state / 'fernet-keys'}

[fernet_receipts]
key_repository = {state / 'fernet-keys'}

[credential]
key_repository = {state / 'credential-keys'}

[identity]
# test-only Keystone: cheap bcrypt (Keystone's minimum is 4)
password_hash_rounds = 4
""")
    return conf


def _build_template() -> None:
    """db_sync, keys and bootstrap, once: every run starts from a copy."""
    work = TEMPLATE.with_name(TEMPLATE.name + ".new")
    shutil.rmtree(work, ignore_errors=True)
    (work / "fernet-keys").mkdir(parents=True)
    (work / "credential-keys").mkdir()
    conf = _write_conf(work)
    manage = [str(KS_VENV / "bin" / "keystone-manage"), "--config-file", str(conf)]
    owner = ["--keystone-user", pwd.getpwuid(os.getuid()).pw_name,
             "--keystone-group", grp.getgrgid(os.getgid()).gr_name]
    run([*manage, "db_sync"], "keystone-manage db_sync", KeystoneSetupError)
    run([*manage, "fernet_setup", *owner], "keystone-manage fernet_setup", KeystoneSetupError)
    run([*manage, "credential_setup", *owner], "keystone-manage credential_setup",
        KeystoneSetupError)
    run([*manage, "bootstrap", "--bootstrap-username", ADMIN_USER,
         "--bootstrap-password", PASSWORD, "--bootstrap-project-name", ADMIN_PROJECT,
         "--bootstrap-role-name", "admin", "--bootstrap-region-id", REGION],
        "keystone-manage bootstrap", KeystoneSetupError)
    (work / "keystone.conf").unlink()
    for log in work.glob("keystone.log*"):
        log.unlink()
    (work / ".neutrino-stamp").write_text(VENV.stamp_text)
    shutil.rmtree(TEMPLATE, ignore_errors=True)
    work.rename(TEMPLATE)


def ensure_keystone_venv() -> None:
    """Build (or rebuild) the Keystone venv and state template if not current."""
    VENV.ensure(then=_ensure_template)


def _ensure_template() -> None:
    if not (TEMPLATE_STAMP.is_file() and TEMPLATE_STAMP.read_text() == VENV.stamp_text):
        _build_template()


@dataclass
class Identity:
    """A user with a project-scoped token."""
    name: str
    user_id: str
    project_id: str
    token: str
    roles: list[str] = field(default_factory=list)  # as the token carries them

    def headers(self) -> dict[str, str]:
        return {"X-Auth-Token": self.token}


class Keystone(Gunicorn):
    """A running Keystone (gunicorn, one worker) on a free loopback port."""

    name, service_log = "keystone", "keystone.log"

    def __init__(self, state: Path) -> None:
        super().__init__(VENV, state)
        self.admin_token = ""

    def start(self) -> "Keystone":
        shutil.copytree(TEMPLATE, self.state, dirs_exist_ok=True)
        for keys in ("fernet-keys", "credential-keys"):  # Keystone insists on 0700
            os.chmod(self.state / keys, 0o700)
        _write_conf(self.state)
        # Keystone's oslo.config would parse gunicorn's command line as its own
        (self.state / "keystone_app.py").write_text(
            "import sys\nsys.argv = sys.argv[:1]\n"
            "from keystone.server.wsgi import initialize_public_application\n"
            "application = initialize_public_application()\n")
        self.serve("keystone_app:application", {"OS_KEYSTONE_CONFIG_DIR": str(self.state)},
                   lambda: requests.get(self.url + "/v3", timeout=5).status_code == 200)
        return self

    # -- v3 API ---------------------------------------------------------------

    def call(self, method: str, path: str, body: Any = None, token: str | None = None,
             expect: int | tuple[int, ...] = (200, 201, 204)) -> requests.Response:
        headers = {"X-Auth-Token": token if token is not None else self.admin_token}
        resp = requests.request(method, f"{self.url}/v3{path}", json=body, headers=headers,
                                timeout=60)
        ok = (expect,) if isinstance(expect, int) else expect
        if resp.status_code not in ok:
            raise KeystoneSetupError(f"{method} /v3{path} -> {resp.status_code}: {resp.text}")
        return resp

    def issue_token(self, user: str, password: str, project_id: str | None = None,
                    project_name: str | None = None) -> tuple[str, dict[str, Any]]:
        """Password auth scoped to a project; returns (token, token body)."""
        project: dict[str, Any] = ({"id": project_id} if project_id else
                                   {"name": project_name, "domain": {"id": "default"}})
        body = {"auth": {
            "identity": {"methods": ["password"], "password": {"user": {
                "name": user, "domain": {"id": "default"}, "password": password}}},
            "scope": {"project": project}}}
        resp = self.call("POST", "/auth/tokens", body, token="", expect=201)
        return resp.headers["X-Subject-Token"], resp.json()["token"]

    def login(self, user: str, password: str, project_id: str) -> Identity:
        token, data = self.issue_token(user, password, project_id=project_id)
        return Identity(user, data["user"]["id"], data["project"]["id"], token,
                        sorted(r["name"] for r in data["roles"]))

    def role_id(self, name: str) -> str:
        roles = self.call("GET", f"/roles?name={name}").json()["roles"]
        if roles:
            return roles[0]["id"]
        return self.call("POST", "/roles", {"role": {"name": name}}).json()["role"]["id"]

    def create_project(self, name: str) -> str:
        return self.call("POST", "/projects", {"project": {
            "name": name, "domain_id": "default"}}).json()["project"]["id"]

    def create_user(self, name: str, project_id: str, *roles: str) -> str:
        user_id = self.call("POST", "/users", {"user": {
            "name": name, "domain_id": "default", "password": PASSWORD,
            "default_project_id": project_id}}).json()["user"]["id"]
        for role in roles:
            self.call("PUT", f"/projects/{project_id}/users/{user_id}/roles/{self.role_id(role)}")
        return user_id

    def imply(self, prior: str, implied: str) -> None:
        self.call("PUT", f"/roles/{self.role_id(prior)}/implies/{self.role_id(implied)}", expect=201)

    def bootstrap_catalog(self) -> None:
        """The admin token, and the identity endpoints keystonemiddleware looks up."""
        self.admin_token, _ = self.issue_token(ADMIN_USER, PASSWORD, project_name=ADMIN_PROJECT)
        service = self.call("POST", "/services", {"service": {
            "type": "identity", "name": "keystone"}}).json()["service"]["id"]
        for interface in ("public", "internal", "admin"):
            self.call("POST", "/endpoints", {"endpoint": {
                "service_id": service, "interface": interface, "region_id": REGION,
                "url": f"{self.url}/v3/"}})


@dataclass
class Cloud:
    """Keystone, its users and their tokens, and a neutrino behind it."""
    keystone: Keystone
    neutrino: Server
    admin: Identity
    member_a: Identity
    member_b: Identity
    reader_a: Identity
    project_a: str
    project_b: str

    @property
    def url(self) -> str:
        return self.neutrino.url


@pytest.fixture(scope="session")
def keystone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Keystone]:
    ensure_keystone_venv()
    ks = Keystone(tmp_path_factory.mktemp("keystone")).start()
    try:
        ks.bootstrap_catalog()
        yield ks
    finally:
        ks.stop()


def authtoken(ks: Keystone) -> str:
    """The ``[keystone_authtoken]`` section of a neutrino behind ``ks``."""
    return authtoken_section(ks.url, SERVICE_USER, PASSWORD, SERVICE_PROJECT, REGION)


@pytest.fixture(scope="session")
def cloud(keystone: Keystone, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cloud]:
    ks = keystone
    service = ks.create_project(SERVICE_PROJECT)
    ks.create_user(SERVICE_USER, service, "admin", "service")
    project_a, project_b = ks.create_project("project-a"), ks.create_project("project-b")
    ks.create_user("member-of-a", project_a, "member")
    ks.create_user("member-of-b", project_b, "member")
    ks.create_user("reader-of-a", project_a, "reader")
    admin_project = ks.call("GET", f"/projects?name={ADMIN_PROJECT}").json()["projects"][0]["id"]
    srv = Server(tmp_path_factory.mktemp("neutrino-keystone"), auth_strategy="keystone",
                 extra=authtoken(ks)).start()
    try:
        yield Cloud(
            keystone=ks, neutrino=srv,
            admin=ks.login(ADMIN_USER, PASSWORD, admin_project),
            member_a=ks.login("member-of-a", PASSWORD, project_a),
            member_b=ks.login("member-of-b", PASSWORD, project_b),
            reader_a=ks.login("reader-of-a", PASSWORD, project_a),
            project_a=project_a, project_b=project_b)
    finally:
        srv.stop()


if __name__ == "__main__":
    started = time.monotonic()
    ensure_keystone_venv()
    print(f"{KS_VENV} ready (keystone {KEYSTONE_VERSION}) in {time.monotonic() - started:.0f} s")

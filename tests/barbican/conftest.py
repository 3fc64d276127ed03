"""A real Barbican behind the real Keystone of tests/keystone: the
key-manager service of its catalog, for the certificate store's tests.

Barbican comes from PyPI into its own virtualenv, ``.venv-barbican`` at the
top of the work tree, built and reused as ``tests/pypi_service.py`` says. A
failed install fails the tests, unless PyPI cannot be reached at all (then
they are skipped, saying so).

Each run serves Barbican's API alone (no worker, no keystone listener) from
a temporary directory: SQLite, the ``simple_crypto`` plugin with a key made
for the run, keystonemiddleware validating tokens against the Keystone
fixture with a service user of its own, gunicorn from the Barbican venv with
one sync worker on a free loopback port (``pypi_service.Gunicorn``).
Barbican's configuration is found through ``HOME``
(``~/.barbican/barbican.conf``, where oslo.config looks), since its modules
parse their configuration again as they are imported.

Build by hand: ``.venv/bin/python tests/barbican/conftest.py``.
"""
from __future__ import annotations

import base64
import os
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest
import requests

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # when run as a script
    sys.path.insert(0, str(ROOT))

from tests.keystone.conftest import (  # noqa: E402,F401 - the Keystone fixture
    PASSWORD,
    REGION,
    Identity,
    Keystone,
    KeystoneSetupError,
    keystone,
)
from tests.pypi_service import (  # noqa: E402
    GUNICORN,
    Gunicorn,
    PypiUnreachable,
    PypiVenv,
    authtoken_section,
)

BARBICAN_VERSION = os.environ.get("NEUTRINO_TEST_BARBICAN_VERSION", "23.0.0")
BB_VENV = Path(os.environ.get("NEUTRINO_TEST_BARBICAN_VENV", ROOT / ".venv-barbican"))
VENV = PypiVenv(BB_VENV, (f"barbican=={BARBICAN_VERSION}", GUNICORN), KeystoneSetupError,
                skip_unreachable=True)


def ensure_barbican_venv() -> None:
    """Build (or rebuild) the Barbican venv if not current."""
    VENV.ensure()


APP = """\
import sys
sys.argv = sys.argv[:1]
from paste import deploy
application = deploy.loadapp("config:%s")
"""
# Barbican's own paste pipeline, keystonemiddleware in front of the v1 API
PASTE = """\
[composite:main]
use = egg:Paste#urlmap
/: barbican_version
/v1: barbican-api-keystone

[pipeline:barbican_version]
pipeline = request_id http_proxy_to_wsgi microversion versionapp

[pipeline:barbican-api-keystone]
pipeline = request_id http_proxy_to_wsgi authtoken context microversion apiapp

[app:apiapp]
paste.app_factory = barbican.api.app:create_main_app

[app:versionapp]
paste.app_factory = barbican.api.app:create_version_app

[filter:context]
paste.filter_factory = barbican.api.middleware.context:ContextMiddleware.factory

[filter:microversion]
paste.filter_factory = barbican.api.middleware.microversion:MicroversionMiddleware.factory

[filter:authtoken]
paste.filter_factory = keystonemiddleware.auth_token:filter_factory

[filter:request_id]
paste.filter_factory = oslo_middleware.request_id:RequestId.factory

[filter:http_proxy_to_wsgi]
paste.filter_factory = oslo_middleware:HTTPProxyToWSGI.factory
"""


class Barbican(Gunicorn):
    """A running Barbican API (gunicorn, one worker) on a free loopback port."""

    name, service_log = "barbican", "barbican.log"

    def __init__(self, state: Path, keystone: Keystone, user: str, project: str) -> None:
        super().__init__(VENV, state)
        self.keystone, self.user, self.project = keystone, user, project

    def _write_conf(self) -> None:
        kek = base64.urlsafe_b64encode(os.urandom(32)).decode()
        home = self.state / ".barbican"
        home.mkdir(parents=True, exist_ok=True)
        (home / "barbican.conf").write_text(f"""\
[DEFAULT]
host_href = {self.url}
log_file = {self.state / 'barbican.log'}
db_auto_create = True

[database]
connection = sqlite:///{self.state / 'barbican.sqlite'}

[secretstore]
enabled_secretstore_plugins = store_crypto

[crypto]
enabled_crypto_plugins = simple_crypto

[simple_crypto_plugin]
kek = {kek}
""" + authtoken_section(self.keystone.url, self.user, PASSWORD, self.project, REGION))
        (self.state / "barbican-api-paste.ini").write_text(PASTE)
        (self.state / "barbican_app.py").write_text(
            APP % (self.state / "barbican-api-paste.ini"))

    def start(self) -> "Barbican":
        self._write_conf()
        self.serve("barbican_app:application", {"HOME": str(self.state)},
                   lambda: requests.get(self.url + "/v1/secrets", timeout=5).status_code == 401)
        return self

    def register(self) -> None:
        """The key-manager service and its endpoints in Keystone's catalog."""
        ks = self.keystone
        service = ks.call("POST", "/services", {"service": {
            "type": "key-manager", "name": "barbican"}}).json()["service"]["id"]
        for interface in ("public", "internal", "admin"):
            ks.call("POST", "/endpoints", {"endpoint": {
                "service_id": service, "interface": interface, "region_id": REGION,
                "url": self.url}})


@pytest.fixture(scope="session")
def barbican(keystone: Keystone,  # noqa: F811
             tmp_path_factory: pytest.TempPathFactory) -> Iterator[Barbican]:
    try:
        ensure_barbican_venv()
    except PypiUnreachable as exc:
        pytest.skip(str(exc))
    suffix = uuid.uuid4().hex[:8]
    project = keystone.create_project(f"barbican-service-{suffix}")
    user = f"barbican-{suffix}"
    keystone.create_user(user, project, "admin", "service")
    bb = Barbican(tmp_path_factory.mktemp("barbican"), keystone, user,
                  f"barbican-service-{suffix}").start()
    try:
        bb.register()
        yield bb
    finally:
        bb.stop()


@dataclass
class Users:
    """Members of projects a and b; the service user neutrino reads Barbican with."""
    a: Identity
    b: Identity
    service_user: str
    service_project: str


@pytest.fixture(scope="module")
def users(keystone: Keystone, barbican: Barbican) -> Users:  # noqa: F811
    suffix = uuid.uuid4().hex[:8]
    a, b = (keystone.create_project(f"tls-{x}-{suffix}") for x in "ab")
    keystone.create_user(f"tls-a-{suffix}", a, "member")
    keystone.create_user(f"tls-b-{suffix}", b, "member")
    service_project = f"tls-service-{suffix}"
    keystone.create_user(f"neutrino-{suffix}", keystone.create_project(service_project),
                         "admin", "service")
    return Users(keystone.login(f"tls-a-{suffix}", PASSWORD, a),
                 keystone.login(f"tls-b-{suffix}", PASSWORD, b),
                 f"neutrino-{suffix}", service_project)


def authtoken(keystone: Keystone, users: Users) -> str:
    """neutron.conf's ``[keystone_authtoken]``: the credentials the store reads with."""
    return authtoken_section(keystone.url, users.service_user, PASSWORD,
                             users.service_project, REGION)


if __name__ == "__main__":
    started = time.monotonic()
    ensure_barbican_venv()
    print(f"{BB_VENV} ready (barbican {BARBICAN_VERSION}) in {time.monotonic() - started:.0f} s")

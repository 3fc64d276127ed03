"""A real Placement for the placement report tests.

Placement comes from PyPI into its own virtualenv, ``.venv-placement`` at
the top of the work tree, built and reused as ``tests/pypi_service.py``
says; a failed install fails the tests, never skips them. Each run serves
Placement with gunicorn from that venv (``pypi_service.Gunicorn``) with a
SQLite database of its own made at start-up (``sync_on_startup``) and
``auth_strategy = noauth2``: a request's ``X-Auth-Token`` names its user,
``admin`` is an admin.

Build by hand: ``.venv/bin/python tests/placement/conftest.py``.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
import requests

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # when run as a script
    sys.path.insert(0, str(ROOT))

from tests.pypi_service import GUNICORN, Gunicorn, PypiVenv, ServiceSetupError  # noqa: E402

PLACEMENT_VERSION = os.environ.get("NEUTRINO_TEST_PLACEMENT_VERSION", "16.0.0")
MICROVERSION = "placement 1.37"


class PlacementSetupError(ServiceSetupError):
    """Placement could not be installed or started: the tests fail."""


VENV = PypiVenv(Path(os.environ.get("NEUTRINO_TEST_PLACEMENT_VENV", ROOT / ".venv-placement")),
                (f"openstack-placement=={PLACEMENT_VERSION}", GUNICORN), PlacementSetupError,
                upgrade=("pip",))


def ensure_placement_venv() -> None:
    """Build (or rebuild) the venv unless current."""
    VENV.ensure()


class Placement(Gunicorn):
    """A running Placement; ``call`` talks to it as its admin."""

    name = "placement"

    def __init__(self, state: Path) -> None:
        super().__init__(VENV, state)
        self.session = requests.Session()
        self.session.headers.update({"X-Auth-Token": "admin",
                                     "OpenStack-API-Version": MICROVERSION})

    def start(self) -> "Placement":
        (self.state / "placement.conf").write_text(
            "[DEFAULT]\ndebug = False\n[api]\nauth_strategy = noauth2\n"
            f"[placement_database]\nconnection = sqlite:///{self.state / 'placement.db'}\n"
            "sync_on_startup = True\n")
        self.serve("placement.wsgi.api:application",
                   {"OS_PLACEMENT_CONFIG_DIR": str(self.state)},
                   lambda: self.session.get(self.url + "/resource_providers", timeout=2).ok,
                   wait=120)
        return self

    def call(self, method: str, path: str, body: Any = None) -> Any:
        resp = self.session.request(method, self.url + path, json=body, timeout=30)
        assert resp.status_code < 400, (method, path, resp.status_code, resp.text)
        return resp.json() if resp.content else None


@pytest.fixture(scope="module")
def placement(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Placement]:
    ensure_placement_venv()
    server = Placement(tmp_path_factory.mktemp("placement")).start()
    yield server
    server.stop()


if __name__ == "__main__":
    ensure_placement_venv()
    print(f"Placement venv ready: {VENV.path}")

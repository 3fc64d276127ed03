"""Upstream Neutron 29 from PyPI, for the tests that run its agents, its
server or its versioned objects beside neutrino's.

The venv is the upstream anchor's (``../shared/anchors/upstream-neutron``,
whose ``start.sh`` installs the same packages at the same place and uses a
venv it finds there), built on first use as ``tests/pypi_service.py`` says;
``make test`` starts building it in the background when the suite starts.
A venv the anchor's ``start.sh`` built (no stamp, every program there) is
used as it is. A failed install fails the tests -- it never skips them.

Build by hand: ``.venv/bin/python tests/upstream_venv.py``.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # when run as a script
    sys.path.insert(0, str(ROOT))

from tests.pypi_service import PypiVenv, ServiceSetupError  # noqa: E402

NEUTRON_VERSION = "29.0.0"
PATH = Path(os.environ.get("NEUTRON_VENV", "/tmp/anchors/neutron-venv"))
PROGRAMS = ("python", "neutron-dhcp-agent", "neutron-openvswitch-agent", "privsep-helper",
            "neutron-rpc-server", "uwsgi")


class UpstreamSetupError(ServiceSetupError):
    """Upstream Neutron could not be installed: the tests fail."""


class _AnchorVenv(PypiVenv):
    def current(self) -> bool:
        return all(self.bin(name).exists() for name in self.programs)


VENV = _AnchorVenv(PATH, (f"neutron=={NEUTRON_VERSION}", "PyMySQL", "uwsgi"),
                   UpstreamSetupError, upgrade=("pip", "setuptools", "wheel"),
                   programs=PROGRAMS)


def ensure() -> Path:
    """The venv, built unless there (waiting for a build under way)."""
    VENV.ensure()
    return PATH


if __name__ == "__main__":
    started = time.monotonic()
    ensure()
    print(f"{PATH} ready (neutron {NEUTRON_VERSION}) in {time.monotonic() - started:.0f} s")

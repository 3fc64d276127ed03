"""Serve a Barbican API (the test suite's: tests/barbican/conftest.py) on a
fixed port behind an existing Keystone, until SIGTERM or Ctrl-C.

Usage: serve.py KEYSTONE_URL SERVICE_USER SERVICE_PROJECT PORT STATE_DIR
(the service user, password ``secret``, must exist with the admin role).
"""
from __future__ import annotations

import signal
import sys
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from tests.barbican.conftest import Barbican, ensure_barbican_venv  # noqa: E402


def main() -> None:
    keystone_url, user, project, port, state = sys.argv[1:6]
    ensure_barbican_venv()
    Path(state).mkdir(parents=True, exist_ok=True)
    bb = Barbican(Path(state), SimpleNamespace(url=keystone_url), user, project)  # type: ignore[arg-type]
    bb.port = int(port)
    bb.url = f"http://127.0.0.1:{port}"
    bb.start()
    print(f"barbican on {bb.url} (logs in {state})", flush=True)
    assert bb.proc is not None
    proc = bb.proc
    # only ask gunicorn to stop here: waiting for it inside the handler would
    # deadlock with the wait below, which then returns
    signal.signal(signal.SIGTERM, lambda *_: proc.terminate())
    try:
        proc.wait()
    finally:
        bb.stop()


if __name__ == "__main__":
    main()

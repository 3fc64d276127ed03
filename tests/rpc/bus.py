"""What RPC tests share: the broker URL of a test vhost, and agent configurations."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from neutrino.service import make_conf


def bus(vhost: str) -> str:
    return f"rabbit://guest:guest@127.0.0.1:5672/{vhost}"


def agent_conf(tmp: Path, vhost: str | None, host: str, extra: str = "") -> Any:
    """A host's configuration as an agent reads it (no bus when ``vhost`` is None)."""
    path = tmp / f"agent-{host}.conf"
    transport = f"transport_url = {bus(vhost)}\n" if vhost else ""
    path.write_text(f"[DEFAULT]\nhost = {host}\n{transport}{extra}")
    return make_conf(["--config-file", str(path)])

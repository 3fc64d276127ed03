"""What RPC tests share: the broker URL of a test vhost, agent configurations,
and an Open vSwitch agent that only reports (a host whose ports can bind)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from neutrino.agents.base import Agent
from neutrino.service import make_conf


def bus(vhost: str) -> str:
    return f"rabbit://guest:guest@127.0.0.1:5672/{vhost}"


def agent_conf(tmp: Path, vhost: str | None, host: str, extra: str = "") -> Any:
    """A host's configuration as an agent reads it (no bus when ``vhost`` is None)."""
    path = tmp / f"agent-{host}.conf"
    transport = f"transport_url = {bus(vhost)}\n" if vhost else ""
    path.write_text(f"[DEFAULT]\nhost = {host}\n{transport}{extra}")
    return make_conf(["--config-file", str(path)])


class OvsAgent(Agent):
    """A host's Open vSwitch agent as the server sees it: it reports state and
    so makes the openvswitch mechanism driver bind that host's ports."""
    agent_type = "Open vSwitch agent"
    binary = "neutron-openvswitch-agent"
    topic = "N/A"

    def configurations(self) -> dict[str, Any]:
        return {"bridge_mappings": {}, "tunnel_types": ["vxlan"]}

"""The DHCP and L3 agents report ``[AGENT] availability_zone`` (upstream's
``nova`` by default) in their state; tempest's test_agents_availability_zone
reads it from ``/v2.0/agents``."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from neutrino.agents.dhcp.agent import DhcpAgent
from neutrino.agents.l3.agent import L3Agent
from neutrino.service import make_conf


def _conf(tmp_path: Path, agent_section: str) -> Any:
    path = tmp_path / "agent.conf"
    path.write_text(f"[DEFAULT]\nhost = az-host\nstate_path = {tmp_path}\n"
                    f"[AGENT]\nreport_interval = 0\n{agent_section}")
    return make_conf(["--config-file", str(path)])


def _dhcp(conf: Any) -> Any:
    return DhcpAgent(conf, object(), driver=object())  # type: ignore[arg-type]


def _l3(conf: Any) -> Any:
    return L3Agent(conf, driver=object(), plugin_rpc=object(),  # type: ignore[arg-type]
                   routers=SimpleNamespace(applied={}))  # type: ignore[arg-type]


@pytest.mark.parametrize("make", [_dhcp, _l3])
def test_zone_is_nova_unless_configured(tmp_path: Path, make: Any) -> None:
    assert make(_conf(tmp_path, "")).state()["availability_zone"] == "nova"
    assert make(_conf(tmp_path, "availability_zone = az-2\n")).state()[
        "availability_zone"] == "az-2"


def test_a_zone_longer_than_upstreams_255_stops_the_agent(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        _dhcp(_conf(tmp_path, f"availability_zone = {'z' * 256}\n")).state()

"""Which agents may host a router, and the scheduler option's names."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from neutrino.plugins.l3 import scheduler as s
from neutrino.plugins.loader import PluginLoadError
from neutrino.service import build_api, make_conf


def agent(admin_state_up: bool = True, **conf: object) -> SimpleNamespace:
    return SimpleNamespace(id="a", host="h", admin_state_up=admin_state_up,
                           configurations=json.dumps(conf))


ROUTER = SimpleNamespace(id="r", gw_port_id=None)
GW_ROUTER = SimpleNamespace(id="r", gw_port_id="p")


def test_legacy_and_dvr_snat_agents_host_legacy_routers() -> None:
    assert s.can_host(agent(), ROUTER)
    assert s.can_host(agent(agent_mode="legacy"), ROUTER)
    assert s.can_host(agent(agent_mode="dvr_snat"), ROUTER)
    assert not s.can_host(agent(agent_mode="dvr"), ROUTER)
    assert not s.can_host(agent(agent_mode="dvr_no_external"), ROUTER)


def test_disabled_pinned_and_external_only_agents() -> None:
    assert not s.can_host(agent(admin_state_up=False), ROUTER)
    assert s.can_host(agent(admin_state_up=False), ROUTER, ignore_admin_state=True)
    assert not s.can_host(agent(router_id="other"), ROUTER)
    assert s.can_host(agent(router_id="r"), ROUTER)
    assert not s.can_host(agent(handle_internal_only_routers=False), ROUTER)
    assert s.can_host(agent(handle_internal_only_routers=False), GW_ROUTER)


def test_scheduler_names() -> None:
    assert s.chooser("neutron.scheduler.l3_agent_scheduler.LeastRoutersScheduler") \
        is s.least_routers
    assert s.chooser("ChanceScheduler") is s.chance
    with pytest.raises(PluginLoadError, match="router_scheduler_driver"):
        s.chooser("neutron.scheduler.l3_agent_scheduler.Nope")


def test_an_unknown_scheduler_stops_start_up(tmp_path: Path) -> None:
    path = tmp_path / "n.conf"
    path.write_text(f"[DEFAULT]\nservice_plugins = router\nrouter_scheduler_driver = Nope\n"
                    f"[database]\nconnection = sqlite:///{tmp_path / 'db.sqlite'}\n")
    with pytest.raises(PluginLoadError, match="router_scheduler_driver"):
        build_api(make_conf(["--config-file", str(path)]))

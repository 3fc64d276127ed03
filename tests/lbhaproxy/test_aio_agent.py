"""The all-in-one runs the load-balancer agent only when the haproxy provider is enabled."""
from __future__ import annotations

from oslo_config import cfg

from neutrino.aio import host, run
from neutrino.conf import octavia


def _conf(providers: str | None) -> cfg.ConfigOpts:
    conf = cfg.ConfigOpts()
    conf([], project="neutrino-test")
    if providers is not None:
        octavia.register(conf)
        conf.set_override("enabled_provider_drivers", providers, "octavia")
    return conf


def test_the_load_balancer_agent_runs_only_for_the_haproxy_provider() -> None:
    assert not run._asked_for(_conf(None), "loadbalancer")
    assert not run._asked_for(_conf("noop_driver:noop"), "loadbalancer")
    assert run._asked_for(_conf("haproxy:haproxy,noop_driver:noop"), "loadbalancer")


def test_without_root_it_is_skipped_like_the_others() -> None:
    skipped = host.skipped_agents(euid=1000)
    assert "loadbalancer" in skipped and skipped["loadbalancer"] == skipped["l3"]

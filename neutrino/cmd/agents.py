"""``neutrino agent <kind>``: build an agent from the configuration and run it until stopped."""
from __future__ import annotations

import signal
import sys
from typing import Any

from oslo_config import cfg

INTERFACE_DRIVERS = "neutrino.interface_drivers"


def interface_driver(conf: cfg.ConfigOpts) -> Any:
    from neutrino.plugins.loader import PluginLoadError, load_class
    if not conf.interface_driver:
        _die("[DEFAULT] interface_driver is required")
    try:
        return load_class(INTERFACE_DRIVERS, conf.interface_driver)(conf)
    except PluginLoadError as exc:
        _die(str(exc))


def _die(message: str) -> None:
    print(f"neutrino: configuration error: {message}", file=sys.stderr)
    sys.exit(2)


def build(kind: str, conf: cfg.ConfigOpts) -> Any:
    if kind == "l3":
        from neutrino.agents.l3 import agent
        agent.register_opts(conf)
        return agent.L3Agent(conf, interface_driver(conf))
    raise ValueError(kind)


def run(kind: str, conf: cfg.ConfigOpts) -> None:
    agent = build(kind, conf)

    def stop(signum: int, frame: Any) -> None:
        agent.request_stop()
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    agent.start()
    try:
        agent.wait()
    finally:
        agent.stop()

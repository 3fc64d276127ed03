"""``logger``: never binds; logs every call it gets, with the resource.

Useful to see what the plugin tells mechanism drivers, and in which order.
"""
from __future__ import annotations

import logging
from typing import Any

from neutrino.plugins.ml2.mech_api import MechanismDriver, PortContext

LOG = logging.getLogger(__name__)

_HOOKS = [f"{action}_{resource}_{phase}" for resource in ("network", "subnet", "port")
          for action in ("create", "update", "delete") for phase in ("precommit", "postcommit")]


class LoggerMechanismDriver(MechanismDriver):
    def initialize(self) -> None:
        LOG.info("logger mechanism driver initialized")

    def _log(self, method: str, context: Any) -> None:
        LOG.info("%s called with %s: current=%s original=%s", method, type(context).__name__,
                 context.current, getattr(context, "original", None))

    def bind_port(self, context: PortContext) -> None:
        LOG.info("bind_port called for port %s on host %s, segments %s",
                 context.current["id"], context.host, context.segments_to_bind)


def _make(method: str) -> Any:
    def hook(self: LoggerMechanismDriver, context: Any) -> None:
        self._log(method, context)
    hook.__name__ = method
    return hook


for _name in _HOOKS:
    setattr(LoggerMechanismDriver, _name, _make(_name))

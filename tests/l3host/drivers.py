"""An interface driver that plugs nothing: for agents whose host side is not under test."""
from __future__ import annotations

from typing import Any

from neutrino.agents.interface import InterfaceDriver


class NullDriver(InterfaceDriver):
    def __init__(self, conf: Any = None) -> None:
        self.conf = conf

    def plug(self, network_id: str, port_id: str, device_name: str, mac_address: str,
             namespace: str | None = None, mtu: int | None = None) -> None:
        pass

    def unplug(self, device_name: str, namespace: str | None = None) -> None:
        pass

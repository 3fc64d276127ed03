"""The adapter to a real Open vSwitch: OVSDB through ovsdbapp (``ovsdb``),
``ovs-ofctl`` for flows (``ofctl``), as one ``switch.Switch``.

The agent's logic never builds a command line nor an OVSDB operation; it
asks this adapter for bridges, ports and flows.
"""
from __future__ import annotations

from neutrino.agents.ovs.ofctl import OfctlFlows
from neutrino.agents.ovs.ovsdb import OvsdbPorts, default_connection
from neutrino.agents.ovs.switch import OvsError, Switch, VifPort

__all__ = ["OvsCtl", "OvsError", "VifPort", "default_connection"]


class OvsCtl(OvsdbPorts, OfctlFlows, Switch):
    """The local (or ``db``'s) switch: its database and its flows."""

    def __init__(self, db: str | None = None, timeout: int = 10) -> None:
        OvsdbPorts.__init__(self, db, timeout)
        OfctlFlows.__init__(self, timeout, self.port_numbers)

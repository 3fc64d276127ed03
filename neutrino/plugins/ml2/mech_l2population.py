"""``l2population``: never binds; it exists so that agents can be told which
MACs live behind which tunnel endpoints (forwarding entries pushed over RPC
when ports become active). Until the agent RPC lands it only accepts calls,
so listing it next to ``openvswitch`` is valid, as upstream's configs do.
"""
from __future__ import annotations

from neutrino.plugins.ml2.mech_api import MechanismDriver


class L2populationMechanismDriver(MechanismDriver):
    def initialize(self) -> None:
        """No state: forwarding entries will be computed from port bindings."""

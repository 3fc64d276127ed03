"""``l2population``: never binds; listing it in ``[ml2] mechanism_drivers``
(next to ``openvswitch``, as upstream's configs do) turns on the forwarding
entries pushed to tunnelling agents when ports become active, move or go
away. The work is done after commit by ``neutrino.plugins.ml2.l2pop``, which
the core plugin subscribes to port events when this driver is configured:
it needs the committed state of the whole network, not one port's context.
"""
from __future__ import annotations

from neutrino.plugins.ml2.mech_api import MechanismDriver


class L2populationMechanismDriver(MechanismDriver):
    def initialize(self) -> None:
        """No state: forwarding entries are computed from committed bindings."""

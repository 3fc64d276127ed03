"""The core plugin's side of the mechanism-driver contract.

Builds the context drivers see for a network, subnet or port (inside the
transaction, where the segments and binding can be read) and makes the
``<action>_<resource>_precommit`` / ``_postcommit`` calls, so the core
plugin only says when.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy import Connection

from neutrino.plugins.ml2 import segments_db
from neutrino.plugins.ml2.mech_api import NetworkContext, SubnetContext
from neutrino.plugins.ml2.mech_manager import MechanismManager
from neutrino.plugins.ml2.port_binding import PortBinding

SINGULAR = {"networks": "network", "subnets": "subnet", "ports": "port"}


class MechanismCalls:
    def __init__(self, mech: MechanismManager, binding: PortBinding) -> None:
        self.mech, self.binding = mech, binding
        self._wanted: dict[tuple[str, str], bool] = {}

    def applies(self, plural: str) -> bool:
        return plural in SINGULAR

    def wants(self, action: str, plural: str) -> bool:
        """Whether ``action`` on ``plural`` needs a context: only when a driver
        implements its precommit or postcommit (building one reads the
        segments, and a bound port's levels). Binding makes its own."""
        if plural not in SINGULAR:
            return False
        key = (action, plural)
        found = self._wanted.get(key)
        if found is None:
            name = f"{action}_{SINGULAR[plural]}"
            found = self._wanted[key] = (self.mech.handles(f"{name}_precommit")
                                         or self.mech.handles(f"{name}_postcommit"))
        return found

    def context(self, conn: Connection, plural: str, current: dict[str, Any],
                original: dict[str, Any] | None = None) -> Any:
        if plural == "networks":
            return NetworkContext(current, original,
                                  segments_db.dicts_of_network(conn, current["id"]))
        if plural == "subnets":
            net_id = current["network_id"]
            network = NetworkContext({"id": net_id},
                                     segments=segments_db.dicts_of_network(conn, net_id))
            return SubnetContext(current, original, network)
        return self.binding.port_context(conn, current, original)

    def precommit(self, action: str, plural: str, context: Any) -> None:
        self.mech.precommit(f"{action}_{SINGULAR[plural]}_precommit", context)

    def postcommit(self, action: str, plural: str, context: Any,
                   raise_on_error: bool = True) -> None:
        self.mech.postcommit(f"{action}_{SINGULAR[plural]}_postcommit", context,
                             raise_on_error)

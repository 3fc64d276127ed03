"""Mechanism drivers for tests, loaded by class path as a third party's would be.

``Recorder*`` note every call in ``CALLS`` (in-process tests); ``Failing``
fails the hook named by the resource's name (``fail-create_network_postcommit``)
so API tests can choose the failure from the request; ``Hierarchical`` binds
VXLAN segments by handing a dynamic VLAN on physnet1 to the next level.
"""
from __future__ import annotations

from typing import Any

from neutrino import errors
from neutrino.plugins.ml2.mech_api import MechanismDriver, PortContext

CALLS: list[tuple[str, str]] = []


class _Recorder(MechanismDriver):
    def initialize(self) -> None:
        CALLS.append((self.name, "initialize"))

    def __getattribute__(self, item: str) -> Any:
        if item.endswith(("_precommit", "_postcommit")):
            def record(context: Any) -> None:
                CALLS.append((self.name, item))
                if getattr(context, "fail", None) == (self.name, item):
                    raise RuntimeError(f"{self.name} fails {item}")
            return record
        return super().__getattribute__(item)


class RecorderA(_Recorder):
    pass


class RecorderB(_Recorder):
    pass


class NotADriver:
    pass


class Failing(MechanismDriver):
    def initialize(self) -> None:
        pass

    def __getattribute__(self, item: str) -> Any:
        if item.endswith(("_precommit", "_postcommit")):
            def maybe_fail(context: Any) -> None:
                name = (context.current or {}).get("name") or ""
                if name == f"fail-{item}":
                    raise RuntimeError(f"test driver fails {item}")
                if name == f"invalid-{item}":
                    raise errors.InvalidInput(error_message=f"test driver refuses {item}")
            return maybe_fail
        return super().__getattribute__(item)


class Hierarchical(MechanismDriver):
    def initialize(self) -> None:
        pass

    def bind_port(self, context: PortContext) -> None:
        for segment in context.segments_to_bind:
            if segment["network_type"] == "vxlan":
                dynamic = context.allocate_dynamic_segment(
                    {"network_type": "vlan", "physical_network": "physnet1"})
                context.continue_binding(segment["id"], [dynamic])
                return

"""The one interface every ML2 mechanism driver implements, and what it sees.

A mechanism driver is told about every network, subnet and port change
twice: ``*_precommit`` inside the core plugin's transaction (raise to roll
the whole operation back; only touch the database through the context) and
``*_postcommit`` after the commit (talk to the outside world here; a failure
on create makes the plugin delete what it created). ``bind_port`` decides
whether, and how, the driver can wire a port on its host.

Segments are plain dicts with upstream's keys (``id``, ``network_type``,
``physical_network``, ``segmentation_id``, ``network_id``) so that drivers
written against upstream's shapes read them the same way.
"""
from __future__ import annotations

import abc
from typing import Any

from neutrino.resources.port_binding import (  # noqa: F401
    VNIC_BAREMETAL,
    VNIC_DIRECT,
    VNIC_DIRECT_PHYSICAL,
    VNIC_MACVTAP,
    VNIC_NORMAL,
    VNIC_TYPES,
)

SegmentDict = dict[str, Any]

VIF_TYPE_UNBOUND = "unbound"
VIF_TYPE_BINDING_FAILED = "binding_failed"
VIF_TYPE_OVS = "ovs"
VIF_TYPE_BRIDGE = "bridge"
VIF_TYPE_HW_VEB = "hw_veb"
VIF_TYPE_HOSTDEV_PHY = "hostdev_physical"


MAX_BINDING_LEVELS = 10


class NetworkContext:
    """A network as drivers see it: current (and original on update) dicts
    plus its static segments."""

    def __init__(self, current: dict[str, Any], original: dict[str, Any] | None = None,
                 segments: list[SegmentDict] | None = None) -> None:
        self.current = current
        self.original = original
        self.network_segments = segments or []


class SubnetContext:
    def __init__(self, current: dict[str, Any], original: dict[str, Any] | None = None,
                 network: NetworkContext | None = None) -> None:
        self.current = current
        self.original = original
        self.network = network


class BindingBackend(abc.ABC):
    """What a PortContext needs from the plugin while binding (DB access
    inside the running transaction), kept abstract so unit tests can fake it."""

    @abc.abstractmethod
    def allocate_dynamic_segment(self, network_id: str, segment: SegmentDict) -> SegmentDict:
        """A dynamic segment of the network matching ``segment`` (existing or new)."""

    @abc.abstractmethod
    def release_dynamic_segment(self, segment_id: str) -> None:
        """Give a dynamic segment back when no binding uses it any more."""

    @abc.abstractmethod
    def host_agents(self, agent_type: str, host: str) -> list[dict[str, Any]]:
        """Agents of that type on that host, each with ``alive`` set."""


class PortContext:
    """A port during an operation, and the binding being built for it.

    ``binding_levels`` are the levels already decided (dicts with ``driver``
    and ``bound_segment``); while binding, ``segments_to_bind`` are the
    segments the current level may choose from, and a driver answers with
    ``set_binding`` (the last level) or ``continue_binding`` (hand over to the
    next level with new segments, e.g. a dynamic VLAN under a VXLAN).
    """

    def __init__(self, current: dict[str, Any], network: NetworkContext,
                 binding: dict[str, Any], levels: list[dict[str, Any]] | None = None,
                 original: dict[str, Any] | None = None,
                 backend: BindingBackend | None = None) -> None:
        self.current = current
        self.original = original
        self.network = network
        self.host: str = binding.get("host") or ""
        self.vnic_type: str = binding.get("vnic_type") or VNIC_NORMAL
        self.profile: dict[str, Any] = binding.get("profile") or {}
        self.vif_type: str = binding.get("vif_type") or VIF_TYPE_UNBOUND
        self.vif_details: dict[str, Any] = binding.get("vif_details") or {}
        self.binding_levels: list[dict[str, Any]] = list(levels or [])
        self._backend = backend
        self.segments_to_bind: list[SegmentDict] = []
        self._new_segment: str | None = None
        self._next_segments: list[SegmentDict] | None = None
        self._result: tuple[str, dict[str, Any], str | None] | None = None

    # -- what drivers read ----------------------------------------------------

    @property
    def top_bound_segment(self) -> SegmentDict | None:
        return self.binding_levels[0]["bound_segment"] if self.binding_levels else None

    @property
    def bottom_bound_segment(self) -> SegmentDict | None:
        return self.binding_levels[-1]["bound_segment"] if self.binding_levels else None

    def host_agents(self, agent_type: str) -> list[dict[str, Any]]:
        if self._backend is None or not self.host:
            return []
        return self._backend.host_agents(agent_type, self.host)

    # -- what drivers call ----------------------------------------------------

    def set_binding(self, segment_id: str, vif_type: str, vif_details: dict[str, Any],
                    status: str | None = None) -> None:
        """Bind the port at this level, on ``segment_id``: the binding is complete."""
        self._new_segment = segment_id
        self._next_segments = None
        self._result = (vif_type, dict(vif_details), status)

    def continue_binding(self, segment_id: str, next_segments_to_bind: list[SegmentDict]) -> None:
        """Bind this level on ``segment_id`` and let the next level bind one of
        ``next_segments_to_bind``."""
        self._new_segment = segment_id
        self._next_segments = list(next_segments_to_bind)
        self._result = None

    def allocate_dynamic_segment(self, segment: SegmentDict) -> SegmentDict:
        if self._backend is None:
            raise RuntimeError("no binding backend")
        return self._backend.allocate_dynamic_segment(self.current["network_id"], segment)

    def release_dynamic_segment(self, segment_id: str) -> None:
        if self._backend is not None:
            self._backend.release_dynamic_segment(segment_id)

    # -- used by the manager ----------------------------------------------------

    def _prepare(self, segments: list[SegmentDict]) -> None:
        self.segments_to_bind = segments
        self._new_segment = None
        self._next_segments = None
        self._result = None


class MechanismDriver(abc.ABC):
    """Base of ``neutrino.ml2.mechanism_drivers`` entry points.

    Every hook but ``initialize`` is optional: a driver that only watches
    (``logger``, ``l2population``) never binds, and a binding driver may
    ignore the CRUD hooks.
    """

    # QoS: the rule types this driver can enforce, each with the parameter
    # ranges or values it supports (``neutrino.resources.qos.Param``), and
    # the ports it enforces them on: by ``vif_type`` once bound, by
    # ``vnic_type`` before. No rule types: the driver does not handle QoS.
    qos_rules: dict[str, dict[str, Any]] = {}
    qos_vif_types: tuple[str, ...] = ()
    qos_vnic_types: tuple[str, ...] = ()

    def __init__(self, conf: Any) -> None:
        self.conf = conf
        self.name = type(self).__name__  # the manager sets the configured name

    @abc.abstractmethod
    def initialize(self) -> None:
        """Called once at start-up, after options are read."""

    def bind_port(self, context: PortContext) -> None:
        """Call ``context.set_binding`` or ``continue_binding`` to bind; do nothing
        to let the next driver try."""

    def create_network_precommit(self, context: NetworkContext) -> None: ...
    def create_network_postcommit(self, context: NetworkContext) -> None: ...
    def update_network_precommit(self, context: NetworkContext) -> None: ...
    def update_network_postcommit(self, context: NetworkContext) -> None: ...
    def delete_network_precommit(self, context: NetworkContext) -> None: ...
    def delete_network_postcommit(self, context: NetworkContext) -> None: ...
    def create_subnet_precommit(self, context: SubnetContext) -> None: ...
    def create_subnet_postcommit(self, context: SubnetContext) -> None: ...
    def update_subnet_precommit(self, context: SubnetContext) -> None: ...
    def update_subnet_postcommit(self, context: SubnetContext) -> None: ...
    def delete_subnet_precommit(self, context: SubnetContext) -> None: ...
    def delete_subnet_postcommit(self, context: SubnetContext) -> None: ...
    def create_port_precommit(self, context: PortContext) -> None: ...
    def create_port_postcommit(self, context: PortContext) -> None: ...
    def update_port_precommit(self, context: PortContext) -> None: ...
    def update_port_postcommit(self, context: PortContext) -> None: ...
    def delete_port_precommit(self, context: PortContext) -> None: ...
    def delete_port_postcommit(self, context: PortContext) -> None: ...


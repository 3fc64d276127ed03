"""``q-plugin`` at namespace None: upstream's agents pull versioned objects
(``pull`` one by id, ``bulk_pull`` by filters, resources RPC 1.1).

A type neutrino does not declare, or a version other than the one declared
(neutrino does not downgrade objects as upstream's ``obj_to_primitive``
does), is refused with an error the agent sees, rather than answered with
nothing: an agent told "none" would wire a port without what it asked for.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import oslo_messaging

from neutrino.plugins.ml2.vo_rpc import VersionedObjectReader, primitives
from neutrino.rpc.vo_types import OBJECTS, TOP_LEVEL

if TYPE_CHECKING:
    from neutrino.plugins.core import CorePlugin


class UnsupportedObject(LookupError):
    """The type or version asked is not served."""


def _check(resource_type: str, version: str | None) -> None:
    if resource_type not in TOP_LEVEL:
        raise UnsupportedObject(f"resource type {resource_type} is not served "
                                f"(served: {', '.join(TOP_LEVEL)})")
    served = OBJECTS[resource_type].version
    if version is not None and version != served:
        raise UnsupportedObject(f"{resource_type} {version} asked; served at {served} only")


class VersionedObjectsEndpoint:
    # 1.0 pull, 1.1 bulk_pull (upstream's ResourcesPullRpcCallback history)
    target = oslo_messaging.Target(version="1.1", namespace=None)

    def __init__(self, plugin: CorePlugin) -> None:
        self.plugin = plugin
        self.reader = VersionedObjectReader(plugin)

    @oslo_messaging.expected_exceptions(UnsupportedObject)
    def pull(self, context: Any, resource_type: str, version: str | None = None,
             resource_id: str | None = None, **kwargs: Any) -> dict[str, Any] | None:
        _check(resource_type, version)
        if not resource_id:
            return None
        with self.plugin.db.reader() as conn:
            found = primitives(self.reader, conn, resource_type, {"id": [resource_id]})
        return found[0] if found else None

    @oslo_messaging.expected_exceptions(UnsupportedObject)
    def bulk_pull(self, context: Any, resource_type: str, version: str | None = None,
                  filter_kwargs: dict[str, Any] | None = None,
                  **kwargs: Any) -> list[dict[str, Any]]:
        _check(resource_type, version)
        with self.plugin.db.reader() as conn:
            return primitives(self.reader, conn, resource_type, filter_kwargs or {})

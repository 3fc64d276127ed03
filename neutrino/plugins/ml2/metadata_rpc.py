"""What the metadata agent asks the server (topic ``q-plugin``, namespace None
as upstream's, ``metadata`` still accepted for neutrino's earlier agents).

Upstream's MetadataRpcCallback has one method, ``get_ports(filters)``: the
ports matching the filters, as the API would list them to an admin. The
agent asks twice per lookup: a router's interface ports (``device_id`` and
``device_owner``), then the port holding the instance's address on those
networks (``network_id`` and ``fixed_ips: {"ip_address": [...]}``).
Upstream's DHCP agent makes the same call (its ``BasePluginApi.get_ports``)
at the same namespace, so this one method answers both agents.
"""
from __future__ import annotations

from typing import Any

import oslo_messaging

from neutrino.context import Context
from neutrino.plugins import store
from neutrino.rpc import topics

VERSION = "1.0"


def _fixed_ips_alternatives(value: Any) -> list[list[str]]:
    """Upstream sends ``{"ip_address": [a, b]}`` (any of them); the port list
    takes ``key=value`` conditions that must all hold, so each alternative
    becomes a query of its own."""
    if isinstance(value, dict):
        return [[f"{key}={v}"] for key, values in value.items()
                for v in (values if isinstance(values, (list, tuple)) else [values])]
    return [list(value)] if isinstance(value, (list, tuple)) else [[str(value)]]


class MetadataEndpoint:
    target = oslo_messaging.Target(version=VERSION,
                                   legacy_namespaces=[topics.LEGACY_METADATA_NAMESPACE])

    def __init__(self, core: Any) -> None:
        self.core = core

    def get_ports(self, context: Any, filters: dict[str, Any] | None = None,
                  **kwargs: Any) -> list[dict[str, Any]]:
        plain = {k: list(v) if isinstance(v, (list, tuple)) else [v]
                 for k, v in (filters or {}).items() if k != "fixed_ips"}
        admin = Context.admin()
        if "fixed_ips" not in (filters or {}):
            return self.core.list(admin, "ports", store.ListQuery(filters=plain))[0]
        found: dict[str, dict[str, Any]] = {}
        for alternative in _fixed_ips_alternatives(filters["fixed_ips"]):
            query = store.ListQuery(filters={**plain, "fixed_ips": alternative})
            for port in self.core.list(admin, "ports", query)[0]:
                found.setdefault(port["id"], port)
        return list(found.values())

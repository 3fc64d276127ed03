"""``qos-fip`` and ``qos-gateway-ip``: the QoS policies of floating IPs and
of routers' gateways, kept by the router plugin when the QoS plugin is loaded.

A caller may name a policy it can use (its own, one shared with its
project; admins any), else the policy "does not exist" (404), as upstream.
A floating IP keeps its policy whatever it is associated with; a router's
gateway policy goes with its gateway. The L3 agents read both from the
routers' sync data and enforce the bandwidth limits with tc on the
gateway device.
"""
from __future__ import annotations

from typing import Any, Iterable

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import store
from neutrino.plugins.qos.policies import usable

POLICY_ID = "qos_policy_id"
FB = t.qos_fip_policy_bindings
RB = t.qos_router_gw_policy_bindings
# the service plugin names that load upstream's QoS plugin
QOS_PLUGINS = ("qos", "neutron.services.qos.qos_plugin.QoSPlugin",
               "neutrino.plugins.qos.plugin:QosPlugin")


def enabled(conf: Any) -> bool:
    """Whether the QoS plugin is loaded (upstream lists ``qos-fip`` and
    ``qos-gateway-ip`` only then)."""
    return any(p.strip() in QOS_PLUGINS for p in conf.service_plugins)


def check_usable(conn: Connection, ctx: Context, policy_id: str | None) -> None:
    if policy_id is not None and usable(conn, ctx, policy_id) is None:
        raise errors.QosPolicyNotFound(policy_id=policy_id)


def _bound(conn: Connection, table: Any, key: str, ids: Iterable[str]) -> dict[str, str]:
    found = store.children(conn, table, key, list(ids), (), (key, "policy_id"))
    return {rid: rows[0][1] for rid, rows in found.items() if rows}


def _bind(conn: Connection, table: Any, key: str, rid: str, policy_id: str | None) -> bool:
    """Make ``rid``'s binding ``policy_id``; True when it changed."""
    current = conn.execute(sa.select(table.c.policy_id).where(table.c[key] == rid)).scalar()
    if current == policy_id:
        return False
    conn.execute(sa.delete(table).where(table.c[key] == rid))
    if policy_id is not None:
        conn.execute(sa.insert(table).values(**{key: rid, "policy_id": policy_id}))
    return True


def fip_policies(conn: Connection, fip_ids: Iterable[str]) -> dict[str, str]:
    return _bound(conn, FB, "fip_id", fip_ids)


def set_fip_policy(conn: Connection, fip_id: str, policy_id: str | None) -> bool:
    return _bind(conn, FB, "fip_id", fip_id, policy_id)


def router_policies(conn: Connection, router_ids: Iterable[str]) -> dict[str, str]:
    return _bound(conn, RB, "router_id", router_ids)


def set_router_policy(conn: Connection, router_id: str, policy_id: str | None) -> bool:
    return _bind(conn, RB, "router_id", router_id, policy_id)


def network_policies(conn: Connection, network_ids: Iterable[str]) -> dict[str, str]:
    return _bound(conn, t.qos_network_policy_bindings, "network_id", network_ids)

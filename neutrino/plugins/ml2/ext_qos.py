"""``qos``: the QoS policy of a network or a port (``qos_policy_id``).

A caller may attach a policy it can use (its own, or one shared with its
project; admins any), else the policy "does not exist" (404). A new network
without one gets its project's default policy (``qos-default``). Ports also
show their network's policy (``qos_network_policy_id``, read-only). The
policy must be enforceable where it is attached (``QosRuleNotSupported``);
replacing a policy the caller could not use itself is refused, as upstream.
"""
from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.plugins import joined, store
from neutrino.plugins.joined import Fill, Joined
from neutrino.plugins.ml2.extension_api import ExtensionDriver, inherited
from neutrino.plugins.qos import bindings
from neutrino.plugins.qos.policies import DEFAULT_OF, default_of, usable
from neutrino.plugins.qos.support import QosSupport
from neutrino.resources import qos
from neutrino.resources.attributes import Attribute

ATTR = qos.POLICY_ID
NETWORK_ATTR = qos.NETWORK_POLICY_ID
NB, PB = bindings.NB, bindings.PB


def _fill(attribute: str) -> Fill:
    def fill(item: dict[str, Any], values: tuple[Any, ...] | None) -> None:
        item[attribute] = None if values is None else values[0]
    return fill


# A port's own policy is written only by its create and updates, which
# advance its revision (a policy in use cannot be deleted): the row memo
# keeps it with the port's own rows. Its network's policy is the network's.
PORT_POLICY = Joined(PB, "port_id", ("policy_id",), _fill(ATTR), follows_revision=True)
PORTS_NETWORK_POLICY = Joined(NB, "network_id", ("policy_id",), _fill(NETWORK_ATTR),
                              parent_column="network_id")
NETWORK_POLICY = Joined(NB, "network_id", ("policy_id",), _fill(ATTR))


class QosDriver(ExtensionDriver):
    extension_alias = "qos"

    def __init__(self, conf: Any) -> None:
        super().__init__(conf)
        self.support = QosSupport.from_conf(conf)

    def attributes(self) -> dict[str, list[Attribute]]:
        return qos.QOS_POLICY_ID

    # -- writes -----------------------------------------------------------------------

    def _policy_rules(self, conn: Connection, ctx: Context, policy_id: str) -> list[dict[str, Any]]:
        if usable(conn, ctx, policy_id) is None:
            raise errors.QosPolicyNotFound(policy_id=policy_id)
        return bindings.rules_of(conn, policy_id)

    def process_create(self, conn: Connection, ctx: Context, plural: str,
                       data: dict[str, Any], resource_id: str) -> None:
        policy_id = data.get(ATTR)
        if plural == "networks":
            if policy_id is None:
                policy_id = default_of(conn, data.get("project_id") or ctx.project_id or "")
                if policy_id is None:
                    return
                rules = bindings.rules_of(conn, policy_id)
            else:
                rules = self._policy_rules(conn, ctx, policy_id)
            bindings.check_network(self.support, rules, resource_id)
            conn.execute(sa.insert(NB), {"network_id": resource_id, "policy_id": policy_id})
        elif plural == "ports":
            if policy_id is not None:
                rules = self._policy_rules(conn, ctx, policy_id)
                conn.execute(sa.insert(PB), {"port_id": resource_id, "policy_id": policy_id})
            elif bindings.inherits_network_policy(data.get("device_owner")):
                network_policy = inherited(
                    data, ATTR, lambda: bindings.network_policy(conn, data["network_id"]))
                rules = bindings.rules_of(conn, network_policy) if network_policy else []
            else:
                rules = []
            vnic = data.get("binding:vnic_type") or "normal"
            bindings.check_ports(self.support, rules, [(resource_id, "unbound", vnic)])

    def process_update(self, conn: Connection, ctx: Context, plural: str,
                       data: dict[str, Any], resource_id: str,
                       original: dict[str, Any]) -> None:
        if ATTR not in data or plural not in ("networks", "ports"):
            return
        table, key = (NB, "network_id") if plural == "networks" else (PB, "port_id")
        old = original[ATTR]
        new = data[ATTR]
        if old == new:
            return
        if old is not None and usable(conn, ctx, old) is None:
            raise errors.PolicyRemoveAuthorizationError(policy_id=old)
        conn.execute(sa.delete(table).where(table.c[key] == resource_id))
        if new is None:
            return
        rules = self._policy_rules(conn, ctx, new)
        if plural == "networks":
            bindings.check_network(self.support, rules, resource_id)
            bindings.check_ports(self.support, rules,
                                 bindings.network_ports_inheriting(conn, resource_id))
        else:
            vif, vnic = bindings.port_binding(conn, resource_id)
            bindings.check_ports(self.support, rules, [(resource_id, vif, vnic)])
        conn.execute(sa.insert(table).values(**{key: resource_id, "policy_id": new}))

    # -- reads ------------------------------------------------------------------------

    def lookups(self, plural: str) -> tuple[Any, ...]:
        return (DEFAULT_OF,) if plural == "networks" else ()

    def joined(self, plural: str) -> list[Joined]:
        if plural == "networks":
            return [NETWORK_POLICY]
        if plural != "ports":
            return []
        return [PORT_POLICY, PORTS_NETWORK_POLICY]

    def extend(self, conn: Connection, plural: str, items: list[dict[str, Any]]) -> None:
        if plural == "networks":
            items = joined.missing(items, ATTR)
            found = self._bound(conn, NB, "network_id", store.item_ids(items))
            for item in items:
                item[ATTR] = found.get(item["id"])
        elif plural == "ports":
            # (a page's own policies may come from the row memo, its
            # networks' never do)
            items_own = joined.missing(items, ATTR)
            if items_own:
                own = self._bound(conn, PB, "port_id", store.item_ids(items_own))
                for item in items_own:
                    item[ATTR] = own.get(item["id"])
            items = joined.missing(items, NETWORK_ATTR)
            if items:
                nets = self._bound(conn, NB, "network_id",
                                   list({i["network_id"]: None for i in items}))
                for item in items:
                    item[NETWORK_ATTR] = nets.get(item["network_id"])

    @staticmethod
    def _bound(conn: Connection, table: Any, key: str, ids: list[str]) -> dict[str, str]:
        found = store.children(conn, table, key, ids, (), (key, "policy_id"))
        return {rid: rows[0][1] for rid, rows in found.items() if rows}


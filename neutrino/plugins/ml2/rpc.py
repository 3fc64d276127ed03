"""What L2 agents ask the server over RPC, and what they tell it.

``get_device_details`` hands an agent everything it needs to wire a device
on its host (the segment the port is bound to, addresses, port security);
``update_device_up`` / ``update_device_down`` report the device wired or
gone. A device is a port id, or a prefix of one as Linux bridge agents name
their taps. Answers about ports bound elsewhere, or gone, say only
``{"device": ...}`` so a stale agent cleans up rather than wires.
"""
from __future__ import annotations

import logging
from typing import Any

import oslo_messaging
import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino.db import tables as t
from neutrino.plugins import events as ev
from neutrino.plugins import store
from neutrino.plugins.ml2 import provisioning, segments_db

LOG = logging.getLogger(__name__)

# 1.x: get_device_details, get_devices_details_list(_and_failed_devices),
# update_device_up/down/list; new methods or arguments bump the minor.
VERSION = "1.9"
B, L, P = t.ml2_port_bindings.c, t.ml2_port_binding_levels.c, t.ports.c


class L2Endpoint:
    target = oslo_messaging.Target(version=VERSION)

    def __init__(self, plugin: Any) -> None:
        self.plugin = plugin

    # -- lookups --------------------------------------------------------------------

    @staticmethod
    def _port_id(conn: Connection, device: str) -> str | None:
        if len(device) >= 36:
            found = conn.execute(sa.select(P.id).where(P.id == device)).scalar()
        else:
            found = conn.execute(sa.select(P.id).where(P.id.startswith(device))
                                 .limit(1)).scalar()
        return found

    @staticmethod
    def _bound_here(conn: Connection, port_id: str, host: str | None) -> Any:
        """The port's binding row when it is bound on ``host`` (any host if None)."""
        row = conn.execute(sa.select(t.ml2_port_bindings).where(B.port_id == port_id)).first()
        if row is None or (host and row.host != host):
            return None
        return row

    @staticmethod
    def _ha_router_port(conn: Connection, port_id: str) -> bool:
        """A gateway or interface port of an HA router: every host of the
        router wires it (keepalived decides where it carries addresses); its
        binding, and so its status, follow the active host."""
        rp = t.routerports.c
        return conn.execute(sa.select(rp.port_id).join(t.routers, t.routers.c.id == rp.router_id)
                            .where(rp.port_id == port_id, t.routers.c.ha.is_(True),
                                   rp.port_type != "network:router_ha_interface")
                            ).first() is not None

    def _set_status(self, conn: Connection, port_id: str, status: str,
                    changes: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
        """Write the port's status; with subscribers, keep (before, after) for
        ``_announce`` once committed (l2population, the compute notifier)."""
        if conn.execute(sa.select(P.status).where(P.id == port_id)).scalar() == status:
            return  # as upstream: an unchanged status is not an update
        if not self.plugin.events.wants("ports", ev.AFTER_UPDATE):
            store.bump(conn, t.ports, port_id, {"status": status})
            return
        before = self.plugin._load_one(conn, "ports", port_id)
        store.bump(conn, t.ports, port_id, {"status": status})
        changes.append((before, self.plugin._load_one(conn, "ports", port_id)))

    def _announce(self, changes: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
        for before, after in changes:
            self.plugin.events.notify("ports", ev.AFTER_UPDATE, None, before, after)

    # -- calls ----------------------------------------------------------------------

    def get_device_details(self, context: Any, device: str, agent_id: str | None = None,
                           host: str | None = None, **kwargs: Any) -> dict[str, Any]:
        changes: list[tuple[dict[str, Any], dict[str, Any]]] = []

        def op(conn: Connection) -> dict[str, Any]:
            changes.clear()
            port_id = self._port_id(conn, device)
            if port_id is None:
                LOG.debug("device %s requested by %s not found", device, agent_id)
                return {"device": device}
            here = self._bound_here(conn, port_id, host) is not None
            if not here and not self._ha_router_port(conn, port_id):
                return {"device": device, "no_active_binding": True}
            levels = list(conn.execute(sa.select(L.segment_id).where(L.port_id == port_id)
                                       .order_by(L.level.desc()).limit(1)))
            if not levels:
                return {"device": device}
            segment = segments_db.dicts_by_id(conn, [levels[0].segment_id]).get(
                levels[0].segment_id)
            port = self.plugin._load_one(conn, "ports", port_id)
            wanted = "BUILD" if port["admin_state_up"] else "DOWN"
            if here and (port["status"] not in (wanted, "ACTIVE") or (
                    port["status"] == "ACTIVE" and not port["admin_state_up"])):
                self._set_status(conn, port_id, wanted, changes)
                port["status"] = wanted
            network = conn.execute(sa.select(t.networks.c.mtu).where(
                t.networks.c.id == port["network_id"])).first()
            return {
                "device": device, "port_id": port_id, "network_id": port["network_id"],
                "mac_address": port["mac_address"], "admin_state_up": port["admin_state_up"],
                "network_type": segment and segment["network_type"],
                "segmentation_id": segment and segment["segmentation_id"],
                "physical_network": segment and segment["physical_network"],
                "mtu": network.mtu if network else None,
                "fixed_ips": port["fixed_ips"], "device_owner": port["device_owner"],
                "allowed_address_pairs": port.get("allowed_address_pairs", []),
                "port_security_enabled": port.get("port_security_enabled", True),
                "security_groups": port.get("security_groups", []),
                "qos_policy_id": port.get("qos_policy_id"),
                "network_qos_policy_id": port.get("qos_network_policy_id"),
                "profile": port.get("binding:profile", {}),
            }
        details = self.plugin.write(op)
        self._announce(changes)
        return details

    def get_devices_details_list(self, context: Any, devices: list[str],
                                 agent_id: str | None = None, host: str | None = None,
                                 **kwargs: Any) -> list[dict[str, Any]]:
        return [self.get_device_details(context, d, agent_id, host) for d in devices]

    def get_devices_details_list_and_failed_devices(
            self, context: Any, devices: list[str], agent_id: str | None = None,
            host: str | None = None, **kwargs: Any) -> dict[str, list[Any]]:
        details, failed = [], []
        for device in devices:
            try:
                details.append(self.get_device_details(context, device, agent_id, host))
            except Exception:  # noqa: BLE001 - reported back so the agent retries it
                LOG.exception("device details of %s failed", device)
                failed.append(device)
        return {"devices": details, "failed_devices": failed}

    def update_device_up(self, context: Any, device: str, agent_id: str | None = None,
                         host: str | None = None, **kwargs: Any) -> None:
        """The L2 agent wired ``device``: its block goes; the last block makes it ACTIVE."""
        changes: list[tuple[dict[str, Any], dict[str, Any]]] = []

        def op(conn: Connection) -> None:
            changes.clear()
            port_id = self._port_id(conn, device)
            if port_id is None or self._bound_here(conn, port_id, host) is None:
                LOG.debug("device %s up on %s: not a port bound there", device, host)
                return
            if provisioning.complete(conn, port_id, provisioning.L2_AGENT_ENTITY):
                self._set_status(conn, port_id, "ACTIVE", changes)
        self.plugin.write(op)
        self._announce(changes)

    def update_device_down(self, context: Any, device: str, agent_id: str | None = None,
                           host: str | None = None, **kwargs: Any) -> dict[str, Any]:
        changes: list[tuple[dict[str, Any], dict[str, Any]]] = []

        def op(conn: Connection) -> dict[str, Any]:
            changes.clear()
            port_id = self._port_id(conn, device)
            if port_id is None:
                return {"device": device, "exists": False}
            if self._bound_here(conn, port_id, host) is not None:
                self._set_status(conn, port_id, "DOWN", changes)
            return {"device": device, "exists": True}
        answer = self.plugin.write(op)
        self._announce(changes)
        return answer

    def update_device_list(self, context: Any, devices_up: list[str], devices_down: list[str],
                           agent_id: str | None = None, host: str | None = None,
                           **kwargs: Any) -> dict[str, list[str]]:
        result: dict[str, list[str]] = {"devices_up": [], "failed_devices_up": [],
                                        "devices_down": [], "failed_devices_down": []}
        for device in devices_up:
            try:
                self.update_device_up(context, device, agent_id, host)
                result["devices_up"].append(device)
            except Exception:  # noqa: BLE001 - the agent retries failed devices
                LOG.exception("device %s up failed", device)
                result["failed_devices_up"].append(device)
        for device in devices_down:
            try:
                self.update_device_down(context, device, agent_id, host)
                result["devices_down"].append(device)
            except Exception:  # noqa: BLE001
                LOG.exception("device %s down failed", device)
                result["failed_devices_down"].append(device)
        if kwargs.get("refresh_tunnels") and host and getattr(self.plugin, "l2pop", None):
            self._refresh_tunnels(result["devices_up"], host)
        return result

    def _refresh_tunnels(self, devices: list[str], host: str) -> None:
        """A restarted agent's devices: it needs its l2population entries again."""
        with self.plugin.db.reader() as conn:
            ids = [pid for d in devices if (pid := self._port_id(conn, d))]
            ports = [{"id": r.id, "network_id": r.network_id} for part in
                     range(0, len(ids), 500) for r in conn.execute(
                         sa.select(P.id, P.network_id).where(P.id.in_(ids[part:part + 500])))]
        if ports:
            self.plugin.l2pop.refresh_host(ports, host)

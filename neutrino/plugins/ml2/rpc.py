"""What L2 agents ask the server over RPC, and what they tell it.

``get_device_details`` hands an agent everything it needs to wire a device
on its host (the segment the port is bound to, addresses, port security);
``update_device_up`` / ``update_device_down`` report the device wired or
gone. A device is a port id, or a prefix of one as Linux bridge agents name
their taps. Answers about ports bound elsewhere, or gone, say only
``{"device": ...}`` so a stale agent cleans up rather than wires.

Every call works on its whole list of devices in one transaction, each
table read once for all of them (``devices_db``); the single-device calls
are lists of one. Only when a list's transaction fails are its devices
taken one at a time, so that one bad device is reported failed and the
others still done.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Callable, Sequence, TypeVar

import oslo_messaging
import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import events as ev
from neutrino.plugins import store
from neutrino.plugins.ml2 import devices_db, provisioning, segments_db

if TYPE_CHECKING:
    from neutrino.plugins.core import CorePlugin

LOG = logging.getLogger(__name__)

# 1.x: get_device_details, get_devices_details_list(_and_failed_devices),
# get_network_details (1.6), update_device_up/down/list,
# get_ports_by_vnic_type_and_host (1.7); new
# methods or arguments bump the minor.
VERSION = "1.9"
P = t.ports.c
R = TypeVar("R")
# (before, after) of each port whose status a call changed, announced once committed.
Changes = list[tuple[dict[str, Any], dict[str, Any]]]
Batch = Callable[[Connection, Sequence[str], "str | None", Changes], R]


class L2Endpoint:
    target = oslo_messaging.Target(version=VERSION)

    def __init__(self, plugin: CorePlugin) -> None:
        self.plugin = plugin

    # -- calls ----------------------------------------------------------------------

    def get_device_details(self, context: Any, device: str, agent_id: str | None = None,
                           host: str | None = None, **kwargs: Any) -> dict[str, Any]:
        return self._run(self._details, [device], host)[0]

    def get_devices_details_list(self, context: Any, devices: list[str],
                                 agent_id: str | None = None, host: str | None = None,
                                 **kwargs: Any) -> list[dict[str, Any]]:
        return self._run(self._details, devices, host)

    def get_devices_details_list_and_failed_devices(
            self, context: Any, devices: list[str], agent_id: str | None = None,
            host: str | None = None, **kwargs: Any) -> dict[str, list[Any]]:
        details, failed = self._each(self._details, devices, host, "details")
        return {"devices": details, "failed_devices": failed}

    def get_network_details(self, context: Any, network: str, agent_id: str | None = None,
                            host: str | None = None, **kwargs: Any) -> dict[str, Any]:
        """The network as an admin reads it (upstream's 1.6): upstream's OVS
        agent reads its segmentation id and MTU from it when a network is
        pushed to its cache."""
        return self.plugin.get(Context.admin(), "networks", network)

    def update_device_up(self, context: Any, device: str, agent_id: str | None = None,
                         host: str | None = None, **kwargs: Any) -> None:
        """The L2 agent wired ``device``: its block goes; the last block makes it ACTIVE."""
        self._run(self._up, [device], host)

    def update_device_down(self, context: Any, device: str, agent_id: str | None = None,
                           host: str | None = None, **kwargs: Any) -> dict[str, Any]:
        return self._run(self._down, [device], host)[0]

    def update_device_list(self, context: Any, devices_up: list[str], devices_down: list[str],
                           agent_id: str | None = None, host: str | None = None,
                           **kwargs: Any) -> dict[str, list[str]]:
        failed_up = set(self._each(self._up, devices_up, host, "up")[1])
        failed_down = set(self._each(self._down, devices_down, host, "down")[1])
        result = {"devices_up": [d for d in devices_up if d not in failed_up],
                  "failed_devices_up": [d for d in devices_up if d in failed_up],
                  "devices_down": [d for d in devices_down if d not in failed_down],
                  "failed_devices_down": [d for d in devices_down if d in failed_down]}
        if kwargs.get("refresh_tunnels") and host and getattr(self.plugin, "l2pop", None):
            self._refresh_tunnels(result["devices_up"], host)
        return result

    def get_ports_by_vnic_type_and_host(self, context: Any, vnic_type: str, host: str,
                                        **kwargs: Any) -> list[dict[str, Any]]:
        """The ports bound to ``host`` with ``vnic_type`` (upstream's 1.7): a
        restarted agent tells from them which of its ports lost their device."""
        with self.plugin.db.reader() as conn:
            ids = devices_db.bound_to(conn, host, vnic_type)
            ports = self.plugin.load_ports(conn, ids)
        return [ports[pid] for pid in ids if pid in ports]

    # -- one transaction per list ---------------------------------------------------

    def _run(self, batch: Batch[list[R]], devices: Sequence[str], host: str | None) -> list[R]:
        changes: Changes = []

        def op(conn: Connection) -> list[R]:
            changes.clear()
            return batch(conn, devices, host, changes)
        answers = self.plugin.write(op)
        self.plugin.events.notify_many("ports", ev.AFTER_UPDATE,
                                       [(None, before, after) for before, after in changes])
        return answers

    def _each(self, batch: Batch[list[R]], devices: Sequence[str], host: str | None,
              what: str) -> tuple[list[R], list[str]]:
        """The answers for the devices done, and the devices that failed."""
        if not devices:
            return [], []
        try:
            return self._run(batch, devices, host), []
        except Exception:  # noqa: BLE001 - retried device by device below
            LOG.exception("device %s of %d devices failed; trying each alone", what,
                          len(devices))
        answers: list[R] = []
        failed: list[str] = []
        for device in devices:
            try:
                answers.extend(self._run(batch, [device], host))
            except Exception:  # noqa: BLE001 - reported back so the agent retries it
                LOG.exception("device %s of %s failed", what, device)
                failed.append(device)
        return answers, failed

    # -- what each call does to its devices -----------------------------------------

    @staticmethod
    def _located(conn: Connection, devices: Sequence[str],
                 host: str | None) -> tuple[dict[str, str], list[str], set[str]]:
        """(device -> port id, the ports in the devices' order, those bound
        on ``host``: on any host when None)."""
        ids = devices_db.port_ids(conn, devices)
        ordered = list(dict.fromkeys(ids[d] for d in devices if d in ids))
        bound = devices_db.bindings(conn, ordered)
        here = {pid for pid in ordered if pid in bound and (not host or bound[pid].host == host)}
        return ids, ordered, here

    def _details(self, conn: Connection, devices: Sequence[str], host: str | None,
                 changes: Changes) -> list[dict[str, Any]]:
        ids, ordered, here = self._located(conn, devices, host)
        wired = here | devices_db.router_ports_on_many_hosts(conn, [p for p in ordered if p not in here])
        segment_of = devices_db.bound_segments(conn, [p for p in ordered if p in wired])
        ports = self.plugin.load_ports(conn, [p for p in ordered if p in segment_of])
        segments = segments_db.dicts_by_id(conn, segment_of.values())
        mtus = devices_db.network_mtus(conn, (p["network_id"] for p in ports.values()))
        statuses: dict[str, str] = {}
        for pid, port in ports.items():
            wanted = "BUILD" if port["admin_state_up"] else "DOWN"
            if pid in here and (port["status"] not in (wanted, "ACTIVE") or (
                    port["status"] == "ACTIVE" and not port["admin_state_up"])):
                statuses[pid] = wanted
        self._set_statuses(conn, statuses, changes, ports)
        answers = []
        for device in devices:
            pid = ids.get(device)
            if pid is None:
                LOG.debug("device %s requested from %s not found", device, host)
                answers.append({"device": device})
            elif pid not in wired:
                answers.append({"device": device, "no_active_binding": True})
            elif pid not in ports:  # not bound to a segment (any more)
                answers.append({"device": device})
            else:
                port = ports[pid]
                answers.append(_details_of(device, port, segments.get(segment_of[pid] or ""),
                                           mtus.get(port["network_id"])))
        return answers

    def _up(self, conn: Connection, devices: Sequence[str], host: str | None,
            changes: Changes) -> list[None]:
        ids, ordered, here = self._located(conn, devices, host)
        for device in devices:
            if ids.get(device) not in here:
                LOG.debug("device %s up on %s: not a port bound there", device, host)
        ready = provisioning.complete_many(conn, [p for p in ordered if p in here],
                                           provisioning.L2_AGENT_ENTITY)
        self._set_statuses(conn, dict.fromkeys(ready, "ACTIVE"), changes)
        return [None] * len(devices)

    def _down(self, conn: Connection, devices: Sequence[str], host: str | None,
              changes: Changes) -> list[dict[str, Any]]:
        ids, ordered, here = self._located(conn, devices, host)
        self._set_statuses(conn, {p: "DOWN" for p in ordered if p in here}, changes)
        return [{"device": d, "exists": d in ids} for d in devices]

    def _set_statuses(self, conn: Connection, wanted: dict[str, str], changes: Changes,
                      loaded: dict[str, dict[str, Any]] | None = None) -> None:
        """Write each port's status where it differs (as upstream, an
        unchanged status is no update), one UPDATE per status; with
        subscribers, keep (before, after) of each port changed. ``loaded``:
        the ports as this transaction already read them."""
        if not wanted:
            return
        subscribed = self.plugin.events.wants("ports", ev.AFTER_UPDATE)
        before = loaded
        if before is None and subscribed:
            before = self.plugin.load_ports(conn, list(wanted))
        current = ({pid: port["status"] for pid, port in before.items()} if before is not None
                   else devices_db.statuses(conn, list(wanted)))
        changed = {pid: status for pid, status in wanted.items()
                   if pid in current and current[pid] != status}
        for status in dict.fromkeys(changed.values()):
            ids = [pid for pid, s in changed.items() if s == status]
            for part in store.chunks(ids):
                store.bump_where(conn, t.ports, P.id.in_(part), values={"status": status})
        if subscribed and changed and before is not None:
            after = self.plugin.load_ports(conn, list(changed))
            changes.extend((before[pid], after[pid]) for pid in changed)

    def _refresh_tunnels(self, devices: list[str], host: str) -> None:
        """A restarted agent's devices: it needs its l2population entries again."""
        with self.plugin.db.reader() as conn:
            ids = sorted(set(devices_db.port_ids(conn, devices).values()))
            ports = [{"id": r.id, "network_id": r.network_id} for part in store.chunks(ids)
                     for r in conn.execute(sa.select(P.id, P.network_id).where(P.id.in_(part)))]
        if ports:
            self.plugin.l2pop.refresh_host(ports, host)


def _details_of(device: str, port: dict[str, Any], segment: dict[str, Any] | None,
                mtu: int | None) -> dict[str, Any]:
    """What an agent needs to wire ``device``, the port ``port``."""
    return {
        "device": device, "port_id": port["id"], "network_id": port["network_id"],
        "mac_address": port["mac_address"], "admin_state_up": port["admin_state_up"],
        "network_type": segment and segment["network_type"],
        "segmentation_id": segment and segment["segmentation_id"],
        "physical_network": segment and segment["physical_network"],
        "mtu": mtu,
        "fixed_ips": port["fixed_ips"], "device_owner": port["device_owner"],
        "allowed_address_pairs": port.get("allowed_address_pairs", []),
        "port_security_enabled": port.get("port_security_enabled", True),
        "security_groups": port.get("security_groups", []),
        "qos_policy_id": port.get("qos_policy_id"),
        "network_qos_policy_id": port.get("qos_network_policy_id"),
        "profile": port.get("binding:profile", {}),
    }

"""Tell the compute service about its instances' ports (upstream's nova notifier).

Nova waits for ``network-vif-plugged`` before it starts an instance and for
``network-vif-unplugged`` / ``network-vif-deleted`` when it tears one down;
``network-changed`` makes it refresh its cache of the instance's network
info (addresses, floating IPs). Only ports of instances count: a
``device_owner`` starting with ``compute:`` and a ``device_id``.

Events are queued and POSTed together to ``/os-server-external-events``
every ``send_events_interval`` seconds by a thread of the process that
queued them (an API worker, or the RPC process where agents report status
changes), so the API never waits for the compute service. A batch that
could not be delivered is logged and retried with the next ones, a few
times, then dropped: the compute service also polls, and nothing here may
block or fail the change it announces.

Where the compute API is: ``[nova] endpoint_override`` when set (no
Keystone needed), else the Keystone catalog (``compute`` service of
``[nova] region_name``, ``endpoint_type`` interface), with the credentials
of the ``[nova]`` section (``auth_type``, ``auth_url``, ...).
"""
from __future__ import annotations

import logging
import threading
from typing import Any

import sqlalchemy as sa
from oslo_config import cfg

from neutrino.conf.nova import GROUP
from neutrino.db import tables as t

LOG = logging.getLogger(__name__)

EVENTS_PATH = "/os-server-external-events"
MAX_ATTEMPTS = 3  # deliveries of one event before it is dropped

VIF_PLUGGED, VIF_UNPLUGGED = "network-vif-plugged", "network-vif-unplugged"
VIF_DELETED, NETWORK_CHANGED = "network-vif-deleted", "network-changed"
STATUS_MAP = {"ACTIVE": "completed", "ERROR": "failed", "DOWN": "completed"}


def is_compute_port(port: dict[str, Any] | None) -> bool:
    return bool(port and port.get("device_id")
                and str(port.get("device_owner") or "").startswith("compute:"))


def status_event(port: dict[str, Any], before: str | None, after: str) -> dict[str, Any] | None:
    """Upstream's rule: DOWN after ACTIVE is unplugged; ACTIVE or ERROR after
    DOWN/BUILD (or nothing) is plugged; other transitions say nothing."""
    if before == "ACTIVE" and after == "DOWN":
        name = VIF_UNPLUGGED
    elif before in (None, "DOWN", "BUILD") and after in ("ACTIVE", "ERROR"):
        name = VIF_PLUGGED
    else:
        return None
    return {"server_uuid": port["device_id"], "name": name,
            "status": STATUS_MAP[after], "tag": port["id"]}


def changed_event(port: dict[str, Any]) -> dict[str, Any]:
    return {"server_uuid": port["device_id"], "name": NETWORK_CHANGED, "tag": port["id"]}


class ComputeApi:
    """POSTs event batches; the session is made on first use (after fork)."""

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        self.conf = conf
        self._session: Any = None

    @property
    def configured(self) -> bool:
        return bool(self.conf.nova.endpoint_override or self.conf.nova.auth_type)

    def _keystone_session(self) -> Any:
        if self._session is None:
            # deferred: keystoneauth and requests only in a process that
            # sends (issue 37 budgets an API worker's memory)
            from keystoneauth1 import loading, session
            auth = (loading.load_auth_from_conf_options(self.conf, GROUP)
                    if self.conf.nova.auth_type else None)
            self._session = (loading.load_session_from_conf_options(self.conf, GROUP, auth=auth)
                             if auth is not None else session.Session())
        return self._session

    def send(self, events: list[dict[str, Any]]) -> bool:
        """True when the compute API took the batch (200, or 207 for some)."""
        nova = self.conf.nova
        kwargs: dict[str, Any] = {"json": {"events": events}, "raise_exc": False,
                                  "headers": {"X-OpenStack-Nova-API-Version": "2.1"}}
        if nova.endpoint_override:
            url = nova.endpoint_override.rstrip("/") + EVENTS_PATH
        else:
            url = EVENTS_PATH
            kwargs["endpoint_filter"] = {"service_type": "compute", "interface": nova.endpoint_type,
                                         "region_name": nova.region_name}
        response = self._keystone_session().post(url, **kwargs)
        if response.status_code == 207:
            for item in (response.json() or {}).get("events", []):
                if item.get("code") != 200:
                    LOG.warning("compute service refused event %s: %s", item,
                                item.get("status"))
            return True
        if response.status_code >= 400:
            LOG.error("compute service answered %s to %d events: %s",
                      response.status_code, len(events), response.text[:500])
            return response.status_code < 500 and response.status_code not in (401, 403)
        LOG.info("sent %d events to the compute service", len(events))
        return True


class NovaNotifier:
    def __init__(self, conf: cfg.ConfigOpts, db: Any, api: ComputeApi | None = None) -> None:
        self.conf, self.db = conf, db
        self.api = api or ComputeApi(conf)
        self.interval = max(conf.send_events_interval, 0)
        self._pending: list[tuple[dict[str, Any], int]] = []  # (event, attempts)
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    # -- queueing ------------------------------------------------------------------

    def queue(self, event: dict[str, Any]) -> None:
        with self._lock:
            self._pending.append((event, 0))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="nova-notifier",
                                                daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            self._wake.wait(self.interval)
            self.flush()

    def flush(self) -> None:
        with self._lock:
            batch, self._pending = self._pending, []
        if not batch:
            return
        try:
            sent = self.api.send([event for event, _ in batch])
        except Exception:  # noqa: BLE001 - the compute service being away never fails us
            LOG.exception("could not send %d events to the compute service", len(batch))
            sent = False
        if sent:
            return
        retry = [(event, tries + 1) for event, tries in batch if tries + 1 < MAX_ATTEMPTS]
        dropped = len(batch) - len(retry)
        if dropped:
            LOG.error("dropping %d events the compute service did not take", dropped)
        with self._lock:
            self._pending[:0] = retry

    # -- the core plugin's after-commit events (subscribed by ``neutrino.service``) ----

    def port_updated(self, ctx: Any, original: dict[str, Any], port: dict[str, Any]) -> None:
        if self.conf.notify_nova_on_port_status_changes and is_compute_port(port) \
                and original.get("status") != port.get("status"):
            event = status_event(port, original.get("status"), port.get("status") or "")
            if event is not None:
                self.queue(event)
        if self.conf.notify_nova_on_port_data_changes and is_compute_port(port) \
                and original.get("fixed_ips") != port.get("fixed_ips"):
            self.queue(changed_event(port))

    def port_deleted(self, ctx: Any, port: dict[str, Any]) -> None:
        if is_compute_port(port):
            self.queue({"server_uuid": port["device_id"], "name": VIF_DELETED,
                        "tag": port["id"]})

    def floatingip_changed(self, ctx: Any, *states: dict[str, Any]) -> None:
        """Association, disassociation or deletion of a floating IP: the
        instance behind the port (before or after) refreshes its cache."""
        original, current = (states[0], states[-1]) if len(states) == 2 else (None, states[0])
        port_ids = {s.get("port_id") for s in (original, current) if s}
        if original is not None and original.get("port_id") == current.get("port_id") \
                and len(states) == 2:
            return  # only the description or tags changed
        port_ids.discard(None)
        if not port_ids:
            return
        p = t.ports.c
        with self.db.reader() as conn:
            rows = conn.execute(sa.select(p.id, p.device_id, p.device_owner)
                                .where(p.id.in_(sorted(port_ids))))
            ports = [dict(r._mapping) for r in rows]
        for port in ports:
            if is_compute_port(port):
                self.queue(changed_event(port))

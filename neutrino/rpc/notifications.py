"""``<resource>.<action>.start/.end`` notifications through oslo.messaging.

Upstream's notifier hook announces every successful change so that other
services (telemetry, the compute service's caches, auditors) can follow.
oslo.messaging is imported only when ``[oslo_messaging_notifications]`` is
configured: the all-in-one server should not pay its import cost for a
feature it does not use.
"""
from __future__ import annotations

import logging
from typing import Any

LOG = logging.getLogger(__name__)
SECTION = "oslo_messaging_notifications"
# Reconnection attempts a notification makes when the bus is unreachable,
# unless ``[oslo_messaging_notifications] retry`` sets a bound: its default
# (wait for ever) held every API request that changed something until the
# broker came back. None: a request sends two (start, end), and they are
# best effort; one connection attempt is still made, so a connection the
# broker dropped is replaced once it is back.
SEND_RETRIES = 0


class Notifications:
    """``publisher`` prefixes the host in ``publisher_id``: ``network`` for the
    server, ``metering`` for the metering agent, as upstream."""

    def __init__(self, conf: Any, publisher: str = "network") -> None:
        self.notifier: Any = None
        if SECTION not in conf.list_all_sections():
            return
        # deferred: oslo.messaging (and eventlet) only when notifications are configured
        import oslo_messaging
        # Upstream's exchange name, so consumers configured for Neutron work.
        oslo_messaging.set_transport_defaults(control_exchange="neutron")
        transport = oslo_messaging.get_notification_transport(conf)
        notifier = oslo_messaging.Notifier(transport, publisher_id=f"{publisher}.{conf.host}")
        if notifier.retry is None or notifier.retry < 0:
            notifier = notifier.prepare(retry=SEND_RETRIES)
        if notifier.is_enabled():
            self.notifier = notifier
            LOG.info("notifications on %s", conf.oslo_messaging_notifications.topics)

    @property
    def enabled(self) -> bool:
        return self.notifier is not None

    def info(self, ctx: Any, event_type: str, payload: dict[str, Any]) -> None:
        """Send one notification; a broken bus is logged, never fails the API call."""
        if self.notifier is None:
            return
        try:
            self.notifier.info(_context(ctx), event_type, payload)
        except Exception:  # noqa: BLE001 - notifications are best effort, as upstream
            LOG.exception("could not send %s", event_type)


def _context(ctx: Any) -> dict[str, Any]:
    if ctx is None:  # an agent's own admin context, without a user
        return {"user_id": None, "project_id": None, "tenant_id": None, "roles": ["admin"],
                "is_admin": True, "request_id": None, "global_request_id": None}
    return {"user_id": ctx.user_id, "project_id": ctx.project_id,
            "tenant_id": ctx.project_id, "roles": ctx.roles, "is_admin": ctx.is_admin,
            "request_id": ctx.request_id, "global_request_id": ctx.global_request_id}

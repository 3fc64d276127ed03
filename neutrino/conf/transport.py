"""Options of the message bus: oslo.messaging's own, registered on our
``ConfigOpts``, and the one ``transport_url`` read before them."""
from __future__ import annotations

import importlib

from oslo_config import cfg

from neutrino.conf.registry import register_missing

# Read alone, on a probe, by processes that may need no bus at all.
TRANSPORT_URL_OPT = cfg.StrOpt("transport_url", secret=True)


def register(conf: cfg.ConfigOpts) -> None:
    # deferred: oslo.messaging (and eventlet with it) only where a bus is used
    import oslo_messaging
    from oslo_messaging import opts
    oslo_messaging.set_transport_defaults(control_exchange="neutron")
    # Every group oslo.messaging reads, not only [DEFAULT]: some are read
    # before anything registers them (``oslo_messaging_tracing`` on a call).
    for group, options in opts.list_opts():
        name = None if group in (None, "DEFAULT") else getattr(group, "name", group)
        register_missing(conf, options, name)
    # Tracing and metrics options are registered on oslo.config's global
    # CONF only, yet read from ours on every call; list_opts omits them.
    for module, attr, group in _GLOBAL_ONLY:
        try:
            options = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError):  # another oslo.messaging release
            continue
        register_missing(conf, options, group)


_GLOBAL_ONLY = (
    ("oslo_messaging._tracing.client", "oslo_messaging_tracing", "oslo_messaging_tracing"),
    ("oslo_messaging._metrics.client", "oslo_messaging_metrics", "oslo_messaging_metrics"),
    ("oslo_messaging.rpc.dispatcher", "_dispatcher_opts", None),
)

"""The message bus agents and servers talk over (oslo.messaging).

Only a ``transport_url`` the operator wrote counts: oslo.messaging's own
default (``rabbit://`` on localhost) would make an all-in-one server with no
agents connect to whatever broker happens to run on the machine.

``fake://`` names the in-process bus of the all-in-one (``make run``): API,
RPC endpoints and agents in one process. oslo.messaging's fake driver only
carries messages inside one process, so every user there gets the same
transport object, and closing it is left to whoever owns the process.
"""
from __future__ import annotations

import threading
from typing import Any

from oslo_config import cfg

from neutrino.conf import transport as transport_conf


def configured_url(conf: cfg.ConfigOpts) -> str | None:
    """``[DEFAULT] transport_url`` when set (not empty) in a configuration file, else None.

    Asked by every API worker at start-up. The configuration files are read
    again for that one option rather than registering oslo.messaging's
    options on ``conf``: that import (and eventlet's with it) costs an API
    with no bus a second and 25 MB per process. ``transport_url =`` written
    empty means no bus.
    """
    if "transport_url" in conf:  # oslo.messaging's options are registered already
        location = conf.get_location("transport_url")
        if location is None or location.location == cfg.Locations.opt_default:
            return None
        return conf.transport_url or None
    probe = cfg.ConfigOpts()
    probe.register_opt(transport_conf.TRANSPORT_URL_OPT)
    args = [a for f in conf.config_file or () for a in ("--config-file", f)]
    dirs = conf.config_dir or ()
    args += [a for d in ([dirs] if isinstance(dirs, str) else dirs) for a in ("--config-dir", d)]
    probe(args=args, project="neutron", default_config_files=[], default_config_dirs=[])
    return probe.transport_url or None


def in_process(conf: cfg.ConfigOpts) -> bool:
    """True when the configured bus is the in-process one (``fake://``)."""
    url = configured_url(conf)
    return url is not None and url.split(":", 1)[0] == IN_PROCESS_SCHEME


IN_PROCESS_SCHEME = "fake"


# How long an idle RabbitMQ listener may go without looking up: it notices
# a stop (and sends the acknowledgements its handlers left) only then.
# oslo.messaging lets an idle listener's wait grow to five seconds, so a
# server or an agent with nothing to do took five seconds to stop (each of
# its listeners, stopped together; ``servers.py``). One second costs an
# idle listener one wake-up a second.
LISTENER_IDLE_WAIT_S = 1.0


def _listeners_look_up_often() -> None:
    try:
        # deferred: API workers import this module (configured_url), never oslo.messaging
        from oslo_messaging._drivers import amqpdriver
    except ImportError:  # no AMQP driver in this oslo.messaging
        return
    if getattr(amqpdriver, "ACK_REQUEUE_EVERY_SECONDS_MAX", 0) > LISTENER_IDLE_WAIT_S:
        amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MAX = LISTENER_IDLE_WAIT_S


def rpc_transport(conf: cfg.ConfigOpts) -> Any:
    # deferred: API workers import this module (configured_url), never oslo.messaging
    import oslo_messaging
    transport_conf.register(conf)
    _listeners_look_up_often()
    if in_process(conf):
        return _shared_in_process(conf)
    return oslo_messaging.get_rpc_transport(conf)


_shared: Any = None
_shared_lock = threading.Lock()


def _shared_in_process(conf: cfg.ConfigOpts) -> Any:
    """The process's one in-process transport; agents and clients that
    ``cleanup()`` theirs on stop must not empty the queues the others use."""
    global _shared
    with _shared_lock:
        if _shared is None:
            # deferred: API workers import this module (configured_url), never oslo.messaging
            from oslo_messaging import transport as transport_mod
            from oslo_messaging.rpc import transport as rpc_transport_mod

            class InProcessTransport(transport_mod.RPCTransport):  # type: ignore[misc]
                def cleanup(self) -> None:
                    """Kept open: shared by every user in this process (see
                    ``close_in_process``)."""

                def close(self) -> None:
                    super().cleanup()

            _shared = rpc_transport_mod.get_rpc_transport(
                conf, transport_cls=InProcessTransport)
        return _shared


def close_in_process() -> None:
    """Close the in-process transport (the all-in-one's last step)."""
    global _shared
    with _shared_lock:
        if _shared is not None:
            _shared.close()
            _shared = None

"""The options of a section through which a server process reaches another
service with keystoneauth (``[nova]``, ``[placement]``): its session's
(TLS files, timeout, logging) and the auth plugin's name, under
keystoneauth's names and defaults, so a keystoneauth loader reads them as
its own.

Declared here rather than taken from ``keystoneauth1.loading``: importing
that package brings keystoneauth and requests (over 150 modules, about
6 MB) into the server's master and so into every API worker it forks,
which issue 37 caps at 80 MB; a worker needs them only when it first talks
to that service (``notifiers/nova.py`` imports them then).
``tests/unit/test_keystone_client_options.py`` holds them to keystoneauth's.
"""
from __future__ import annotations

from oslo_config import cfg


def options() -> list[cfg.Opt]:
    """New option objects (a section registers its own)."""
    return [
        cfg.StrOpt("cafile", help="CA certificates (PEM) that verify the service's HTTPS."),
        cfg.StrOpt("certfile", help="Client certificate (PEM) presented to the service."),
        cfg.StrOpt("keyfile", help="Key (PEM) of the client certificate."),
        cfg.BoolOpt("insecure", default=False,
                    help="Do not verify the service's HTTPS certificate."),
        cfg.FloatOpt("timeout", help="Seconds an HTTP request to the service may take."),
        cfg.BoolOpt("collect-timing", default=False,
                    help="Collect the time each call to the service took."),
        cfg.BoolOpt("split-loggers", default=False,
                    help="Log requests and answers to separate loggers."),
        cfg.StrOpt("tls-ciphers", help="OpenSSL cipher string allowed for TLS connections "
                                       "(OpenSSL's default when unset)."),
        cfg.StrOpt("tls-min-version", choices=[(None, "the system's policy"),
                                               ("1.2", "TLS 1.2"), ("1.3", "TLS 1.3")],
                   help="Lowest TLS version accepted (the system's policy when unset)."),
        cfg.StrOpt("auth_type", deprecated_opts=[cfg.DeprecatedOpt("auth_plugin")],
                   help="keystoneauth plugin that authenticates the requests (none: "
                        "no token)."),
        cfg.StrOpt("auth_section",
                   help="Section from which the auth plugin's options are read."),
    ]

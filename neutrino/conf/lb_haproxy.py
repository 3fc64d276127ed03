"""The haproxy load-balancer provider's options: the certificate store
(Octavia's ``[certificates]`` group and its local certificate manager's
``storage_path``)."""
from __future__ import annotations

from oslo_config import cfg

from neutrino.conf.registry import register_missing

CERTIFICATE_OPTS = [
    cfg.StrOpt("storage_path", default="/var/lib/octavia/certificates/",
               help="The certificate store of TERMINATED_HTTPS listeners: a TLS "
                    "container reference names <id>.crt (the certificate), <id>.key "
                    "(its private key), optionally <id>.int (intermediates) and "
                    "<id>.pass (the key's passphrase) in this directory, as Octavia's "
                    "local certificate manager keeps them; a client CA or CRL "
                    "reference names <id>.crt. A reference that is a URL is read "
                    "by its last path segment."),
]


def register(conf: cfg.ConfigOpts) -> None:
    register_missing(conf, CERTIFICATE_OPTS, "certificates")

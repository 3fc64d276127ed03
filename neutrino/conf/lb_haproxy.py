"""The haproxy load-balancer provider's options: the certificate store
(Octavia's ``[certificates]`` group: its certificate manager, the local
one's ``storage_path``, Barbican's endpoint) and the service credentials
Barbican is read with (Octavia's ``[service_auth]``)."""
from __future__ import annotations

from oslo_config import cfg

from neutrino.conf.registry import register_missing

CERTIFICATE_OPTS = [
    cfg.StrOpt("cert_manager", default="local_cert_manager",
               choices=["local_cert_manager", "barbican_cert_manager"],
               help="Where TERMINATED_HTTPS listeners' certificates are read: "
                    "local_cert_manager, files under storage_path; "
                    "barbican_cert_manager, Barbican's containers and secrets "
                    "(the key-manager endpoint of the Keystone catalog), read "
                    "with the service credentials of [service_auth], or of "
                    "[keystone_authtoken] when [service_auth] has no auth_type."),
    cfg.StrOpt("storage_path", default="/var/lib/octavia/certificates/",
               help="The local certificate store: a TLS container reference "
                    "names <id>.crt (the certificate), <id>.key (its private "
                    "key), optionally <id>.int (intermediates) and <id>.pass (the "
                    "key's passphrase) in this directory, as Octavia's local "
                    "certificate manager keeps them; a client CA or CRL reference "
                    "names <id>.crt. A reference that is a URL is read by its "
                    "last path segment."),
    cfg.StrOpt("region_name",
               help="Region of the key-manager endpoint in the Keystone catalog."),
    cfg.StrOpt("endpoint_type", default="public",
               help="Interface of the key-manager endpoint in the Keystone catalog "
                    "(public, internal or admin)."),
    cfg.StrOpt("endpoint",
               help="Barbican's URL, used instead of the Keystone catalog's."),
]
SERVICE_AUTH = "service_auth"


def register(conf: cfg.ConfigOpts) -> None:
    # deferred: agents import conf/ too and have no use for keystoneauth1
    from keystoneauth1 import loading
    register_missing(conf, CERTIFICATE_OPTS, "certificates")
    for opts in (loading.get_session_conf_options(), loading.get_auth_common_conf_options()):
        register_missing(conf, opts, SERVICE_AUTH)

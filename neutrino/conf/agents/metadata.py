"""The metadata agent's options (``metadata_agent.ini``), with upstream's
names and defaults.

``metadata_proxy_socket`` is also read by the L3 and DHCP agents: their
namespace proxies connect to it, as upstream registers it for them.
"""
from __future__ import annotations

from oslo_config import cfg

from neutrino.conf.registry import register_missing

SOCKET_OPTS = [
    cfg.StrOpt("metadata_proxy_socket", default="$state_path/metadata_proxy",
               help="Location of the metadata agent's UNIX domain socket."),
]

AGENT_OPTS = [
    cfg.HostAddressOpt("nova_metadata_host", default="127.0.0.1",
                       help="IP address or DNS name of the compute metadata server."),
    cfg.PortOpt("nova_metadata_port", default=8775,
                help="TCP port of the compute metadata server."),
    cfg.StrOpt("nova_metadata_protocol", default="http", choices=["http", "https"],
               help="Protocol to reach the compute metadata server."),
    cfg.BoolOpt("nova_metadata_insecure", default=False,
                help="Do not verify the compute metadata server's certificate (https)."),
    cfg.StrOpt("metadata_proxy_shared_secret", default="", secret=True,
               help="Shared secret to sign instance ids (X-Instance-ID-Signature)."),
    cfg.StrOpt("auth_ca_cert",
               help="CA certificate file to verify the compute metadata server with."),
    cfg.StrOpt("nova_client_cert", default="",
               help="Client certificate for the compute metadata server."),
    cfg.StrOpt("nova_client_priv_key", default="",
               help="Private key of the client certificate."),
    cfg.IntOpt("metadata_workers", min=0,
               help="Threads answering requests (default: half the CPUs, at least 1)."),
    cfg.IntOpt("metadata_backlog", default=4096, min=1,
               help="Listen backlog of the metadata agent's socket."),
    cfg.IntOpt("nova_metadata_timeout", default=60, min=1,
               help="Seconds to wait for the compute metadata server (neutrino)."),
]


def register(conf: cfg.ConfigOpts) -> None:
    register_missing(conf, SOCKET_OPTS + AGENT_OPTS)


def register_socket(conf: cfg.ConfigOpts) -> None:
    """What the agents whose proxies connect to the metadata agent read."""
    register_missing(conf, SOCKET_OPTS)

"""Options of the nova notifier (neutron.conf ``[DEFAULT]`` and ``[nova]``),
with upstream's names and defaults.

``[nova]`` also takes keystoneauth's session and auth options, as upstream's
does, so that the notifier can find the compute API through Keystone.
"""
from __future__ import annotations

from oslo_config import cfg

from neutrino.conf import keystone_client
from neutrino.conf.registry import register_missing

OPTS = [
    cfg.BoolOpt("notify_nova_on_port_status_changes", default=True,
                help="Send notification to nova when port status changes"),
    cfg.BoolOpt("notify_nova_on_port_data_changes", default=True,
                help="Send notification to nova when port data (fixed_ips/floatingip) "
                     "changes so nova can update its cache."),
    cfg.IntOpt("send_events_interval", default=2,
               help="Number of seconds between sending events to nova if there are "
                    "any events to send."),
]
NOVA_OPTS = [
    cfg.StrOpt("region_name", help="Name of nova region to use. Useful if keystone "
                                   "manages more than one region."),
    cfg.StrOpt("endpoint_type", default="public", choices=["public", "admin", "internal"],
               help="Type of the nova endpoint to use. This endpoint will be looked up "
                    "in the keystone catalog and should be one of public, internal or "
                    "admin."),
    cfg.StrOpt("endpoint_override",
               help="The compute API's URL, used as is instead of the Keystone catalog "
                    "(requests then carry no token unless auth_type is set)."),
]
GROUP = "nova"


def register(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS)
    conf.register_opts(NOVA_OPTS, GROUP)
    register_missing(conf, keystone_client.options(), GROUP)

"""The DHCP agent's options (``neutrino.conf.agents.dhcp``) as the values
its dnsmasq and metadata parts take."""
from __future__ import annotations

from oslo_config import cfg

from neutrino.agents.dhcp.dnsmasq import Settings
from neutrino.agents.dhcp.metadata import Flags


def metadata_flags(conf: cfg.ConfigOpts) -> Flags:
    return Flags(enable_isolated_metadata=conf.enable_isolated_metadata,
                 force_metadata=conf.force_metadata)


def settings(conf: cfg.ConfigOpts) -> Settings:
    return Settings(dns_domain=conf.dns_domain, dhcp_lease_duration=conf.dhcp_lease_duration,
                    dnsmasq_lease_max=conf.dnsmasq_lease_max,
                    dnsmasq_dns_servers=tuple(conf.dnsmasq_dns_servers or ()),
                    dnsmasq_local_resolv=conf.dnsmasq_local_resolv,
                    dnsmasq_config_file=conf.dnsmasq_config_file or "",
                    dhcp_broadcast_reply=conf.dhcp_broadcast_reply,
                    dhcp_renewal_time=conf.dhcp_renewal_time,
                    dhcp_rebinding_time=conf.dhcp_rebinding_time)

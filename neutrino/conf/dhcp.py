"""Options of DHCP agent scheduling and notification, with upstream's names
and defaults (neutron.conf ``[DEFAULT]``).

Registered with the other options so that a bad value stops start-up.
"""
from __future__ import annotations

from oslo_config import cfg

DHCP_OPTS = [
    cfg.BoolOpt("dhcp_agent_notification", default=True,
                help="Allow sending resource operation notification to DHCP agent."),
    cfg.StrOpt("network_scheduler_driver",
               default="neutron.scheduler.dhcp_agent_scheduler.WeightScheduler",
               help="Driver to use for scheduling networks to a DHCP agent "
                    "(WeightScheduler or ChanceScheduler, by upstream's class path "
                    "or by their short name)."),
    cfg.BoolOpt("network_auto_schedule", default=True,
                help="Allow auto scheduling networks to a DHCP agent."),
    cfg.BoolOpt("allow_automatic_dhcp_failover", default=True,
                help="Automatically remove networks from offline DHCP agents."),
    cfg.IntOpt("dhcp_agents_per_network", default=1, min=1,
               help="Number of DHCP agents scheduled to host a project network."),
    cfg.BoolOpt("enable_services_on_agents_with_admin_state_down", default=False,
                help="Enable services on an agent with admin_state_up False. Agents "
                     "with admin_state_up False are never selected for automatic "
                     "scheduling; manual scheduling to them is possible when True."),
    cfg.StrOpt("dhcp_load_type", default="networks",
               choices=["networks", "subnets", "ports"],
               help="The resource whose count a DHCP agent reports as its load; "
                    "the WeightScheduler picks the least loaded agents."),
]


def register(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(DHCP_OPTS)

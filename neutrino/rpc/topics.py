"""RPC topics and versions, with upstream's names so the bus reads the same.

Compatibility rule: a server endpoint's version is the newest it serves;
it answers every call of the same major version up to that minor. A new
method or argument bumps the minor; removing or changing one bumps the
major (and the server then serves both for one release).
"""
from __future__ import annotations

REPORTS = "q-reports-plugin"  # agents -> server: state reports
PLUGIN = "q-plugin"  # agents -> server: L2/DHCP/security group calls
L3PLUGIN = "q-l3-plugin"  # L3 agents -> server
METERING_PLUGIN = "metering_plugin"  # metering agents -> server
METERING_AGENT = "metering_agent"  # server -> metering agents (casts to a host)
BGP_PLUGIN = "q-bgp-plugin"  # BGP DR agents -> server
BGP_DRAGENT = "bgp_dragent"  # server -> BGP DR agents (casts to a host)
# the haproxy load-balancer provider and its agents (upstream LBaaS v2's topics)
LOADBALANCER_PLUGIN = "n-lbaasv2-plugin"  # load-balancer agents -> server
LOADBALANCER_AGENT = "lbaasv2_agent"  # server -> load-balancer agents (casts to a host)
# neutrino's own: ``neutrino audit`` -> an agent of a host: ``realised_state``
# (a call: what the agent has realised) and ``resync`` (a cast: a full pass);
# the trace plugin -> the OVS and L3 agents of a host: ``trace_packet`` (1.1,
# a call: one packet run through the host, ``trace --live``)
AUDIT_OVS = "neutrino-audit-ovs"
AUDIT_DHCP = "neutrino-audit-dhcp"
AUDIT_L3 = "neutrino-audit-l3"
AUDIT_VERSION = "1.1"

STATE_VERSION = "1.4"  # report_state (1.0), has_alive_neutron_server (1.2), and more since

# RPC namespaces: upstream's neutron-lib serves the DHCP, metadata, security
# group, DVR, state and resources calls at namespace None; neutrino's agents
# of the previous release still call the DHCP and metadata ones at these
# names, so the server accepts both (oslo.messaging's ``legacy_namespaces``).
LEGACY_DHCP_NAMESPACE = "dhcp"
LEGACY_METADATA_NAMESPACE = "metadata"

# server -> agents: fanouts of upstream's ``<AGENT>-<resource>-<operation>``
AGENT = "q-agent-notifier"
PORT_UPDATE = f"{AGENT}-port-update"
PORT_DELETE = f"{AGENT}-port-delete"
NETWORK_UPDATE = f"{AGENT}-network-update"
NETWORK_DELETE = f"{AGENT}-network-delete"
SECURITY_GROUP_UPDATE = f"{AGENT}-security_group-update"
L2POPULATION_UPDATE = f"{AGENT}-l2population-update"
DVR_UPDATE = f"{AGENT}-dvr-update"  # ``dvr``: every host's DVR MAC, when one is made
# ``binding-extended``: a port's binding moved (upstream's agents listen; ours
# learn it from the ``port_update`` of the host change)
BINDING_ACTIVATE = f"{AGENT}-binding-activate"
BINDING_DEACTIVATE = f"{AGENT}-binding-deactivate"

# resources RPC (QoS policies): agents pull from the server, the server pushes
RESOURCES_PULL = "q-resources-server"
QOS_POLICY_PUSH = "neutron-vo-QosPolicy-1.10"
# logging: agents ask for the logs of their ports; the server pushes changed logs
LOGGING_PLUGIN = "logging-plugin"
LOGGING_NAMESPACE = "logging-plugin"
LOGGING_VERSION = "1.1"  # get_sg_log_info_for_port / _for_log_resources, resource_type
LOG_PUSH = "neutron-vo-Log-1.0"
# local IPs: agents pull every port association, the server pushes made and deleted ones
LOCAL_IP_PUSH = "neutron-vo-LocalIPAssociation-1.0"
LOCAL_IP_NAMESPACE = "local_ip"

FIREWALL_PLUGIN = "q-firewall-plugin"  # FWaaS agent extensions -> server
FIREWALL_AGENT = "firewall_agent"  # server -> FWaaS agent extensions (fanout)

SG_AGENT_VERSION = "1.1"  # security_groups_rule_updated / _member_updated
SG_PLUGIN_VERSION = "1.3"  # security_group_rules_for_devices / _info_for_devices

# VPN as a service, upstream's IPsec driver topics: the L3 agents' VPN
# extension calls the server on IPSEC_DRIVER (get_vpn_services_on_host,
# update_status); the server casts vpnservice_updated to a host on IPSEC_AGENT.
IPSEC_DRIVER = "ipsec_driver"
IPSEC_AGENT = "ipsec_agent"
IPSEC_VERSION = "1.0"

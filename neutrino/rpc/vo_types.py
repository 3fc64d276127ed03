"""The versioned objects upstream's L2 agents keep in their cache, declared
once: each type at the version upstream Neutron 29's agents ask for (their
push fanouts are named after it), its fields with upstream's names and
kinds, and where each field's value comes from in the values neutrino's
reader hands over (``plugins/ml2/vo_rpc.py``: a resource as the API shows
it, completed with what the API does not show, such as binding levels).

A field whose value neutrino does not keep is declared with its default
(or None where upstream's field is nullable), never left out: an agent that
reads a field missing from an object tries to load it from a database it
does not have.
"""
from __future__ import annotations

from neutrino.rpc.versioned_objects import Field, ObjectType, Registry


def _standard(*, description: bool = True) -> tuple[Field, ...]:
    """Upstream's standard attributes (revision number and timestamps)."""
    found = (Field("revision_number", "int", default=0),
             Field("created_at", "string"), Field("updated_at", "string"))
    return (Field("description", "string"), *found) if description else found


NETWORK_SEGMENT = ObjectType("NetworkSegment", "1.0", (
    Field("id", "uuid"), Field("network_id", "uuid"), Field("name", "string"),
    Field("network_type", "string"), Field("physical_network", "string"),
    Field("segmentation_id", "int"), Field("is_dynamic", "bool", default=False),
    Field("segment_index", "int", default=0), Field("hosts", "strings"), *_standard()))

PORT_BINDING = ObjectType("PortBinding", "1.0", (
    Field("port_id", "uuid"), Field("host", "string", default=""),
    Field("profile", "json", default={}), Field("vif_type", "string"),
    Field("vif_details", "json", default={}), Field("vnic_type", "string", default="normal"),
    Field("status", "string", default="ACTIVE")))

PORT_BINDING_LEVEL = ObjectType("PortBindingLevel", "1.1", (
    Field("port_id", "uuid"), Field("host", "string"), Field("level", "int"),
    Field("driver", "string"), Field("segment_id", "uuid"),
    Field("segment", "object", nested="NetworkSegment")))

IP_ALLOCATION = ObjectType("IPAllocation", "1.0", (
    Field("port_id", "uuid"), Field("subnet_id", "uuid"), Field("network_id", "uuid"),
    Field("ip_address", "ip")))

ALLOWED_ADDRESS_PAIR = ObjectType("AllowedAddressPair", "1.0", (
    Field("port_id", "uuid"), Field("mac_address", "mac"), Field("ip_address", "cidr")))

PORT_SECURITY = ObjectType("PortSecurity", "1.0", (
    Field("id", "uuid"), Field("port_security_enabled", "bool", default=True)))

NETWORK_PORT_SECURITY = ObjectType("NetworkPortSecurity", "1.0", (
    Field("id", "uuid"), Field("port_security_enabled", "bool", default=True)))

EXTRA_DHCP_OPT = ObjectType("ExtraDhcpOpt", "1.1", (
    Field("id", "uuid"), Field("port_id", "uuid"), Field("opt_name", "string"),
    Field("opt_value", "string"), Field("ip_version", "int", default=4)))

DISTRIBUTED_PORT_BINDING = ObjectType("DistributedPortBinding", "1.0", (
    Field("port_id", "uuid"), Field("host", "string"), Field("router_id", "string"),
    Field("profile", "json", default={}), Field("vif_type", "string"),
    Field("vif_details", "json", default={}), Field("vnic_type", "string", default="normal"),
    Field("status", "string")))

PORT_DNS = ObjectType("PortDNS", "1.1", (
    Field("port_id", "uuid"), Field("dns_name", "string", default=""),
    Field("dns_domain", "string", default=""), Field("current_dns_name", "string", default=""),
    Field("current_dns_domain", "string", default=""),
    Field("previous_dns_name", "string", default=""),
    Field("previous_dns_domain", "string", default="")))

PORT_DATA_PLANE_STATUS = ObjectType("PortDataPlaneStatus", "1.0", (
    Field("port_id", "uuid"), Field("data_plane_status", "string")))

PORT_HINTS = ObjectType("PortHints", "1.0", (
    Field("port_id", "uuid"), Field("hints", "json", default={})))

PORT = ObjectType("Port", "1.11", (
    Field("id", "uuid"), Field("project_id", "string"), Field("name", "string"),
    Field("network_id", "uuid"), Field("mac_address", "mac"),
    Field("admin_state_up", "bool", default=True), Field("device_id", "string", default=""),
    Field("device_owner", "string", default=""), Field("status", "string", default="DOWN"),
    Field("fixed_ips", "objects", nested="IPAllocation", default=[]),
    Field("allowed_address_pairs", "objects", nested="AllowedAddressPair", default=[]),
    Field("bindings", "objects", nested="PortBinding", default=[]),
    Field("binding_levels", "objects", nested="PortBindingLevel", default=[]),
    Field("distributed_bindings", "objects", nested="DistributedPortBinding", default=[]),
    Field("dhcp_options", "objects", nested="ExtraDhcpOpt", default=[]),
    Field("security", "object", nested="PortSecurity"),
    Field("security_group_ids", "uuid_set", source="security_groups", default=[]),
    Field("qos_policy_id", "uuid"), Field("qos_network_policy_id", "uuid"),
    Field("dns", "object", nested="PortDNS"),
    Field("data_plane_status", "object", nested="PortDataPlaneStatus"),
    Field("hints", "object", nested="PortHints"),
    Field("device_profile", "string"), Field("numa_affinity_policy", "string"),
    Field("hardware_offload_type", "string"), Field("trusted", "bool"),
    Field("pvlan_type", "string"), Field("pvlan_community", "string"),
    *_standard()))

NETWORK = ObjectType("Network", "1.3", (
    Field("id", "uuid"), Field("project_id", "string"), Field("name", "string"),
    Field("admin_state_up", "bool", default=True), Field("status", "string"),
    Field("mtu", "int", default=1500), Field("shared", "bool", default=False),
    Field("availability_zone_hints", "strings", default=[]),
    Field("vlan_transparent", "bool"), Field("qinq", "bool"), Field("pvlan", "bool"),
    Field("dns_domain", "string"), Field("qos_policy_id", "uuid"),
    Field("security", "object", nested="NetworkPortSecurity"),
    Field("segments", "objects", nested="NetworkSegment", default=[]),
    *_standard()))

IP_ALLOCATION_POOL = ObjectType("IPAllocationPool", "1.0", (
    Field("id", "uuid"), Field("subnet_id", "uuid"), Field("start", "ip"),
    Field("end", "ip")))

DNS_NAME_SERVER = ObjectType("DNSNameServer", "1.0", (
    Field("address", "string"), Field("order", "int"), Field("subnet_id", "uuid")))

ROUTE = ObjectType("Route", "1.0", (
    Field("destination", "cidr"), Field("nexthop", "ip"), Field("subnet_id", "uuid")))

SUBNET = ObjectType("Subnet", "1.2", (
    Field("id", "uuid"), Field("project_id", "string"), Field("name", "string"),
    Field("network_id", "uuid"), Field("segment_id", "uuid"),
    Field("subnetpool_id", "string"), Field("ip_version", "int"), Field("cidr", "cidr"),
    Field("gateway_ip", "ip"), Field("enable_dhcp", "bool"),
    Field("ipv6_ra_mode", "string"), Field("ipv6_address_mode", "string"),
    Field("allocation_pools", "objects", nested="IPAllocationPool", default=[]),
    Field("dns_nameservers", "objects", nested="DNSNameServer", default=[]),
    Field("host_routes", "objects", nested="Route", default=[]),
    Field("service_types", "strings", default=[]), Field("shared", "bool", default=False),
    Field("external", "bool", default=False), Field("dns_publish_fixed_ip", "bool"),
    *_standard()))

SECURITY_GROUP_RULE = ObjectType("SecurityGroupRule", "1.3", (
    Field("id", "uuid"), Field("project_id", "string"),
    Field("security_group_id", "uuid"), Field("remote_group_id", "uuid"),
    Field("remote_address_group_id", "uuid"), Field("direction", "string"),
    Field("ethertype", "string"), Field("protocol", "string"),
    Field("port_range_min", "int"), Field("port_range_max", "int"),
    Field("remote_ip_prefix", "cidr"), Field("normalized_cidr", "cidr"),
    Field("belongs_to_default_sg", "bool", default=False), *_standard()))

SECURITY_GROUP = ObjectType("SecurityGroup", "1.6", (
    Field("id", "uuid"), Field("project_id", "string"), Field("name", "string"),
    Field("stateful", "bool", default=True), Field("is_default", "bool", default=False),
    Field("shared", "bool", default=False),
    Field("rules", "objects", nested="SecurityGroupRule", source="security_group_rules",
          default=[]),
    *_standard()))

ADDRESS_ASSOCIATION = ObjectType("AddressAssociation", "1.0", (
    Field("address", "cidr"), Field("address_group_id", "uuid")))

ADDRESS_GROUP = ObjectType("AddressGroup", "1.2", (
    Field("id", "uuid"), Field("project_id", "string"), Field("name", "string"),
    Field("shared", "bool", default=False),
    Field("addresses", "objects", nested="AddressAssociation", default=[]),
    *_standard()))

OBJECTS = Registry((
    NETWORK_SEGMENT, PORT_BINDING, PORT_BINDING_LEVEL, IP_ALLOCATION, ALLOWED_ADDRESS_PAIR,
    PORT_SECURITY, NETWORK_PORT_SECURITY, EXTRA_DHCP_OPT, DISTRIBUTED_PORT_BINDING, PORT_DNS,
    PORT_DATA_PLANE_STATUS, PORT_HINTS, PORT, NETWORK, IP_ALLOCATION_POOL,
    DNS_NAME_SERVER, ROUTE, SUBNET, SECURITY_GROUP_RULE, SECURITY_GROUP, ADDRESS_ASSOCIATION,
    ADDRESS_GROUP))

# What upstream's agents pull and are pushed (the others travel inside them).
TOP_LEVEL = ("Port", "Network", "Subnet", "SecurityGroup", "SecurityGroupRule",
             "AddressGroup")

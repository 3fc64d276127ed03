"""Neutron's error vocabulary.

Clients (tempest, openstacksdk, gophercloud) branch on the HTTP code and on
``NeutronError.type``, which is the class name; so every error a user can see
is a class here named exactly as upstream names it, carrying its HTTP code.
Every layer raises these; only the API layer turns them into responses.
"""
from __future__ import annotations

from collections.abc import Callable


class NeutronException(Exception):
    """Base of every user-visible error; ``message`` is a format string."""

    code = 500
    message = "An unknown exception occurred."

    def __init__(self, message: str | None = None, **kwargs: object) -> None:
        self.kwargs = kwargs
        text = message if message is not None else self.message
        try:
            text = text % kwargs if kwargs else text
        except (KeyError, TypeError, ValueError):
            pass
        self.msg = text
        super().__init__(text)

    @property
    def type(self) -> str:
        return type(self).__name__


class BadRequest(NeutronException):
    code = 400
    message = "Bad %(resource)s request: %(msg)s."


class HTTPBadRequest(BadRequest):
    """What upstream's web layer answers for a body it cannot use at all."""

    message = "%(msg)s"


class InvalidInput(BadRequest):
    message = "Invalid input for operation: %(error_message)s."


class MalformedRequestBody(BadRequest):
    message = "Malformed request body: %(reason)s."


class InvalidAllocationPool(BadRequest):
    message = "The allocation pool %(pool)s is not valid."


class OutOfBoundsAllocationPool(BadRequest):
    message = ("The allocation pool %(pool)s spans beyond the subnet cidr "
               "%(subnet_cidr)s.")


class InvalidIpForSubnet(BadRequest):
    message = "IP address %(ip_address)s is not a valid IP for the specified subnet."


class AllocationOnAutoAddressSubnet(BadRequest):
    message = ("IPv6 address %(ip)s cannot be directly assigned to a port on "
               "subnet %(subnet_id)s as the subnet is configured for automatic "
               "addresses")


class AllowedAddressPairsMissingIP(BadRequest):
    message = "AllowedAddressPair must contain ip_address"


class InvalidIpForNetwork(BadRequest):
    message = ("IP address %(ip_address)s is not a valid IP for any of the "
               "subnets on the specified network.")


class IllegalSubnetPoolPrefixBounds(BadRequest):
    message = ("Illegal prefix bounds: %(prefix_type)s=%(prefixlen)s, "
               "%(base_prefix_type)s=%(base_prefixlen)s.")


class IllegalSubnetPoolPrefixUpdate(BadRequest):
    message = "Illegal update to prefixes: %(msg)s."


class IllegalSubnetPoolAssociationToAddressScope(BadRequest):
    message = ("Illegal subnetpool association: subnetpool %(subnetpool_id)s "
               "cannot be associated with address scope %(address_scope_id)s.")


class SubnetAllocationError(BadRequest):
    message = "Failed to allocate subnet: %(reason)s."


class PrefixVersionMismatch(BadRequest):
    message = "Cannot mix IPv4 and IPv6 prefixes in a subnet pool."


class MinPrefixSubnetAllocationError(BadRequest):
    message = ("Unable to allocate subnet with prefix length %(prefixlen)s, "
               "minimum allowed prefix is %(min_prefixlen)s.")


class MaxPrefixSubnetAllocationError(BadRequest):
    message = ("Unable to allocate subnet with prefix length %(prefixlen)s, "
               "maximum allowed prefix is %(max_prefixlen)s.")


class NotAuthorized(NeutronException):
    code = 403
    message = "Not authorized."


class PolicyNotAuthorized(NotAuthorized):
    message = "rule:%(action)s is disallowed by policy"

    def __init__(self, message: str | None = None, **kwargs: object) -> None:
        super().__init__(message, **kwargs)


class AdminRequired(NotAuthorized):
    message = "User does not have admin privileges: %(reason)s."


class NotFound(NeutronException):
    code = 404
    message = "An unknown exception occurred."


class ResourceNotFound(NotFound):
    message = "The resource could not be found."


class NetworkNotFound(NotFound):
    message = "Network %(net_id)s could not be found."


class SubnetNotFound(NotFound):
    message = "Subnet %(subnet_id)s could not be found."


class PortNotFound(NotFound):
    message = "Port %(port_id)s could not be found."


class SubnetPoolNotFound(NotFound):
    message = "Subnet pool %(subnetpool_id)s could not be found."


class TagNotFound(NotFound):
    message = "Tag %(tag)s could not be found."


class ExtensionNotFound(NotFound):
    message = "Extension with alias %(extension_alias)s does not exist."


class Conflict(NeutronException):
    code = 409
    message = "A conflict occurred."


class OverlappingAllocationPools(Conflict):
    # Upstream answers 409 here, unlike the other allocation-pool errors.
    message = ("Found overlapping allocation pools: %(pool_1)s %(pool_2)s "
               "for subnet %(subnet_cidr)s.")


class NoVRIDAvailable(Conflict):
    message = ("No more Virtual Router Identifier (VRID) available when creating "
               "router %(router_id)s. The limit of number of HA Routers per tenant "
               "is 254.")


class InUse(Conflict):
    message = "The resource is in use."


class GatewayConflictWithAllocationPools(InUse):
    message = ("Gateway ip %(ip_address)s conflicts with allocation pool "
               "%(pool)s.")


class InvalidSharedSetting(Conflict):
    message = ("Unable to reconfigure sharing settings for network %(network)s. "
               "Multiple projects are using it.")


class SubnetPoolQuotaExceeded(Conflict):
    message = "Per-project subnet pool prefix quota exceeded."


class NetworkInUse(InUse):
    message = ("Unable to complete operation on network %(net_id)s. "
               "There are one or more ports still in use on the network, id for "
               "these ports is: %(port_ids)s.")


class SubnetInUse(InUse):
    message = ("Unable to complete operation on subnet %(subnet_id)s: "
               "%(reason)s.")


class NetworkMTUSubnetConflict(Conflict):
    message = ("MTU of %(net_id)s is not valid, subnet requires a "
               "minimum of %(mtu)s")


class GatewayIpInUse(InUse):
    message = ("Current gateway ip %(ip_address)s already in use "
               "by port %(port_id)s. Unable to update.")


class SubnetPoolDeleteError(BadRequest):
    message = "Unable to delete subnet pool: %(reason)s."


class SubnetPoolInUse(InUse):
    message = ("Unable to complete operation on subnet pool %(subnet_pool_id)s. "
               "%(reason)s.")


class IpAddressInUse(InUse):
    message = ("Unable to complete operation for network %(net_id)s. "
               "The IP address %(ip_address)s is in use.")


class IpAddressAlreadyAllocated(Conflict):
    message = ("IP address %(ip)s already allocated in subnet %(subnet_id)s")


class IpAddressGenerationFailure(Conflict):
    message = "No more IP addresses available on network %(net_id)s."


class DuplicatedHANetwork(Conflict):
    message = "Project %(project_id)s already has a HA network."


class IpAddressGenerationFailureNoMatchingSubnet(IpAddressGenerationFailure):
    message = ("No valid service subnet for the given device owner, network "
               "%(network_id)s, service type %(service_type)s.")


class InvalidSubnetServiceType(InvalidInput):
    message = "Subnet service type %(service_type)s does not correspond to a valid device owner."


class InvalidInputSubnetServiceType(InvalidInput):
    message = "Subnet service type %(service_type)s is not a string."


class NeutronDbObjectDuplicateEntry(Conflict):
    message = ("Failed to create a duplicate %(object_type)s: for attribute(s) "
               "%(attributes)s with value(s) %(values)s")


class PortBound(InUse):
    message = ("Unable to complete operation on port %(port_id)s, port is already bound, "
               "port type: %(vif_type)s, old_mac %(old_mac)s, new_mac %(new_mac)s.")


class PortBoundNUMAAffinityPolicy(InUse):
    message = ("Unable to complete operation on port %(port_id)s, port is already bound "
               "to host %(host_id)s, numa_affinity_policy value given "
               "%(numa_affinity_policy)s.")


class MacAddressInUse(InUse):
    message = ("Unable to complete operation for network %(net_id)s. "
               "The mac address %(mac)s is in use.")


class MacAddressGenerationFailure(NeutronException):
    code = 503
    message = "Unable to generate unique mac on network %(net_id)s."


class HostMacAddressGenerationFailure(NeutronException):
    code = 503
    message = "Unable to generate unique DVR mac for %(host)s."


class SubnetOverlap(BadRequest):
    message = ("Invalid input for operation: Requested subnet with cidr: "
               "%(cidr)s for network: %(network_id)s overlaps with another "
               "subnet.")


class HostRoutesExhausted(BadRequest):
    message = ("Unable to complete operation for %(subnet_id)s. The number of "
               "host routes exceeds the limit %(quota)s.")


class DNSNameServersExhausted(BadRequest):
    message = ("Unable to complete operation for %(subnet_id)s. The number of "
               "DNS nameservers exceeds the limit %(quota)s.")


class RevisionNumberConstraintFailed(NeutronException):
    code = 412
    message = ("Constrained to %(expected)s, but current revision is "
               "%(current)s")


class ServiceUnavailable(NeutronException):
    code = 503
    message = "The service is unavailable."


class TooManyExternalNetworks(NeutronException):
    pass


class NotAuthenticated(NeutronException):
    code = 401
    message = "Authentication required"


class MethodNotAllowed(NeutronException):
    code = 405
    message = "The method is not allowed for this resource."


class OverQuota(Conflict):
    message = "Quota exceeded for resources: %(overs)s."


class InvalidQuotaValue(Conflict):
    message = ("Change would make usage less than 0 for the following "
               "resources: %(unders)s.")


# -- ML2 segments ----------------------------------------------------------------

class NoNetworkAvailable(ServiceUnavailable):
    # The source documents' wording ("tenant"); upstream now says "project".
    message = ("Unable to create the network. No tenant network is available "
               "for allocation.")


class VlanIdInUse(InUse):
    message = ("Unable to create the network. The VLAN %(vlan_id)s on physical "
               "network %(physical_network)s is in use.")


class TunnelIdInUse(InUse):
    message = "Unable to create the network. The tunnel ID %(tunnel_id)s is in use."


class FlatNetworkInUse(InUse):
    message = ("Unable to create the flat network. Physical network "
               "%(physical_network)s is in use.")


class SegmentsSetInConjunctionWithProviders(InvalidInput):
    message = "Segments and provider values cannot both be set."


class SegmentsContainDuplicateEntry(InvalidInput):
    message = "Duplicate segment entry in request."


# -- RBAC (``/v2.0/rbac-policies``) ------------------------------------------------

class DuplicateRbacPolicy(Conflict):
    message = "An RBAC policy already exists with those values."


class RbacPolicyNotFound(NotFound):
    # Upstream answers before it knows the entry's type.
    message = "RBAC policy of type %(object_type)s with ID %(id)s not found"


class ExternalNetworkInUse(Conflict):
    message = ("External network %(net_id)s cannot be updated to be made non-external, "
               "since it has existing gateway ports.")


class RbacPolicyInUse(Conflict):
    message = ("RBAC policy on object %(object_id)s cannot be removed because other "
               "objects depend on it.\nDetails: %(details)s")


class InvalidActionForType(InvalidInput):
    message = ("Invalid action '%(action)s' for object type '%(object_type)s'. "
               "Valid actions: %(valid_actions)s")


class AgentNotFound(NotFound):
    message = "Agent %(id)s could not be found."


class AvailabilityZoneNotFound(NotFound):
    message = "AvailabilityZone %(availability_zone)s could not be found."


# -- BGP dynamic routing (``bgp``, ``bgp_dragent_scheduler``) ---------------------------

class BgpSpeakerNotFound(NotFound):
    message = "BGP speaker %(id)s could not be found."


class BgpPeerNotFound(NotFound):
    message = "BGP peer %(id)s could not be found."


class BgpPeerNotAuthenticated(NotFound):
    """A password for a peer without authentication: upstream's 404."""
    message = "BGP peer %(bgp_peer_id)s not authenticated."


class BgpSpeakerPeerNotAssociated(NotFound):
    message = ("BGP peer %(bgp_peer_id)s is not associated with "
               "BGP speaker %(bgp_speaker_id)s.")


class BgpSpeakerNetworkNotAssociated(NotFound):
    message = ("Network %(network_id)s is not associated with "
               "BGP speaker %(bgp_speaker_id)s.")


class BgpSpeakerNetworkBindingError(Conflict):
    message = "Network %(network_id)s is already bound to BgpSpeaker %(bgp_speaker_id)s."


class DuplicateBgpPeerIpException(Conflict):
    message = ("BGP Speaker %(bgp_speaker_id)s is already configured to peer with a BGP "
               "Peer at %(peer_ip)s, it cannot peer with BGP Peer %(bgp_peer_id)s.")


class InvalidBgpPeerMd5Authentication(BadRequest):
    message = "A password must be supplied when using auth_type md5."


class DrAgentInvalid(AgentNotFound):
    message = "BgpDrAgent %(id)s is invalid or has been disabled."


class DrAgentNotHostingBgpSpeaker(NotFound):
    message = "BGP speaker %(bgp_speaker_id)s is not hosted by the BgpDrAgent %(agent_id)s."


class DrAgentAssociationError(Conflict):
    message = "BgpDrAgent %(agent_id)s is already associated to a BGP speaker."


# -- router scheduling (``l3_agent_scheduler``) ---------------------------------------

class InvalidL3Agent(AgentNotFound):
    message = "Agent %(id)s is not a L3 Agent or has been disabled"


class RouterHostedByL3Agent(Conflict):
    message = "The router %(router_id)s has been already hosted by the L3 Agent %(agent_id)s."


class RouterNotHostedByL3Agent(Conflict):
    message = "The router %(router_id)s is not hosted by the L3 Agent %(agent_id)s."


class RouterSchedulingFailed(Conflict):
    message = "Failed scheduling router %(router_id)s to the L3 Agent %(agent_id)s."


class RouterReschedulingFailed(Conflict):
    message = "Failed rescheduling router %(router_id)s: no eligible l3 agent found."


class DVRL3CannotAssignToDvrAgent(Conflict):
    message = "Not allowed to manually assign a router to an agent in 'dvr' mode."


class RouterL3AgentMismatch(Conflict):
    message = ("Cannot host %(router_type)s router %(router_id)s on %(agent_mode)s L3 agent "
               "%(agent_id)s.")


class DVRL3CannotRemoveFromDvrAgent(Conflict):
    message = "Not allowed to manually remove a router from an agent in 'dvr' mode."


# -- DHCP agent scheduler (``dhcp_agent_scheduler``) -------------------------------

class InvalidDHCPAgent(AgentNotFound):
    message = "Agent %(id)s is not a valid DHCP Agent or has been disabled."


class NetworkHostedByDHCPAgent(Conflict):
    message = ("The network %(network_id)s has been already hosted by the DHCP Agent "
               "%(agent_id)s.")


class NetworkNotHostedByDhcpAgent(Conflict):
    message = "The network %(network_id)s is not hosted by the DHCP Agent %(agent_id)s."



# -- address scopes (``address-scope``) -----------------------------------------------

class AddressScopeNotFound(NotFound):
    message = "Address scope %(address_scope_id)s could not be found."


class AddressScopeInUse(InUse):
    message = ("Unable to complete operation on address scope %(address_scope_id)s. "
               "There are one or more subnet pools in use on the address scope.")


class AddressScopeUpdateError(BadRequest):
    message = "Unable to update address scope %(address_scope_id)s : %(reason)s."


class AddressScopePrefixConflict(Conflict):
    message = ("Failed to associate address scope: subnetpools within an address "
               "scope must have unique prefixes.")


class IllegalSubnetPoolIpVersionAssociationToAddressScope(BadRequest):
    message = ("Illegal subnetpool association: subnetpool %(subnetpool_id)s cannot "
               "associate with address scope %(address_scope_id)s because subnetpool "
               "ip_version is not %(ip_version)s.")


class IllegalSubnetPoolUpdate(BadRequest):
    message = "Illegal subnetpool update : %(reason)s."


class NetworkAddressScopeAffinityError(BadRequest):
    message = ("Subnets of the same address family hosted on the same network must "
               "all participate in the same address scope.")


class NetworkSubnetPoolAffinityError(BadRequest):
    message = "Subnets hosted on the same network must be allocated from the same subnet pool."


# -- metering ---------------------------------------------------------------------------

class Invalid(BadRequest):
    """Upstream's bare ``Invalid``: the message is the whole text. Upstream
    answers it with a 500 (its fault map lacks the class); 400 here."""

    message = "%(message)s"


class MeteringLabelNotFound(NotFound):
    message = "Metering label '%(label_id)s' does not exist."


class MeteringLabelRuleNotFound(NotFound):
    message = "Metering label rule '%(rule_id)s' does not exist."


class MeteringLabelRuleOverlaps(Conflict):
    message = ("Metering label rule with remote_ip_prefix '%(remote_ip_prefix)s' "
               "overlaps another.")


# -- segments (routed networks) ----------------------------------------------------

class HTTPNotFound(NotFound):
    """The web layer's 404, not the plugin's: what upstream answers when
    policy hides a whole resource type, or an object of a resource without
    an owner of its own (segments)."""

    message = "The resource could not be found."


class NotImplementedError(NeutronException):  # noqa: A001 - upstream's type name
    code = 501
    message = ""
class SegmentNotFound(NotFound):
    message = "Segment %(segment_id)s could not be found."


# ``network-segment-range``
class NetworkSegmentRangeNetTypeNotSupported(BadRequest):
    message = "Network type %(type)s does not support network segment ranges."


class NetworkSegmentRangeNotFound(NotFound):
    message = "Network Segment Range %(range_id)s could not be found."


class NetworkSegmentRangeReferencedByProject(InUse):
    message = ("Network Segment Range %(range_id)s is referenced by one or more "
               "project networks.")


class NetworkSegmentRangeDefaultReadOnly(BadRequest):
    message = ("Network Segment Range %(range_id)s is a default segment range which "
               "could not be updated or deleted.")


class NetworkSegmentRangeOverlaps(Conflict):
    message = "Network segment range overlaps with range(s) with id %(range_id)s"


# Upstream answers these two with 500 (plain NeutronExceptions); a range
# the caller got wrong is a bad request here.
class NetworkVlanRangeError(BadRequest):
    message = "Invalid network VLAN range: '%(vlan_range)s' - '%(error)s'."


class NetworkTunnelRangeError(BadRequest):
    message = "Invalid network tunnel range: '%(tunnel_range)s' - %(error)s."


class SegmentInUse(InUse):
    message = "Segment '%(segment_id)s' cannot be deleted: %(reason)s."


class NoUpdateSubnetWhenMultipleSegmentsOnNetwork(BadRequest):
    message = ("The network '%(network_id)s' has multiple segments, it is only possible "
               "to associate an existing subnet with a segment on networks with a "
               "single segment.")


class SubnetsNotAllAssociatedWithSegments(BadRequest):
    message = ("All of the subnets on network '%(network_id)s' must either all be "
               "associated with segments or all not associated with any segment.")


class SubnetCantAssociateToDynamicSegment(BadRequest):
    message = "A subnet cannot be associated with a dynamic segment."


class SubnetSegmentAssociationChangeNotAllowed(BadRequest):
    message = ("A subnet that is already associated with a segment cannot have its "
               "segment association changed.")


class NetworkIdsDontMatch(BadRequest):
    message = ("The subnet's network id, '%(subnet_network)s', doesn't match the "
               "network_id of segment '%(segment_id)s'")


class HostNotConnectedToAnySegment(Conflict):
    # Two spaces after the first sentence, as upstream writes it.
    message = ("Host %(host)s is not connected to any segments on routed provider "
               "network '%(network_id)s'.  It should be connected to one.")


class HostNotCompatibleWithFixedIps(Conflict):
    message = ("Host %(host)s is not connected to a segment where the existing "
               "fixed_ips on port %(port_id)s will function given the routed network "
               "topology.")


class FixedIpsSubnetsNotOnSameSegment(BadRequest):
    message = "Cannot allocate addresses from different segments."


# -- trunks --------------------------------------------------------------------------
# -- L3: routers and floating IPs ---------------------------------------------------

class PortInUse(InUse):
    message = ("Unable to complete operation on port %(port_id)s for network "
               "%(net_id)s. Port already has an attached device %(device_id)s.")


class TrunkNotFound(NotFound):
    message = "Trunk %(trunk_id)s could not be found."


class SubPortNotFound(NotFound):
    message = "SubPort %(port_id)s on trunk %(trunk_id)s could not be found."


class TrunkPortInUse(InUse):
    message = "Port %(port_id)s is in use by another trunk."


class DuplicateSubPort(InUse):
    message = ("segmentation_type %(segmentation_type)s and segmentation_id "
               "%(segmentation_id)s already in use on trunk %(trunk_id)s.")


class ParentPortInUse(InUse):
    message = ("Port %(port_id)s is currently in use and is not eligible for use as a "
               "parent port.")


class PortInUseAsTrunkParent(InUse):
    message = "Port %(port_id)s is currently a parent port for trunk %(trunk_id)s."


class PortInUseAsSubPort(InUse):
    message = "Port %(port_id)s is currently a subport for trunk %(trunk_id)s."


class SubPortMtuGreaterThanTrunkPortMtu(Conflict):
    message = ("MTU %(port_mtu)s of subport %(port_id)s cannot be greater than MTU "
               "%(trunk_mtu)s of trunk %(trunk_id)s.")


class TrunkInUse(InUse):
    message = "Trunk %(trunk_id)s is currently in use."


class TrunkDisabled(Conflict):
    message = "Trunk %(trunk_id)s is currently disabled."
# -- security groups and address groups ------------------------------------------

class InvalidCIDR(BadRequest):
    message = "Invalid CIDR %(input)s given as IP prefix."


class SecurityGroupInvalidPortRange(InvalidInput):
    message = "For TCP/UDP protocols, port_range_min must be <= port_range_max"


class SecurityGroupInvalidProtocolForPort(InvalidInput):
    message = ("Ports cannot be specified for protocol %(protocol)s. "
               "Ports are only supported for %(valid_port_protocols)s.")


class SecurityGroupInvalidPortValue(InvalidInput):
    message = "Invalid value for port %(port)s"


class SecurityGroupInvalidIcmpValue(InvalidInput):
    message = "Invalid value for ICMP %(field)s (%(attr)s) %(value)s. It must be 0 to 255."


class SecurityGroupEthertypeConflictWithProtocol(InvalidInput):
    message = "Invalid ethertype %(ethertype)s for protocol %(protocol)s."


class SecurityGroupMissingIcmpType(InvalidInput):
    message = ("ICMP code (port-range-max) %(value)s is provided but ICMP type "
               "(port-range-min) is missing.")


class SecurityGroupRuleInvalidProtocol(InvalidInput):
    message = ("Security group rule protocol %(protocol)s not supported. Only protocol "
               "values %(values)s and integer representations [0 to 255] are supported.")


class SecurityGroupRuleInvalidEtherType(InvalidInput):
    message = ("Security group rule for ethertype '%(ethertype)s' not supported. "
               "Allowed values are %(values)s.")


class SecurityGroupRulesNotSingleProject(InvalidInput):
    message = "Multiple project_ids in bulk security group rule create not allowed"


class SecurityGroupNotSingleGroupRules(InvalidInput):
    message = "Only allowed to update rules for one security profile at a time"


class SecurityGroupMultipleRemoteEntites(InvalidInput):
    message = ("Only one of remote_ip_prefix or remote_group_id or "
               "remote_address_group_id may be provided.")


class SecurityGroupProtocolRequiredWithPorts(InvalidInput):
    message = "Must also specify protocol if port range is given."


class SecurityGroupRuleParameterConflict(InvalidInput):
    message = "Conflicting value ethertype %(ethertype)s for CIDR %(cidr)s"


class PortSecurityAndIPRequiredForSecurityGroups(InvalidInput):
    message = ("Port security must be enabled and port must have an IP address in "
               "order to use security groups.")


class SecurityGroupNotFound(NotFound):
    message = "Security group %(id)s does not exist"


class SecurityGroupRuleNotFound(NotFound):
    message = "Security group rule %(id)s does not exist"


class AddressGroupNotFound(NotFound):
    message = "Address group %(address_group_id)s could not be found."


class AddressesNotFound(NotFound):
    message = "Addresses %(addresses)s not found in the address group %(address_group_id)s."


class AddressesAlreadyExist(BadRequest):
    message = ("Addresses %(addresses)s already exist in the address group "
               "%(address_group_id)s.")


class SecurityGroupInUse(InUse):
    message = "Security Group %(id)s %(reason)s."

    def __init__(self, message: str | None = None, **kwargs: object) -> None:
        kwargs.setdefault("reason", "in use")
        super().__init__(message, **kwargs)


class SecurityGroupCannotRemoveDefault(InUse):
    message = "Insufficient rights for removing default security group."


class SecurityGroupCannotUpdateDefault(InUse):
    message = "Updating default security group not allowed."


class SecurityGroupDefaultAlreadyExists(InUse):
    message = "Default security group already exists."


class DuplicateSecurityGroupRuleInPost(InUse):
    message = "Duplicate Security Group Rule in POST."


class SecurityGroupRuleExists(InUse):
    message = "Security group rule already exists. Rule id is %(rule_id)s."


class DefaultSecurityGroupRuleNotFound(NotFound):
    message = "Default Security Group rule %(id)s does not exist"


class DefaultSecurityGroupRuleExists(InUse):
    message = "Default Security group rule already exists. Rule id is %(rule_id)s."


class DuplicateDefaultSgRuleInPost(InUse):
    message = "Duplicate Default Security Group Rule in POST."


class SecurityGroupDefaultStatefulnessNotFound(NotFound):
    message = "Security group default statefulness %(id)s could not be found."


class SecurityGroupDefaultStatefulnessAlreadyExists(Conflict):
    message = ("A security group default statefulness setting already exists for "
               "project '%(project_id)s'.")


class SecurityGroupConflict(Conflict):
    message = "Error %(reason)s while attempting the operation."


class PortSecurityPortHasSecurityGroup(InUse):
    message = ("Port has security group associated. Cannot disable port security or "
               "IP address until security group is removed.")


class AddressGroupInUse(InUse):
    message = ("Address group %(address_group_id)s is in use on one or more security "
               "group rules.")
class ServicePortInUse(InUse):
    message = "Port %(port_id)s cannot be deleted directly via the port API: %(reason)s."


class SubnetMismatchForPort(BadRequest):
    message = "Subnet on port %(port_id)s does not match the requested subnet %(subnet_id)s."


class ExternalIpAddressExhausted(BadRequest):
    message = "Unable to find any IP address on external network %(net_id)s."


class RouterNotFound(NotFound):
    message = "Router %(router_id)s could not be found"


class RouterInUse(InUse):
    message = "Router %(router_id)s %(reason)s"

    def __init__(self, message: str | None = None, **kwargs: object) -> None:
        kwargs.setdefault("reason", "still has ports")
        super().__init__(message, **kwargs)


class RouterInterfaceNotFound(NotFound):
    message = "Router %(router_id)s does not have an interface with id %(port_id)s"


class RouterInterfaceNotFoundForSubnet(NotFound):
    message = "Router %(router_id)s has no interface on subnet %(subnet_id)s"


class RouterInterfaceInUseByFloatingIP(InUse):
    message = ("Router interface for subnet %(subnet_id)s on router %(router_id)s "
               "cannot be deleted, as it is required by one or more floating IPs.")


class RouterExternalGatewayInUseByFloatingIp(InUse):
    message = ("Gateway cannot be updated for router %(router_id)s, since a gateway to "
               "external network %(net_id)s is required by one or more floating IPs.")


class FloatingIPNotFound(NotFound):
    message = "Floating IP %(floatingip_id)s could not be found"


class ExternalGatewayForFloatingIPNotFound(NotFound):
    message = ("External network %(external_network_id)s is not reachable from subnet "
               "%(subnet_id)s.  Therefore, cannot associate Port %(port_id)s with a "
               "Floating IP.")


class FloatingIPPortAlreadyAssociated(InUse):
    message = ("Cannot associate floating IP %(floating_ip_address)s (%(fip_id)s) with "
               "port %(port_id)s using fixed IP %(fixed_ip)s, as that fixed IP already "
               "has a floating IP on external network %(net_id)s.")


# -- floating IP port forwardings (``floating-ip-port-forwarding``) --------------------

class RouterGatewayInUseByNDPProxy(Conflict):
    message = ("Unable to unset external gateway of router %(router_id)s, There are one or "
               "more ndp proxies still in use on the router.")


class RouterInterfaceInUseByNDPProxy(Conflict):
    message = ("Unable to remove subnet %(subnet_id)s from router %(router_id)s, There are "
               "one or more ndp proxies still in use on the subnet.")


class AddressScopeConflict(Conflict):
    message = ("The IPv6 address scope %(ext_address_scope)s of external network conflict "
               "with internal network's IPv6 address scope %(internal_address_scope)s.")


class RouterGatewayNotValid(Conflict):
    message = "Can not enable ndp proxy on router %(router_id)s, %(reason)s."


class RouterNDPProxyNotEnable(Conflict):
    message = ("The enable_ndp_proxy parameter of router %(router_id)s must be set as True "
               "while create ndp proxy entry on it.")


class PortUnreachableRouter(Conflict):
    message = "The port %(port_id)s cannot reach the router %(router_id)s by IPv6 subnet."


class InvalidAddress(BadRequest):
    message = "The address %(address)s is invalid, reason: %(reason)s."


class RouterIPv6GatewayInUse(Conflict):
    message = ("Can't remove the IPv6 subnet from external gateway of router %(router_id)s, "
               "the IPv6 subnet in use by the router's ndp proxy.")


class NDPProxyNotFound(NotFound):
    message = "Ndp proxy %(id)s could not be found."


class PortForwardingNotFound(NotFound):
    message = "Port Forwarding %(id)s could not be found."


class ConntrackHelperNotFound(NotFound):
    message = "Conntrack Helper %(id)s could not be found."


class ConntrackHelperNotAllowed(BadRequest):
    message = "Conntrack Helper %(helper)s is not allowed."


class InvalidProtocolForHelper(BadRequest):
    message = ("Conntrack Helper %(helper)s does not support: %(protocol)s. Supported "
               "protocols are: %(supported_protocols)s")


class FipInUseByPortForwarding(InUse):
    message = "Floating IP %(id)s in use by Port Forwarding resources."


class PortHasBindingFloatingIP(InUse):
    message = ("Cannot create port forwarding to floating IP %(floating_ip_address)s "
               "(%(fip_id)s) with port %(port_id)s using fixed IP %(fixed_ip)s, as that "
               "port already has a binding floating IP.")


# -- auto-allocated topologies (``auto-allocated-topology``) ---------------------------

class AutoAllocationFailure(Conflict):
    message = "Deployment error: %(reason)s."


class DefaultExternalNetworkExists(Conflict):
    message = "A default external network already exists: %(net_id)s."


class InvalidRoutes(InvalidInput):
    message = "Invalid format for routes: %(routes)s, %(reason)s"


class RouterInterfaceInUseByRoute(InUse):
    message = ("Router interface for subnet %(subnet_id)s on router %(router_id)s "
               "cannot be deleted, as it is required by one or more routes.")


# -- QoS (``qos``) -------------------------------------------------------------------

class QosPolicyNotFound(NotFound):
    message = "QoS policy %(policy_id)s could not be found."


class QosRuleNotFound(NotFound):
    message = "QoS rule %(rule_id)s for policy %(policy_id)s could not be found."


class QoSPolicyDefaultAlreadyExists(Conflict):
    message = "A default QoS policy exists for project %(project_id)s."


class QosPolicyInUse(InUse):
    message = "QoS Policy %(policy_id)s is used by %(object_type)s %(object_id)s."


class QosRuleNotSupported(Conflict):
    message = "Rule %(rule_type)s is not supported by port %(port_id)s"


class QosRuleNotSupportedByNetwork(Conflict):
    message = "Rule %(rule_type)s is not supported by network %(network_id)s"


class QosPlacementAllocationUpdateConflict(Conflict):
    message = ("Updating placement allocation with %(alloc_diff)s for consumer "
               "%(consumer)s failed. The requested resources would exceed the capacity "
               "available.")


class PlacementAllocationGenerationConflict(Conflict):
    message = ("Resource allocation has been changed for consumer %(consumer)s in "
               "Placement while Neutron tried to update it.")


class PlacementAllocationRemoved(BadRequest):
    message = "Resource allocation is deleted for consumer %(consumer)s"


class PlacementAllocationRpNotExists(BadRequest):
    message = "Resource provider %(resource_provider)s for %(consumer)s does not exist"


class QoSRuleParameterConflict(Conflict):
    message = ("Unable to add the rule with value %(rule_value)s to the policy "
               "%(policy_id)s as the existing rule of type %(existing_rule)s has value "
               "%(existing_value)s.")


class QoSRulesConflict(Conflict):
    message = ("Rule %(new_rule_type)s conflicts with rule %(rule_id)s which already "
               "exists in QoS Policy %(policy_id)s.")


class PolicyRemoveAuthorizationError(NotAuthorized):
    message = ("Failed to remove provided policy %(policy_id)s because you are not "
               "authorized.")


# ``flavors``: flavors of advanced services and the service profiles behind them.

class InvalidServiceType(InvalidInput):
    message = "Invalid service type: %(service_type)s."


class FlavorNotFound(NotFound):
    message = "Flavor %(flavor_id)s could not be found."


class FlavorInUse(InUse):
    message = "Flavor %(flavor_id)s is used by some service instance."


class ServiceProfileNotFound(NotFound):
    message = "Service Profile %(sp_id)s could not be found."


class ServiceProfileInUse(InUse):
    message = "Service Profile %(sp_id)s is used by some service instance."


class FlavorServiceProfileBindingExists(Conflict):
    message = "Service Profile %(sp_id)s is already associated with flavor %(fl_id)s."


class FlavorServiceProfileBindingNotFound(NotFound):
    message = "Service Profile %(sp_id)s is not associated with flavor %(fl_id)s."


class ServiceProfileDriverNotFound(NotFound):
    message = "Service Profile driver %(driver)s could not be found."


class ServiceProfileEmpty(InvalidInput):
    message = "Service Profile needs either a driver or metainfo."


class ServiceProfileDisabled(ServiceUnavailable):
    message = "Service Profile is not enabled."


_NOT_FOUND: dict[str, Callable[[str], NeutronException]] = {
    "agent": lambda rid: AgentNotFound(id=rid),
    "network": lambda rid: NetworkNotFound(net_id=rid),
    "subnet": lambda rid: SubnetNotFound(subnet_id=rid),
    "port": lambda rid: PortNotFound(port_id=rid),
    "subnetpool": lambda rid: SubnetPoolNotFound(subnetpool_id=rid),
    "rbac_policy": lambda rid: RbacPolicyNotFound(id=rid, object_type="unknown"),
    "address_scope": lambda rid: AddressScopeNotFound(address_scope_id=rid),
    "metering_label": lambda rid: MeteringLabelNotFound(label_id=rid),
    "metering_label_rule": lambda rid: MeteringLabelRuleNotFound(rule_id=rid),
    "network_ip_availability": lambda rid: HTTPNotFound(),
    "trunk": lambda rid: TrunkNotFound(trunk_id=rid),
    # Segments have no owner: a hidden one is the web layer's 404.
    "segment": lambda rid: HTTPNotFound(),
    "security_group": lambda rid: SecurityGroupNotFound(id=rid),
    "default_security_group_rule": lambda rid: DefaultSecurityGroupRuleNotFound(id=rid),
    "security_groups_default_statefulness":
        lambda rid: SecurityGroupDefaultStatefulnessNotFound(id=rid),
    "address_group": lambda rid: AddressGroupNotFound(address_group_id=rid),
    "router": lambda rid: RouterNotFound(router_id=rid),
    "floatingip": lambda rid: FloatingIPNotFound(floatingip_id=rid),
    "port_forwarding": lambda rid: PortForwardingNotFound(id=rid),
    "conntrack_helper": lambda rid: ConntrackHelperNotFound(id=rid),
    "flavor": lambda rid: FlavorNotFound(flavor_id=rid),
    # Admin-only and ownerless: hidden from others as the web layer's 404.
    "service_profile": lambda rid: HTTPNotFound(),
}


# Sub-resources name their parent in the message (a QoS rule its policy).
_CHILD_NOT_FOUND: dict[str, Callable[[str, str], NeutronException]] = {}


def register_not_found(singular: str, factory: Callable[..., NeutronException],
                       child: bool = False) -> None:
    """Let a plugin name the 404 of its resource: ``factory(rid)``, or
    ``factory(rid, parent_id)`` for a sub-resource (``child``)."""
    (_CHILD_NOT_FOUND if child else _NOT_FOUND)[singular] = factory


def not_found(singular: str, rid: str, parent_id: str | None = None) -> NeutronException:
    """The 404 upstream answers for resource ``singular`` with id ``rid``
    (reached under ``parent_id`` for a sub-resource)."""
    child = _CHILD_NOT_FOUND.get(singular)
    if child is not None:
        return child(rid, parent_id or "")
    factory = _NOT_FOUND.get(singular)
    return factory(rid) if factory else ResourceNotFound()


# -- logging (security-group logs) ---------------------------------------------------

class LogResourceNotFound(NotFound):
    message = "Log resource %(log_id)s could not be found."


class InvalidLogResourceType(InvalidInput):
    message = "Invalid log resource_type: %(resource_type)s."


class LoggingTypeNotSupported(Conflict):
    message = "Logging type %(log_type)s is not supported on port %(port_id)s."


class TargetResourceNotFound(NotFound):
    message = "Target resource %(target_id)s could not be found."


class InvalidResourceConstraint(InvalidInput):
    message = ("Invalid resource constraint between resource (%(resource)s "
               "%(resource_id)s) and target resource (%(target_resource)s %(target_id)s).")


def log_resource_not_found(resource_id: str) -> ResourceNotFound:
    """Upstream's logging ``ResourceNotFound`` (a missing security group to
    log), which names the resource where the generic one does not."""
    return ResourceNotFound(message=f"Resource {resource_id} could not be found.")


# -- local IPs ------------------------------------------------------------------------

class LocalIPNotFound(NotFound):
    message = "Local IP %(id)s could not be found."


class LocalIPInUse(InUse):
    message = "Local IP %(id)s is still associated with one or more ports."


class LocalIPNoIP(InvalidInput):
    message = "Specified Port %(port_id)s has no fixed IPs configured."


class LocalIPRequestedIPNotFound(InvalidInput):
    message = "Specified Port %(port_id)s does not have requested IP address: %(ip)s."


class LocalIPNoRequestedIP(InvalidInput):
    message = ("Specified Port %(port_id)s has several IPs, should specify exact IP "
               "address to use for Local IP.")


class LocalIPPortOrNetworkRequired(InvalidInput):
    message = "Either Port ID or Network ID must be specified for Local IP create."


class LocalIPAssociationNotFound(NotFound):
    message = "Local IP %(local_ip_id)s association with port %(port_id)s could not be found."


class LocalIPAssociationExists(Conflict):
    """Upstream fails with a 500 here (a duplicate key it only logs)."""
    message = "Local IP %(local_ip_id)s association to port %(port_id)s already exists."


# -- FWaaS v2 (``fwaas_v2``; neutron-lib's firewall_v2 exceptions and neutron-fwaas's own) --

class FirewallGroupNotFound(NotFound):
    message = "Firewall group %(firewall_id)s could not be found."


class FirewallGroupInUse(InUse):
    message = "Firewall group %(firewall_id)s is still active."


class FirewallGroupInPendingState(Conflict):
    message = ("Operation cannot be performed since associated firewall group "
               "%(firewall_id)s is in %(pending_state)s.")


class FirewallGroupPortInvalid(Conflict):
    message = "Port %(port_id)s of firewall group is invalid."


class FirewallGroupPortInUse(InUse):
    message = "Port(s) %(port_ids)s provided already associated with other firewall group(s)."


class FirewallGroupPortNotSupported(Conflict):
    message = "Port %(port_id)s is not supported by firewall driver '%(driver_name)s'."


class FirewallGroupCannotRemoveDefault(InUse):
    message = "Deleting default firewall group not allowed."


class FirewallDefaultParameterExists(InUse):
    message = ("Operation cannot be performed since '%(name)s' is a reserved name for "
               "%(resource_type)s.")


class FirewallDefaultObjectUpdateRestricted(FirewallDefaultParameterExists):
    message = ("Operation cannot be performed on default object '%(resource_id)s' of type "
               "%(resource_type)s.")


class FirewallPolicyNotFound(NotFound):
    message = "Firewall policy %(firewall_policy_id)s could not be found."


class FirewallPolicyInUse(InUse):
    message = "Firewall policy %(firewall_policy_id)s is being used."


class FirewallPolicyConflict(NotFound):
    message = ("Operation cannot be performed since firewall policy %(firewall_policy_id)s "
               "for your project could not be found. Please confirm if the firewall policy "
               "exists and is shared.")


class FirewallRuleSharingConflict(NotFound):
    message = ("Operation cannot be performed since firewall policy %(firewall_policy_id)s "
               "could not find the firewall rule %(firewall_rule_id)s. Please confirm if the "
               "firewall rule exists and is shared.")


class FirewallPolicySharingConflict(Conflict):
    message = ("Operation cannot be performed. Before sharing firewall policy "
               "%(firewall_policy_id)s, share associated firewall rule %(firewall_rule_id)s.")


class FirewallRuleNotFound(NotFound):
    message = "Firewall rule %(firewall_rule_id)s could not be found."


class FirewallRuleInUse(InUse):
    message = "Firewall rule %(firewall_rule_id)s is being used."


class FirewallRuleNotAssociatedWithPolicy(InvalidInput):
    message = ("Firewall rule %(firewall_rule_id)s is not associated with firewall policy "
               "%(firewall_policy_id)s.")


class FirewallRuleInvalidICMPParameter(InvalidInput):
    message = "%(param)s are not allowed when protocol is set to ICMP."


class FirewallRuleWithPortWithoutProtocolInvalid(InvalidInput):
    message = "Source/destination port requires a protocol."


class FirewallRuleInvalidPortValue(InvalidInput):
    message = "Invalid value for port %(port)s."


class FirewallRuleInfoMissing(InvalidInput):
    message = "Missing rule info argument for insert/remove rule operation."


class FirewallIpAddressConflict(InvalidInput):
    message = "Invalid input - IP addresses do not agree with IP Version."


class FirewallRuleConflict(Conflict):
    message = ("Operation cannot be performed since firewall rule %(firewall_rule_id)s is "
               "not shared and belongs to another project %(project_id)s.")


class FirewallRuleAlreadyAssociated(Conflict):
    message = ("Operation cannot be performed since firewall rule %(firewall_rule_id)s is "
               "already associated with firewall policy %(firewall_policy_id)s.")

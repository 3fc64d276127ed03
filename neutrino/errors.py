"""Neutron's error vocabulary.

Clients (tempest, openstacksdk, gophercloud) branch on the HTTP code and on
``NeutronError.type``, which is the class name; so every error a user can see
is a class here named exactly as upstream names it, carrying its HTTP code.
Every layer raises these; only the API layer turns them into responses.
"""
from __future__ import annotations


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


class MacAddressInUse(InUse):
    message = ("Unable to complete operation for network %(net_id)s. "
               "The mac address %(mac)s is in use.")


class MacAddressGenerationFailure(NeutronException):
    code = 503
    message = "Unable to generate unique mac on network %(net_id)s."


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


# -- L3: routers and floating IPs ---------------------------------------------------

class PortInUse(InUse):
    message = ("Unable to complete operation on port %(port_id)s for network "
               "%(net_id)s. Port already has an attached device %(device_id)s.")


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


class InvalidRoutes(InvalidInput):
    message = "Invalid format for routes: %(routes)s, %(reason)s"


class RouterInterfaceInUseByRoute(InUse):
    message = ("Router interface for subnet %(subnet_id)s on router %(router_id)s "
               "cannot be deleted, as it is required by one or more routes.")


_NOT_FOUND = {
    "network": lambda rid: NetworkNotFound(net_id=rid),
    "subnet": lambda rid: SubnetNotFound(subnet_id=rid),
    "port": lambda rid: PortNotFound(port_id=rid),
    "subnetpool": lambda rid: SubnetPoolNotFound(subnetpool_id=rid),
    "rbac_policy": lambda rid: RbacPolicyNotFound(id=rid, object_type="unknown"),
    "router": lambda rid: RouterNotFound(router_id=rid),
    "floatingip": lambda rid: FloatingIPNotFound(floatingip_id=rid),
}


def not_found(singular: str, rid: str) -> NeutronException:
    """The 404 upstream answers for resource ``singular`` with id ``rid``."""
    factory = _NOT_FOUND.get(singular)
    return factory(rid) if factory else ResourceNotFound()

"""Neutron's error vocabulary.

Clients (tempest, openstacksdk, gophercloud) branch on the HTTP code and on
``NeutronError.type``, which is the class name; so every error a user can see
is a class here named exactly as upstream names it, carrying its HTTP code.
Every layer raises these; only the API layer turns them into responses.
"""
from __future__ import annotations

from typing import Any


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


_NOT_FOUND = {
    "network": lambda rid: NetworkNotFound(net_id=rid),
    "subnet": lambda rid: SubnetNotFound(subnet_id=rid),
    "port": lambda rid: PortNotFound(port_id=rid),
    "subnetpool": lambda rid: SubnetPoolNotFound(subnetpool_id=rid),
    "rbac_policy": lambda rid: RbacPolicyNotFound(id=rid, object_type="unknown"),
}


# Sub-resources name their parent in the message (a QoS rule its policy).
_CHILD_NOT_FOUND: dict[str, Any] = {}


def register_not_found(singular: str, factory: Any, child: bool = False) -> None:
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

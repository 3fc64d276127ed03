"""The VPN service's errors, named and worded as upstream's (neutron-lib's
``exceptions.vpn``): clients branch on the class name and the code."""
from __future__ import annotations

from neutrino.errors import BadRequest, InUse, InvalidInput, NotFound, ServiceUnavailable


class VPNServiceNotFound(NotFound):
    message = "VPNService %(vpnservice_id)s could not be found"


class IPsecSiteConnectionNotFound(NotFound):
    message = "ipsec_site_connection %(ipsec_site_conn_id)s not found"


class IKEPolicyNotFound(NotFound):
    message = "IKEPolicy %(ikepolicy_id)s could not be found"


class IPsecPolicyNotFound(NotFound):
    message = "IPsecPolicy %(ipsecpolicy_id)s could not be found"


class VPNEndpointGroupNotFound(NotFound):
    message = "Endpoint group %(endpoint_group_id)s could not be found"


class IPsecSiteConnectionDpdIntervalValueError(InvalidInput):
    message = "ipsec_site_connection %(attr)s is equal to or less than dpd_interval"


class IPsecSiteConnectionMtuError(InvalidInput):
    message = "ipsec_site_connection MTU %(mtu)d is too small for ipv%(version)s"


class IPsecSiteConnectionPeerCidrError(InvalidInput):
    message = "ipsec_site_connection peer cidr %(peer_cidr)s is invalid CIDR"


class IKEPolicyInUse(InUse):
    message = ("IKEPolicy %(ikepolicy_id)s is in use by existing IPsecSiteConnection "
               "and can't be updated or deleted")


class IPsecPolicyInUse(InUse):
    message = ("IPsecPolicy %(ipsecpolicy_id)s is in use by existing IPsecSiteConnection "
               "and can't be updated or deleted")


class VPNServiceInUse(InUse):
    message = "VPNService %(vpnservice_id)s is still in use"


class SubnetInUseByVPNService(InUse):
    message = "Subnet %(subnet_id)s is used by VPNService %(vpnservice_id)s"


class SubnetInUseByEndpointGroup(InUse):
    message = "Subnet %(subnet_id)s is used by endpoint group %(group_id)s"


class SubnetInUseByIPsecSiteConnection(InUse):
    message = ("Subnet %(subnet_id)s is used by ipsec site connection "
               "%(ipsec_site_connection_id)s")


class VPNStateInvalidToUpdate(BadRequest):
    message = "Invalid state %(state)s of vpnaas resource %(id)s for updating"


class SubnetIsNotConnectedToRouter(BadRequest):
    message = "Subnet %(subnet_id)s is not connected to Router %(router_id)s"


class RouterIsNotExternal(BadRequest):
    message = "Router %(router_id)s has no external network gateway set"


class VPNPeerAddressNotResolved(InvalidInput):
    message = "Peer address %(peer_address)s cannot be resolved"


class ExternalNetworkHasNoSubnet(BadRequest):
    message = "Router's %(router_id)s external network has no %(ip_version)s subnet"


class InvalidEndpointInEndpointGroup(InvalidInput):
    message = "Endpoint '%(endpoint)s' is invalid for group type '%(group_type)s': %(why)s"


class MissingEndpointForEndpointGroup(BadRequest):
    message = "No endpoints specified for endpoint group '%(group)s'"


class NonExistingSubnetInEndpointGroup(InvalidInput):
    message = "Subnet %(subnet)s in endpoint group does not exist"


class MixedIPVersionsForIPSecEndpoints(BadRequest):
    message = ("Endpoints in group %(group)s do not have the same IP version, as "
               "required for IPSec site-to-site connection")


class MixedIPVersionsForPeerCidrs(BadRequest):
    message = ("Peer CIDRs do not have the same IP version, as required for IPSec "
               "site-to-site connection")


class MixedIPVersionsForIPSecConnection(BadRequest):
    message = "IP versions are not compatible between peer and local endpoints"


class InvalidEndpointGroup(BadRequest):
    message = ("Endpoint group%(suffix)s %(which)s cannot be specified, when VPN Service "
               "has subnet specified")


class WrongEndpointGroupType(BadRequest):
    message = "Endpoint group %(which)s type is '%(group_type)s' and should be '%(expected)s'"


class PeerCidrsInvalid(BadRequest):
    message = "Peer CIDRs cannot be specified, when using endpoint groups"


class MissingPeerCidrs(BadRequest):
    message = "Missing peer CIDRs for IPsec site-to-site connection"


class MissingRequiredEndpointGroup(BadRequest):
    message = "Missing endpoint group%(suffix)s %(which)s for IPSec site-to-site connection"


class EndpointGroupInUse(BadRequest):
    message = "Endpoint group %(group_id)s is in use and cannot be deleted"


class IpsecValidationFailure(BadRequest):
    message = "IPSec does not support %(resource)s attribute %(key)s with value '%(value)s'"


class FlavorsPluginNotLoaded(NotFound):
    message = "Flavors plugin not found"


class NoProviderFoundForFlavor(NotFound):
    message = "No service provider found for flavor %(flavor_id)s"


class FlavorDisabled(ServiceUnavailable):
    message = "Flavor is not enabled."

"""BGP dynamic routing (``bgp``, ``bgp_4byte_asn``, ``bgp_dragent_scheduler``), as data.

A BGP speaker (``/v2.0/bgp-speakers``) is a local AS and an IP version; it
peers with the BGP peers added to it (``add_bgp_peer``) and advertises,
for the gateway networks added to it (``add_gateway_network``), the
floating IPs of routers on those networks (host routes whose next hop is
the router's gateway address) and the project subnets behind those routers
that share the gateway network's address scope. A BGP peer
(``/v2.0/bgp-peers``) is an address, a remote AS and an authentication
(``md5`` with a password that is never shown). Both are the admin's: the
default policy gives projects nothing.

The base extension's AS numbers are 2-byte; ``bgp_4byte_asn`` widens both
``local_as`` and ``remote_as`` to 4 bytes, and the plugin always loads it,
as upstream's does. ``bgp_dragent_scheduler`` is routes only
(``neutrino.plugins.bgp.routes``).
"""
from __future__ import annotations

from neutrino.resources import validators as v
from neutrino.resources.attributes import AttributeMap, attr, resource
from neutrino.resources.extensions import described

BGP_EXT = described("bgp")
BGP_4BYTE_ASN_EXT = described("bgp_4byte_asn")
BGP_DRAGENT_SCHEDULER_EXT = described("bgp_dragent_scheduler")

AUTH_TYPES = ("none", "md5")
MAX_2BYTE_ASN = 65535
MAX_4BYTE_ASN = 4294967295

# Both AS numbers live in BigInteger columns.
_ASN_2BYTE = v.integer(1, MAX_2BYTE_ASN, bits=64)
_ASN_4BYTE = v.integer(1, MAX_4BYTE_ASN, bits=64)


def _ids() -> list:  # type: ignore[type-arg]
    return [
        attr("id", v.uuid, is_filter=True, is_sort_key=True, convert_filter=str),
        attr("name", v.string(255), default="", allow_post=True, allow_put=True,
             is_filter=True, is_sort_key=True),
        attr("tenant_id", v.string(255), default=None, allow_post=True,
             required_by_policy=True, is_filter=True, is_sort_key=True),
        attr("project_id", v.string(255), default=None, allow_post=True,
             required_by_policy=True, is_filter=True, is_sort_key=True),
    ]


BGP_SPEAKER = resource(
    "bgp_speaker", "bgp_speakers",
    *_ids(),
    # No default upstream (its column is NOT NULL, so leaving them out is a
    # 500 there); here they are simply required.
    attr("local_as", _ASN_2BYTE, allow_post=True, is_filter=True, is_sort_key=True),
    attr("ip_version", v.values(4, 6), allow_post=True, is_filter=True, is_sort_key=True),
    attr("advertise_floating_ip_host_routes", v.boolean, default=True, allow_post=True,
         allow_put=True, enforce_policy=True, is_filter=True, is_sort_key=True,
         convert_filter=v.filter_bool),
    attr("advertise_tenant_networks", v.boolean, default=True, allow_post=True,
         allow_put=True, enforce_policy=True, is_filter=True, is_sort_key=True,
         convert_filter=v.filter_bool),
    attr("peers", enforce_policy=True),
    attr("networks", enforce_policy=True),
    has_tags=False, url_name="bgp-speakers",
    actions={"add_bgp_peer": "PUT", "remove_bgp_peer": "PUT",
             "add_gateway_network": "PUT", "remove_gateway_network": "PUT",
             "get_advertised_routes": "GET"},
)

BGP_PEER = resource(
    "bgp_peer", "bgp_peers",
    *_ids(),
    attr("peer_ip", v.ip_address, allow_post=True, required_by_policy=True,
         is_filter=True, is_sort_key=True),
    attr("remote_as", _ASN_2BYTE, allow_post=True, is_filter=True, is_sort_key=True),
    attr("auth_type", v.values(*AUTH_TYPES), allow_post=True, required_by_policy=True,
         is_filter=True, is_sort_key=True),
    attr("password", v.or_none(v.string()), default=None, allow_post=True, allow_put=True,
         is_visible=False, required_by_policy=True),
    has_tags=False, url_name="bgp-peers",
)

# ``bgp_4byte_asn``: the same attributes over 1..4294967295.
FOUR_BYTE_ASNS: AttributeMap = {
    "bgp_speakers": [attr("local_as", _ASN_4BYTE, allow_post=True, is_filter=True,
                          is_sort_key=True)],
    "bgp_peers": [attr("remote_as", _ASN_4BYTE, allow_post=True, is_filter=True,
                       is_sort_key=True)],
}

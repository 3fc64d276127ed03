"""VPN as a service (``vpnaas``, ``vpn-endpoint-groups``, ``vpn-aes-ctr``,
``vpn-flavors``), declared as data.

A VPN service runs IPsec on a router's gateway; its site connections name
an IKE policy (phase 1), an IPsec policy (phase 2), the peer and what
crosses the tunnel: either the legacy pair (the service's ``subnet_id``,
the connection's ``peer_cidrs``) or two endpoint groups (local subnets,
peer CIDRs). None of these resources carries standard attributes or tags,
as upstream's do not. The AES-CTR values and ``flavor_id`` belong to their
own aliases upstream; they are always served with ``vpnaas`` here, so they
are declared on the resources directly.
"""
from __future__ import annotations

from typing import Any

from neutrino.resources import validators as v
from neutrino.resources.attributes import attr, resource
from neutrino.resources.extensions import described

VPNAAS_EXT = described("vpnaas")
ENDPOINT_GROUPS_EXT = described("vpn-endpoint-groups")
AES_CTR_EXT = described("vpn-aes-ctr")
FLAVORS_EXT = described("vpn-flavors")

AUTH_ALGORITHMS = ("sha1", "sha256", "sha384", "sha512", "aes-xcbc", "aes-cmac")
ENCRYPTION_ALGORITHMS = (
    "3des", "aes-128", "aes-192", "aes-256",
    *(f"aes-{k}-{mode}-{icv}" for mode in ("ccm", "gcm") for icv in (8, 12, 16)
      for k in (128, 192, 256)),
    "aes-128-ctr", "aes-192-ctr", "aes-256-ctr",
)
PFS_GROUPS = ("group2", "group5", *(f"group{n}" for n in range(14, 32)))
DPD_ACTIONS = ("clear", "disabled", "hold", "restart", "restart-by-peer")
ENDPOINT_TYPES = ("cidr", "network", "router", "subnet", "vlan")
SUBNET_ENDPOINT, CIDR_ENDPOINT = "subnet", "cidr"
INITIATORS = ("bi-directional", "response-only")

# Upstream's API default is ``sha1`` although its database no longer takes
# it (a 500); here the column takes every listed value, so the default works.
DEFAULT_AUTH = "sha1"
LIFETIME_DEFAULT = {"units": "seconds", "value": 3600}
DPD_DEFAULT = {"action": "hold", "interval": 30, "timeout": 120}


def _at_least(low: int) -> v.Validator:
    """Upstream's ``type:range`` with no upper bound (but the column's): an
    integer-like string passes and is kept as given, since upstream's
    create and update answers echo it so (its readers show the integer)."""
    def check(value: Any) -> Any:
        num = v.to_int(value)
        if num < low:
            raise v.Invalid(f"'{num}' is too small - must be at least '{low}'")
        if num > 2**31 - 1:
            raise v.Invalid(f"'{num}' is too large - must be no larger than '{2**31 - 1}'")
        return value
    return check


def _keyed(keys: dict[str, v.Validator]) -> v.Validator:
    """Upstream's ``type:dict_or_empty`` with key specs: null is ``{}``,
    each given key is checked, unknown keys are refused."""
    def check(value: Any) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise v.Invalid(f"'{value}' is not a dictionary")
        extra = sorted(set(value) - set(keys))
        if extra:
            raise v.Invalid(f"Unrecognized attribute(s) '{', '.join(extra)}'")
        return {k: keys[k](x) for k, x in value.items()}
    return check


lifetime = _keyed({"units": v.one_of("seconds"), "value": _at_least(60)})
dpd = _keyed({"action": v.one_of(*DPD_ACTIONS), "interval": v.non_negative(),
              "timeout": v.non_negative()})


def peer_cidrs(value: Any) -> list[str] | None:
    """``type:list_of_subnets_or_none`` after ``convert_to_list``."""
    if value is None:
        return None
    items = value if isinstance(value, list) else [value]
    return [v.subnet(x) for x in items]


def endpoints(value: Any) -> list[str]:
    """``convert_to_list``: the endpoints are checked against the group's
    type by the plugin, as upstream's validator does."""
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    return [v.string()(x) for x in items]


def _common(name_put: bool = True) -> list[Any]:
    return [
        attr("id", v.uuid, is_filter=True, is_sort_key=True, convert_filter=str),
        attr("name", v.string(255), default="", allow_post=True, allow_put=name_put,
             is_filter=True, is_sort_key=True),
        attr("description", v.string(255), default="", allow_post=True, allow_put=True,
             is_filter=True),
        attr("tenant_id", v.string(255), default=None, allow_post=True,
             required_by_policy=True, is_filter=True, is_sort_key=True),
        attr("project_id", v.string(255), default=None, allow_post=True,
             required_by_policy=True, is_filter=True, is_sort_key=True),
    ]


VPNSERVICE = resource(
    "vpnservice", "vpnservices",
    *_common(),
    attr("router_id", v.uuid, allow_post=True, is_filter=True, is_sort_key=True,
         convert_filter=str),
    attr("subnet_id", v.or_none(v.uuid), default=None, allow_post=True, is_filter=True),
    attr("admin_state_up", v.boolean, default=True, allow_post=True, allow_put=True,
         is_filter=True, convert_filter=v.filter_bool),
    attr("status", is_filter=True),
    attr("external_v4_ip", is_filter=True),
    attr("external_v6_ip", is_filter=True),
    attr("flavor_id", v.or_none(v.uuid), default=None, allow_post=True, is_filter=True),
    has_tags=False, url_name="vpn/vpnservices",
)

IKEPOLICY = resource(
    "ikepolicy", "ikepolicies",
    *_common(),
    attr("auth_algorithm", v.one_of(*AUTH_ALGORITHMS), default=DEFAULT_AUTH,
         allow_post=True, allow_put=True, is_filter=True),
    attr("encryption_algorithm", v.one_of(*ENCRYPTION_ALGORITHMS), default="aes-128",
         allow_post=True, allow_put=True, is_filter=True),
    attr("phase1_negotiation_mode", v.one_of("main", "aggressive"), default="main",
         allow_post=True, allow_put=True, is_filter=True),
    attr("lifetime", lifetime, default={}, allow_post=True, allow_put=True),
    attr("ike_version", v.one_of("v1", "v2"), default="v1", allow_post=True,
         allow_put=True, is_filter=True),
    attr("pfs", v.one_of(*PFS_GROUPS), default="group5", allow_post=True,
         allow_put=True, is_filter=True),
    has_tags=False, url_name="vpn/ikepolicies",
)

IPSECPOLICY = resource(
    "ipsecpolicy", "ipsecpolicies",
    *_common(),
    attr("transform_protocol", v.one_of("ah", "ah-esp", "esp"), default="esp",
         allow_post=True, allow_put=True, is_filter=True),
    attr("auth_algorithm", v.one_of(*AUTH_ALGORITHMS), default=DEFAULT_AUTH,
         allow_post=True, allow_put=True, is_filter=True),
    attr("encryption_algorithm", v.one_of(*ENCRYPTION_ALGORITHMS), default="aes-128",
         allow_post=True, allow_put=True, is_filter=True),
    attr("encapsulation_mode", v.one_of("transport", "tunnel"), default="tunnel",
         allow_post=True, allow_put=True, is_filter=True),
    attr("lifetime", lifetime, default={}, allow_post=True, allow_put=True),
    attr("pfs", v.one_of(*PFS_GROUPS), default="group5", allow_post=True,
         allow_put=True, is_filter=True),
    has_tags=False, url_name="vpn/ipsecpolicies",
)

ENDPOINT_GROUP = resource(
    "endpoint_group", "endpoint_groups",
    *_common(),
    attr("type", v.one_of(*ENDPOINT_TYPES), allow_post=True, is_filter=True),
    attr("endpoints", endpoints, default=[], allow_post=True),
    has_tags=False, url_name="vpn/endpoint-groups",
)

IPSEC_SITE_CONNECTION = resource(
    "ipsec_site_connection", "ipsec_site_connections",
    *_common(),
    attr("local_id", v.string(), default="", allow_post=True, allow_put=True,
         is_filter=True),
    attr("peer_address", v.string(), allow_post=True, allow_put=True, is_filter=True),
    attr("peer_id", v.string(), allow_post=True, allow_put=True, is_filter=True),
    attr("peer_cidrs", peer_cidrs, default=None, allow_post=True, allow_put=True),
    attr("route_mode", is_filter=True),
    attr("mtu", v.non_negative(), default=1500, allow_post=True, allow_put=True,
         is_filter=True),
    attr("initiator", v.one_of(*INITIATORS), default="bi-directional",
         allow_post=True, allow_put=True, is_filter=True),
    attr("auth_mode", is_filter=True),
    attr("psk", v.string(), allow_post=True, allow_put=True, is_filter=True),
    attr("dpd", dpd, default={}, allow_post=True, allow_put=True),
    attr("admin_state_up", v.boolean, default=True, allow_post=True, allow_put=True,
         is_filter=True, convert_filter=v.filter_bool),
    attr("status", is_filter=True),
    attr("vpnservice_id", v.uuid, allow_post=True, is_filter=True, convert_filter=str),
    attr("ikepolicy_id", v.uuid, allow_post=True, is_filter=True, convert_filter=str),
    attr("ipsecpolicy_id", v.uuid, allow_post=True, is_filter=True, convert_filter=str),
    attr("local_ep_group_id", v.or_none(v.uuid), default=None, allow_post=True,
         allow_put=True, is_filter=True),
    attr("peer_ep_group_id", v.or_none(v.uuid), default=None, allow_post=True,
         allow_put=True, is_filter=True),
    has_tags=False, url_name="vpn/ipsec-site-connections",
)

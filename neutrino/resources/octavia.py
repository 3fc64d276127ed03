"""The Octavia v2 API's resources, declared once as data.

Octavia's API is not Neutron's: its bodies are checked as its WSME types
check them (``Invalid input for field/attribute ...``), unknown attributes
are refused, and what a create and an update accept differ per attribute.
Each resource here lists its request fields (type, limits, default, where
it is accepted) and the attributes its answers show, in Octavia's order;
``neutrino.plugins.octavia.validate`` reads these to check bodies and the
API lists, filters and sorts by them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Octavia's (octavia-lib's) enumerations
LISTENER_PROTOCOLS = ("HTTP", "HTTPS", "TCP", "TERMINATED_HTTPS", "UDP", "SCTP",
                      "PROMETHEUS")
POOL_PROTOCOLS = ("HTTP", "HTTPS", "PROXY", "PROXYV2", "TCP", "UDP", "SCTP")
LB_ALGORITHMS = ("ROUND_ROBIN", "LEAST_CONNECTIONS", "SOURCE_IP", "SOURCE_IP_PORT")
SP_TYPES = ("SOURCE_IP", "HTTP_COOKIE", "APP_COOKIE")
HM_TYPES = ("HTTP", "HTTPS", "PING", "TCP", "TLS-HELLO", "UDP-CONNECT", "SCTP")
HM_HTTP_METHODS = ("GET", "HEAD", "POST", "PUT", "DELETE", "TRACE", "OPTIONS",
                   "CONNECT", "PATCH")
HTTP_VERSIONS = (1.0, 1.1)
L7POLICY_ACTIONS = ("REJECT", "REDIRECT_TO_URL", "REDIRECT_TO_POOL", "REDIRECT_PREFIX")
REDIRECT_HTTP_CODES = (301, 302, 303, 307, 308)
L7RULE_TYPES = ("HOST_NAME", "PATH", "FILE_TYPE", "HEADER", "COOKIE", "SSL_CONN_HAS_CERT",
                "SSL_VERIFY_RESULT", "SSL_DN_FIELD")
L7RULE_COMPARE_TYPES = ("REGEX", "STARTS_WITH", "ENDS_WITH", "CONTAINS", "EQUAL_TO")
CLIENT_AUTH_MODES = ("NONE", "OPTIONAL", "MANDATORY")
# which pool protocols a listener's protocol can send to
LISTENER_POOL_PROTOCOLS = {
    "TCP": ("HTTP", "HTTPS", "PROXY", "PROXYV2", "TCP"),
    "HTTP": ("HTTP", "PROXY", "PROXYV2"),
    "HTTPS": ("HTTPS", "PROXY", "PROXYV2", "TCP"),
    "TERMINATED_HTTPS": ("HTTP", "PROXY", "PROXYV2"),
    "UDP": ("UDP",),
    "SCTP": ("SCTP",),
    "PROMETHEUS": (),
}
MAX_TIMEOUT = 24 * 24 * 60 * 60 * 1000
MAX_POLICY_POSITION = 2147483647
MAX_L7RULES_PER_L7POLICY = 50
DOMAIN_NAME_REGEX = (r"^(?=.{1,253}\.?$)(?:(?!-|[^.]+_)[A-Za-z0-9-_]{1,63}(?<!-)"
                     r"(?:\.|$))+$")
EXPECTED_CODES_REGEX = r"^(\d{3}(\s*,\s*\d{3})*)$|^(\d{3}-\d{3})$"
NO_CRLF = r"^[^\r\n]*$"
COOKIE_NAME = r"^[^\s,;\\]+$"

MISSING: Any = object()


@dataclass(frozen=True)
class Field:
    """One request attribute, as Octavia's WSME type declares it.

    ``type``: string, uuid, int, bool, enum, ip, cidr_list, string_list,
    alpn_list, uuid_list, string_dict, url, url_path, object (checked by the
    resource's own rules). ``post``/``put``: accepted on create/update;
    ``required`` on create; ``default`` filled on create when absent.
    """

    name: str
    type: str
    post: bool = True
    put: bool = True
    required: bool = False
    default: Any = MISSING
    max_length: int | None = None
    min_length: int | None = None
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[Any, ...] = ()
    pattern: str | None = None


@dataclass(frozen=True)
class OctaviaResource:
    kind: str             # the row's kind (octavia_objects.kind)
    singular: str         # request and answer key
    plural: str           # list key
    policy: str           # os_load-balancer_api:<policy>:<action>
    not_found: str        # "<not_found> <id> not found."
    fields: tuple[Field, ...]
    shown: tuple[str, ...]
    quota: str | None = None
    links_key: str = ""

    def get_field(self, name: str) -> Field | None:
        return next((f for f in self.fields if f.name == name), None)


def _s(name: str, n: int = 255, **kw: Any) -> Field:
    return Field(name, "string", max_length=n, **kw)


def _b(name: str, default: Any = MISSING, **kw: Any) -> Field:
    return Field(name, "bool", default=default, **kw)


def _e(name: str, choices: tuple[Any, ...], **kw: Any) -> Field:
    return Field(name, "enum", choices=choices, **kw)


def _i(name: str, lo: int | None = None, hi: int | None = None, **kw: Any) -> Field:
    return Field(name, "int", minimum=lo, maximum=hi, **kw)


TAGS = Field("tags", "string_list", max_length=255)
PROJECT = _s("project_id", 36, put=False)
NAME, DESCRIPTION = _s("name"), _s("description")
ADMIN = _b("admin_state_up", True)
TIMEOUTS = tuple(_i(n, 0, MAX_TIMEOUT) for n in (
    "timeout_client_data", "timeout_member_connect", "timeout_member_data",
    "timeout_tcp_inspect"))
TLS = (_s("tls_ciphers", 2048), Field("tls_versions", "string_list", max_length=32),
       Field("alpn_protocols", "alpn_list"))

LOADBALANCER = OctaviaResource(
    "loadbalancer", "loadbalancer", "loadbalancers", "loadbalancer", "Load Balancer",
    (NAME, DESCRIPTION, ADMIN,
     Field("vip_address", "ip", put=False), Field("vip_port_id", "uuid", put=False),
     Field("vip_subnet_id", "uuid", put=False), Field("vip_network_id", "uuid", put=False),
     Field("vip_qos_policy_id", "uuid"), Field("vip_sg_ids", "uuid_list"),
     Field("additional_vips", "object", put=False, default=[]), PROJECT,
     Field("listeners", "object", put=False), Field("pools", "object", put=False),
     _s("provider", 64, put=False), TAGS, Field("flavor_id", "uuid", put=False),
     _s("availability_zone", put=False)),
    ("id", "name", "description", "provisioning_status", "operating_status",
     "admin_state_up", "project_id", "created_at", "updated_at", "vip_address",
     "vip_port_id", "vip_subnet_id", "vip_network_id", "vip_sg_ids", "additional_vips",
     "listeners", "pools", "provider", "flavor_id", "vip_qos_policy_id", "tags",
     "availability_zone", "vip_vnic_type", "tenant_id"),
    quota="load_balancer")

LISTENER = OctaviaResource(
    "listener", "listener", "listeners", "listener", "Listener",
    (NAME, DESCRIPTION, ADMIN,
     _e("protocol", LISTENER_PROTOCOLS, put=False, required=True),
     _i("protocol_port", 1, 65535, put=False, required=True),
     _i("connection_limit", -1, default=-1),
     _s("default_tls_container_ref"), Field("sni_container_refs", "string_list",
                                             max_length=255),
     PROJECT, Field("default_pool_id", "uuid"),
     Field("default_pool", "object", put=False), Field("l7policies", "object", put=False),
     Field("insert_headers", "string_dict", max_length=255),
     Field("loadbalancer_id", "uuid", put=False, required=True),
     *TIMEOUTS, TAGS, _s("client_ca_tls_container_ref"),
     _e("client_authentication", CLIENT_AUTH_MODES, default="NONE"),
     _s("client_crl_container_ref"), Field("allowed_cidrs", "cidr_list"), *TLS,
     _i("hsts_max_age", 0), _b("hsts_include_subdomains", False),
     _b("hsts_preload", False)),
    ("id", "name", "description", "provisioning_status", "operating_status",
     "admin_state_up", "protocol", "protocol_port", "connection_limit",
     "default_tls_container_ref", "sni_container_refs", "project_id", "default_pool_id",
     "l7policies", "insert_headers", "created_at", "updated_at", "loadbalancers",
     "timeout_client_data", "timeout_member_connect", "timeout_member_data",
     "timeout_tcp_inspect", "tags", "client_ca_tls_container_ref",
     "client_authentication", "client_crl_container_ref", "allowed_cidrs", "tls_ciphers",
     "tls_versions", "alpn_protocols", "hsts_max_age", "hsts_include_subdomains",
     "hsts_preload", "tenant_id"),
    quota="listener")

SESSION_PERSISTENCE = (
    _e("type", SP_TYPES), _s("cookie_name", pattern=COOKIE_NAME),
    _i("persistence_timeout"), Field("persistence_granularity", "ip"))

POOL = OctaviaResource(
    "pool", "pool", "pools", "pool", "Pool",
    (NAME, DESCRIPTION, ADMIN, Field("listener_id", "uuid", put=False),
     Field("loadbalancer_id", "uuid", put=False),
     _e("protocol", POOL_PROTOCOLS, put=False, required=True),
     _e("lb_algorithm", LB_ALGORITHMS, required=True),
     Field("session_persistence", "object"), PROJECT,
     Field("healthmonitor", "object", put=False), Field("members", "object", put=False),
     TAGS, _s("tls_container_ref"), _s("ca_tls_container_ref"), _s("crl_container_ref"),
     _b("tls_enabled", False), *TLS),
    ("id", "name", "description", "provisioning_status", "operating_status",
     "admin_state_up", "protocol", "lb_algorithm", "session_persistence", "project_id",
     "loadbalancers", "listeners", "created_at", "updated_at", "healthmonitor_id",
     "members", "tags", "tls_container_ref", "ca_tls_container_ref", "crl_container_ref",
     "tls_enabled", "tls_ciphers", "tls_versions", "alpn_protocols", "tenant_id"),
    quota="pool")

MEMBER = OctaviaResource(
    "member", "member", "members", "member", "Member",
    (NAME, ADMIN, Field("address", "ip", put=False, required=True),
     _i("protocol_port", 1, 65535, put=False, required=True),
     _i("weight", 0, 256, default=1), _b("backup", False),
     Field("subnet_id", "uuid", put=False), PROJECT,
     _i("monitor_port", 1, 65535, default=None), Field("monitor_address", "ip", default=None),
     TAGS, _b("request_sriov", False, put=False)),
    ("id", "name", "operating_status", "provisioning_status", "admin_state_up", "address",
     "protocol_port", "weight", "backup", "subnet_id", "project_id", "created_at",
     "updated_at", "monitor_address", "monitor_port", "tags", "vnic_type", "tenant_id"),
    quota="member")

HEALTHMONITOR = OctaviaResource(
    "healthmonitor", "healthmonitor", "healthmonitors", "healthmonitor", "Health Monitor",
    (NAME, _e("type", HM_TYPES, put=False, required=True),
     _i("delay", 0, required=True), _i("timeout", 0, required=True),
     _i("max_retries_down", 1, 10, default=3), _i("max_retries", 1, 10, required=True),
     _e("http_method", HM_HTTP_METHODS), Field("url_path", "url_path"),
     Field("expected_codes", "string", pattern=EXPECTED_CODES_REGEX), ADMIN, PROJECT,
     Field("pool_id", "uuid", put=False, required=True), TAGS,
     _e("http_version", HTTP_VERSIONS),
     Field("domain_name", "string", min_length=1, max_length=255,
           pattern=DOMAIN_NAME_REGEX)),
    ("id", "name", "type", "delay", "timeout", "max_retries", "max_retries_down",
     "http_method", "url_path", "expected_codes", "admin_state_up", "project_id", "pools",
     "provisioning_status", "operating_status", "created_at", "updated_at", "tags",
     "http_version", "domain_name", "tenant_id"),
    quota="health_monitor")

L7POLICY = OctaviaResource(
    "l7policy", "l7policy", "l7policies", "l7policy", "L7 Policy",
    (NAME, DESCRIPTION, ADMIN, PROJECT, _e("action", L7POLICY_ACTIONS, required=True),
     Field("redirect_pool_id", "uuid"), Field("redirect_url", "url"),
     Field("redirect_prefix", "url"), _i("position", 0, MAX_POLICY_POSITION,
                                          default=MAX_POLICY_POSITION),
     Field("listener_id", "uuid", put=False, required=True),
     Field("rules", "object", put=False), TAGS,
     _e("redirect_http_code", REDIRECT_HTTP_CODES)),
    ("id", "name", "description", "provisioning_status", "operating_status",
     "admin_state_up", "project_id", "action", "listener_id", "redirect_pool_id",
     "redirect_url", "redirect_prefix", "position", "rules", "created_at", "updated_at",
     "tags", "redirect_http_code", "tenant_id"),
    quota="l7policy")

L7RULE = OctaviaResource(
    "l7rule", "rule", "rules", "rule", "L7 Rule",
    (_e("type", L7RULE_TYPES, required=True),
     _e("compare_type", L7RULE_COMPARE_TYPES, required=True),
     _s("key", pattern=NO_CRLF), _s("value", pattern=NO_CRLF, required=True),
     _b("invert", False), ADMIN, PROJECT, TAGS),
    ("id", "type", "compare_type", "key", "value", "invert", "provisioning_status",
     "operating_status", "created_at", "updated_at", "project_id", "admin_state_up",
     "tags", "tenant_id"),
    quota="l7rule")

OBJECTS = {r.kind: r for r in (LOADBALANCER, LISTENER, POOL, MEMBER, HEALTHMONITOR,
                               L7POLICY, L7RULE)}

# Flavors, availability zones and their profiles: definitions an admin keeps.
FLAVORPROFILE = OctaviaResource(
    "flavorprofile", "flavorprofile", "flavorprofiles", "flavor-profile", "Flavor profile",
    (_s("name", required=True), _s("provider_name", required=True),
     Field("flavor_data", "string", max_length=4096, required=True)),
    ("id", "name", "provider_name", "flavor_data"), links_key="flavorprofile_links")
FLAVOR = OctaviaResource(
    "flavor", "flavor", "flavors", "flavor", "Flavor",
    (_s("name", required=True), _s("description"),
     Field("flavor_profile_id", "uuid", put=False, required=True),
     _b("enabled", True)),
    ("id", "name", "description", "enabled", "flavor_profile_id"))
AZPROFILE = OctaviaResource(
    "availability_zone_profile", "availability_zone_profile", "availability_zone_profiles",
    "availability-zone-profile", "availability_zone_profile",
    (_s("name", required=True), _s("provider_name", required=True),
     Field("availability_zone_data", "string", max_length=4096, required=True)),
    ("id", "name", "provider_name", "availability_zone_data"),
    links_key="availability_zone_profile_links")
AZ = OctaviaResource(
    "availability_zone", "availability_zone", "availability_zones", "availability-zone",
    "Availability Zone",
    (_s("name", required=True, put=False), _s("description"),
     Field("availability_zone_profile_id", "uuid", put=False, required=True),
     _b("enabled", True)),
    ("name", "description", "enabled", "availability_zone_profile_id"))

DEFINITIONS = {r.kind: r for r in (FLAVORPROFILE, FLAVOR, AZPROFILE, AZ)}

# quota resources: the API's key, its deprecated twin, the option's default name
QUOTA_KEYS = (("load_balancer", "loadbalancer", "default_load_balancer_quota"),
              ("listener", None, "default_listener_quota"),
              ("member", None, "default_member_quota"),
              ("pool", None, "default_pool_quota"),
              ("health_monitor", "healthmonitor", "default_health_monitor_quota"),
              ("l7policy", None, "default_l7policy_quota"),
              ("l7rule", None, "default_l7rule_quota"))

"""``vpnaas`` and ``vpn-endpoint-groups``: /v2.0/vpn/... as upstream's API,
its reference validator and default policy answer them (the owner's, hidden
from other projects, an admin's over all)."""
from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import Client
from tests.l3 import _l3

VPN = "/v2.0/vpn"


def _error(body: Any) -> str:
    return str(body["NeutronError"]["type"])


def _project(client: Client) -> str:
    return str(client.session.headers["X-Project-Id"])


def _made(client: Client, plural: str, key: str, **attrs: Any) -> dict[str, Any]:
    status, body = client.post(f"{VPN}/{plural}", {key: attrs})
    assert status == 201, body
    return dict(body[key])


def _site(admin: Client, owner: Client) -> dict[str, Any]:
    """A router of ``owner`` with a gateway and one private subnet on it."""
    ext, _ = _l3.external_network(admin)
    router = _l3.router(owner, external_gateway_info={"network_id": ext["id"]})
    subnet = _l3.private_subnet(owner)
    _l3.add_interface(owner, router["id"], subnet_id=subnet["id"])
    return {"router": router, "subnet": subnet, "ext": ext}


def _policies(client: Client) -> tuple[dict[str, Any], dict[str, Any]]:
    ike = _made(client, "ikepolicies", "ikepolicy", name="ike", auth_algorithm="sha256",
                encryption_algorithm="aes-256")
    ipsec = _made(client, "ipsecpolicies", "ipsecpolicy", name="ipsec",
                  auth_algorithm="sha256", encryption_algorithm="aes-256")
    return ike, ipsec


def _legacy(client: Client, site: dict[str, Any], **attrs: Any) -> dict[str, Any]:
    service = _made(client, "vpnservices", "vpnservice", router_id=site["router"]["id"],
                    subnet_id=site["subnet"]["id"])
    ike, ipsec = _policies(client)
    body = {"vpnservice_id": service["id"], "ikepolicy_id": ike["id"],
            "ipsecpolicy_id": ipsec["id"], "peer_address": "172.24.4.233",
            "peer_id": "172.24.4.233", "psk": "secret", "peer_cidrs": ["10.99.1.0/24"],
            **attrs}
    return _made(client, "ipsec-site-connections", "ipsec_site_connection", **body)


def test_policies_default_to_working_algorithms_and_show_their_lifetime(owner: Client) -> None:
    ike = _made(owner, "ikepolicies", "ikepolicy", name="defaults")
    assert {k: ike[k] for k in ("auth_algorithm", "encryption_algorithm", "ike_version",
                                "pfs", "phase1_negotiation_mode", "lifetime", "description",
                                "project_id", "tenant_id")} == {
        "auth_algorithm": "sha1", "encryption_algorithm": "aes-128", "ike_version": "v1",
        "pfs": "group5", "phase1_negotiation_mode": "main",
        "lifetime": {"units": "seconds", "value": 3600}, "description": "",
        "project_id": _project(owner), "tenant_id": _project(owner)}
    assert "created_at" not in ike and "tags" not in ike
    ipsec = _made(owner, "ipsecpolicies", "ipsecpolicy", encryption_algorithm="aes-256-ctr")
    assert {k: ipsec[k] for k in ("transform_protocol", "encapsulation_mode",
                                  "encryption_algorithm", "auth_algorithm")} == {
        "transform_protocol": "esp", "encapsulation_mode": "tunnel",
        "encryption_algorithm": "aes-256-ctr", "auth_algorithm": "sha1"}
    status, body = owner.put(f"{VPN}/ikepolicies/{ike['id']}",
                             {"ikepolicy": {"lifetime": {"value": 7200}, "ike_version": "v2"}})
    assert status == 200, body
    assert body["ikepolicy"]["lifetime"] == {"units": "seconds", "value": 7200}
    assert body["ikepolicy"]["ike_version"] == "v2"
    # a value spelled as a string is echoed so by the write (upstream's
    # answer, which tempest checks) and read back as the integer stored
    status, body = owner.put(f"{VPN}/ipsecpolicies/{ipsec['id']}",
                             {"ipsecpolicy": {"lifetime": {"units": "seconds", "value": "2000"}}})
    assert (status, body["ipsecpolicy"]["lifetime"]) == (200, {"units": "seconds",
                                                                "value": "2000"})
    status, body = owner.get(f"{VPN}/ipsecpolicies/{ipsec['id']}")
    assert body["ipsecpolicy"]["lifetime"] == {"units": "seconds", "value": 2000}


@pytest.mark.parametrize("plural,key,attrs", [
    ("ikepolicies", "ikepolicy", {"auth_algorithm": "md5"}),
    ("ikepolicies", "ikepolicy", {"lifetime": {"units": "seconds", "value": 59}}),
    ("ikepolicies", "ikepolicy", {"lifetime": {"units": "kilobytes"}}),
    ("ikepolicies", "ikepolicy", {"pfs": "group1"}),
    ("ipsecpolicies", "ipsecpolicy", {"transform_protocol": "ah-esp"}),
    ("ipsecpolicies", "ipsecpolicy", {"encapsulation_mode": "beet"}),
    ("vpnservices", "vpnservice", {"name": "x" * 256, "router_id": "0" * 8 + "-0000-0000-0000-" + "0" * 12}),
])
def test_bad_policy_and_service_values_are_refused(owner: Client, plural: str, key: str,
                                                   attrs: dict[str, Any]) -> None:
    status, body = owner.post(f"{VPN}/{plural}", {key: attrs})
    assert status == 400, body


def test_a_vpn_service_takes_its_router_gateway_address_and_is_pending(
        admin: Client, owner: Client) -> None:
    site = _site(admin, owner)
    service = _made(owner, "vpnservices", "vpnservice", router_id=site["router"]["id"])
    gw_ip = site["router"]["external_gateway_info"]["external_fixed_ips"][0]["ip_address"]
    assert (service["external_v4_ip"], service["external_v6_ip"], service["status"],
            service["subnet_id"], service["flavor_id"], service["admin_state_up"]) == (
        gw_ip, None, "PENDING_CREATE", None, None, True)
    status, body = owner.put(f"{VPN}/vpnservices/{service['id']}", {"vpnservice": {"name": "n"}})
    assert (status, _error(body)) == (400, "VPNStateInvalidToUpdate")


def test_a_vpn_service_needs_a_gateway_and_a_subnet_on_its_router(
        admin: Client, owner: Client) -> None:
    bare = _l3.router(owner)
    status, body = owner.post(f"{VPN}/vpnservices", {"vpnservice": {"router_id": bare["id"]}})
    assert (status, _error(body)) == (400, "RouterIsNotExternal")
    site = _site(admin, owner)
    elsewhere = _l3.private_subnet(owner)
    status, body = owner.post(f"{VPN}/vpnservices", {"vpnservice": {
        "router_id": site["router"]["id"], "subnet_id": elsewhere["id"]}})
    assert (status, _error(body)) == (400, "SubnetIsNotConnectedToRouter")


def test_other_projects_neither_see_nor_use_a_project_s_vpn_resources(
        admin: Client, owner: Client, other: Client) -> None:
    site = _site(admin, owner)
    status, body = other.post(f"{VPN}/vpnservices", {"vpnservice": {
        "router_id": site["router"]["id"]}})
    assert (status, _error(body)) == (404, "RouterNotFound")
    conn = _legacy(owner, site)
    for plural, rid, error in (
            ("ipsec-site-connections", conn["id"], "IPsecSiteConnectionNotFound"),
            ("vpnservices", conn["vpnservice_id"], "VPNServiceNotFound"),
            ("ikepolicies", conn["ikepolicy_id"], "IKEPolicyNotFound"),
            ("ipsecpolicies", conn["ipsecpolicy_id"], "IPsecPolicyNotFound")):
        status, body = other.get(f"{VPN}/{plural}/{rid}")
        assert (status, _error(body)) == (404, error)
        status, body = other.delete(f"{VPN}/{plural}/{rid}")
        assert status == 404, body
        status, body = other.get(f"{VPN}/{plural}")
        assert rid not in [x["id"] for x in body[plural.replace("-", "_")]]
        status, body = admin.get(f"{VPN}/{plural}/{rid}")
        assert status == 200, body
    ike, ipsec = _policies(other)
    status, body = other.post(f"{VPN}/ipsec-site-connections", {"ipsec_site_connection": {
        "vpnservice_id": conn["vpnservice_id"], "ikepolicy_id": ike["id"],
        "ipsecpolicy_id": ipsec["id"], "peer_address": "172.24.4.9", "peer_id": "x",
        "psk": "s", "peer_cidrs": ["10.98.0.0/24"]}})
    assert (status, _error(body)) == (404, "VPNServiceNotFound")


def test_an_admin_makes_vpn_resources_for_a_project(admin: Client, owner: Client) -> None:
    site = _site(admin, owner)
    project = _project(owner)
    service = _made(admin, "vpnservices", "vpnservice", router_id=site["router"]["id"],
                    tenant_id=project)
    ike = _made(admin, "ikepolicies", "ikepolicy", tenant_id=project)
    group = _made(admin, "endpoint-groups", "endpoint_group", type="cidr",
                  endpoints=["10.1.0.0/24"], tenant_id=project)
    for plural, key, made in (("vpnservices", "vpnservice", service),
                              ("ikepolicies", "ikepolicy", ike),
                              ("endpoint-groups", "endpoint_group", group)):
        assert made["project_id"] == project
        status, body = owner.get(f"{VPN}/{plural}/{made['id']}")
        assert status == 200 and body[key]["id"] == made["id"]


def test_a_legacy_connection_shows_upstream_s_defaults(admin: Client, owner: Client) -> None:
    site = _site(admin, owner)
    conn = _legacy(owner, site, name="c")
    assert {k: conn[k] for k in ("dpd", "mtu", "initiator", "route_mode", "auth_mode",
                                 "status", "admin_state_up", "local_id", "peer_cidrs",
                                 "local_ep_group_id", "peer_ep_group_id", "psk")} == {
        "dpd": {"action": "hold", "interval": 30, "timeout": 120}, "mtu": 1500,
        "initiator": "bi-directional", "route_mode": "static", "auth_mode": "psk",
        "status": "PENDING_CREATE", "admin_state_up": True, "local_id": "",
        "peer_cidrs": ["10.99.1.0/24"], "local_ep_group_id": None, "peer_ep_group_id": None,
        "psk": "secret"}
    status, body = owner.get(f"{VPN}/ipsec-site-connections?vpnservice_id="
                             f"{conn['vpnservice_id']}")
    assert [c["id"] for c in body["ipsec_site_connections"]] == [conn["id"]]


@pytest.mark.parametrize("attrs,error", [
    ({"peer_cidrs": []}, "MissingPeerCidrs"),
    ({"peer_cidrs": ["10.1.0.0/24", "2001:db8::/64"]}, "MixedIPVersionsForPeerCidrs"),
    ({"peer_cidrs": ["2001:db8::/64"]}, "MixedIPVersionsForIPSecConnection"),
    ({"peer_cidrs": ["10.1.0.0/33"]}, "HTTPBadRequest"),
    ({"mtu": 67}, "IPsecSiteConnectionMtuError"),
    ({"dpd": {"interval": 30, "timeout": 30}}, "IPsecSiteConnectionDpdIntervalValueError"),
    ({"dpd": {"action": "explode"}}, "HTTPBadRequest"),
    ({"peer_address": "no-such-host.invalid"}, "VPNPeerAddressNotResolved"),
    ({"peer_address": "2001:db8::1"}, "ExternalNetworkHasNoSubnet"),
    ({"initiator": "sometimes"}, "HTTPBadRequest"),
])
def test_a_legacy_connection_is_checked_as_upstream_checks_it(
        admin: Client, owner: Client, attrs: dict[str, Any], error: str) -> None:
    site = _site(admin, owner)
    service = _made(owner, "vpnservices", "vpnservice", router_id=site["router"]["id"],
                    subnet_id=site["subnet"]["id"])
    ike, ipsec = _policies(owner)
    body = {"vpnservice_id": service["id"], "ikepolicy_id": ike["id"],
            "ipsecpolicy_id": ipsec["id"], "peer_address": "172.24.4.233",
            "peer_id": "172.24.4.233", "psk": "secret", "peer_cidrs": ["10.99.1.0/24"],
            **attrs}
    status, answer = owner.post(f"{VPN}/ipsec-site-connections",
                                {"ipsec_site_connection": body})
    assert status == 400, answer
    assert _error(answer) in (error, "InvalidInput") if error == "HTTPBadRequest" else \
        _error(answer) == error
    status, listed = owner.get(f"{VPN}/ipsec-site-connections")
    assert listed["ipsec_site_connections"] == []


def test_endpoint_groups_are_checked_and_kept_while_used(admin: Client, owner: Client) -> None:
    site = _site(admin, owner)
    for attrs, error in (
            ({"type": "cidr", "endpoints": []}, "MissingEndpointForEndpointGroup"),
            ({"type": "cidr", "endpoints": ["10.2.0.0/24", "2000::1"]},
             "InvalidEndpointInEndpointGroup"),
            ({"type": "cidr", "endpoints": ["10.2.0.0/24", "10.2.0.0/24"]},
             "InvalidEndpointInEndpointGroup"),
            ({"type": "cidr", "endpoints": [site["subnet"]["id"]]},
             "InvalidEndpointInEndpointGroup"),
            ({"type": "subnet", "endpoints": ["not-a-uuid"]}, "InvalidEndpointInEndpointGroup"),
            ({"type": "subnet", "endpoints": ["6fbfa7f2-4a38-4a35-9c5c-a4a3c6e3c6a1"]},
             "NonExistingSubnetInEndpointGroup"),
            ({"type": "nothing", "endpoints": ["10.1.0.0/24"]}, "HTTPBadRequest")):
        status, body = owner.post(f"{VPN}/endpoint-groups", {"endpoint_group": attrs})
        assert status == 400, (attrs, body)
        if error != "HTTPBadRequest":
            assert _error(body) == error, attrs
    local = _made(owner, "endpoint-groups", "endpoint_group", type="subnet",
                  endpoints=[site["subnet"]["id"]], name="local")
    peer = _made(owner, "endpoint-groups", "endpoint_group", type="cidr",
                 endpoints=["10.101.0.0/24", "10.102.0.0/24"], description="d")
    assert (peer["endpoints"], peer["type"], peer["description"]) == (
        ["10.101.0.0/24", "10.102.0.0/24"], "cidr", "d")
    status, body = owner.get(f"{VPN}/endpoint-groups?type=subnet")
    assert [g["id"] for g in body["endpoint_groups"]] == [local["id"]]
    service = _made(owner, "vpnservices", "vpnservice", router_id=site["router"]["id"])
    ike, ipsec = _policies(owner)
    base = {"vpnservice_id": service["id"], "ikepolicy_id": ike["id"],
            "ipsecpolicy_id": ipsec["id"], "peer_address": "172.24.4.233",
            "peer_id": "172.24.4.233", "psk": "secret"}
    for attrs, error in (
            ({"local_ep_group_id": local["id"]}, "MissingRequiredEndpointGroup"),
            ({}, "MissingRequiredEndpointGroup"),
            ({"local_ep_group_id": local["id"], "peer_ep_group_id": peer["id"],
              "peer_cidrs": ["10.3.0.0/24"]}, "PeerCidrsInvalid"),
            ({"local_ep_group_id": peer["id"], "peer_ep_group_id": peer["id"]},
             "WrongEndpointGroupType"),
            ({"local_ep_group_id": local["id"], "peer_ep_group_id": local["id"]},
             "WrongEndpointGroupType")):
        status, body = owner.post(f"{VPN}/ipsec-site-connections",
                                  {"ipsec_site_connection": {**base, **attrs}})
        assert (status, _error(body)) == (400, error), attrs
    conn = _made(owner, "ipsec-site-connections", "ipsec_site_connection", **base,
                 local_ep_group_id=local["id"], peer_ep_group_id=peer["id"])
    assert conn["peer_cidrs"] == []
    status, body = owner.delete(f"{VPN}/endpoint-groups/{peer['id']}")
    assert (status, _error(body)) == (400, "EndpointGroupInUse")
    status, body = owner.delete(f"/v2.0/subnets/{site['subnet']['id']}")
    assert status == 409, body
    status, body = _l3.remove_interface(owner, site["router"]["id"],
                                        subnet_id=site["subnet"]["id"])
    assert (status, _error(body)) == (409, "SubnetInUseByIPsecSiteConnection")
    # with a subnet, the service takes no endpoint groups
    with_subnet = _made(owner, "vpnservices", "vpnservice", router_id=site["router"]["id"],
                        subnet_id=site["subnet"]["id"])
    status, body = owner.post(f"{VPN}/ipsec-site-connections", {"ipsec_site_connection": {
        **base, "vpnservice_id": with_subnet["id"], "peer_cidrs": ["10.3.0.0/24"],
        "local_ep_group_id": local["id"]}})
    assert (status, _error(body)) == (400, "InvalidEndpointGroup")


def test_what_connections_use_is_kept_until_they_go(admin: Client, owner: Client) -> None:
    site = _site(admin, owner)
    conn = _legacy(owner, site)
    for plural, key, rid, error in (
            ("ikepolicies", "ikepolicy", conn["ikepolicy_id"], "IKEPolicyInUse"),
            ("ipsecpolicies", "ipsecpolicy", conn["ipsecpolicy_id"], "IPsecPolicyInUse")):
        status, body = owner.put(f"{VPN}/{plural}/{rid}", {key: {"name": "renamed"}})
        assert (status, _error(body)) == (409, error)
        status, body = owner.delete(f"{VPN}/{plural}/{rid}")
        assert (status, _error(body)) == (409, error)
    status, body = owner.delete(f"{VPN}/vpnservices/{conn['vpnservice_id']}")
    assert (status, _error(body)) == (409, "VPNServiceInUse")
    router_id = site["router"]["id"]
    status, body = owner.put(f"/v2.0/routers/{router_id}",
                             {"router": {"external_gateway_info": {}}})
    assert (status, _error(body)) == (409, "RouterInUse"), body
    assert "VPN service" in body["NeutronError"]["message"]
    status, body = _l3.remove_interface(owner, router_id, subnet_id=site["subnet"]["id"])
    assert (status, _error(body)) == (409, "SubnetInUseByVPNService")
    status, body = owner.delete(f"{VPN}/ipsec-site-connections/{conn['id']}")
    assert status == 204, body
    for plural, rid in (("ikepolicies", conn["ikepolicy_id"]),
                        ("ipsecpolicies", conn["ipsecpolicy_id"])):
        status, body = owner.delete(f"{VPN}/{plural}/{rid}")
        assert status == 204, body
    status, body = owner.delete(f"/v2.0/routers/{router_id}")
    assert status == 409, body
    status, body = owner.delete(f"{VPN}/vpnservices/{conn['vpnservice_id']}")
    assert status == 204, body
    _l3.remove_interface(owner, router_id, subnet_id=site["subnet"]["id"])
    status, body = owner.delete(f"/v2.0/routers/{router_id}")
    assert status == 204, body


def test_vpn_flavors_need_the_flavors_plugin_s_vpn_flavor(admin: Client, owner: Client) -> None:
    site = _site(admin, owner)
    status, body = owner.post(f"{VPN}/vpnservices", {"vpnservice": {
        "router_id": site["router"]["id"], "flavor_id": "6fbfa7f2-4a38-4a35-9c5c-a4a3c6e3c6a1"}})
    assert (status, _error(body)) == (404, "FlavorNotFound")


def test_the_extensions_and_provider_are_listed(owner: Client) -> None:
    status, body = owner.get("/v2.0/extensions")
    aliases = {e["alias"] for e in body["extensions"]}
    assert {"vpnaas", "vpn-endpoint-groups", "vpn-aes-ctr", "vpn-flavors"} <= aliases
    status, body = owner.get("/v2.0/service-providers?service_type=VPN")
    assert [(p["name"], p["default"]) for p in body["service_providers"]] == [
        ("strongswan", True)]


def test_a_reader_may_not_create(owner: Client) -> None:
    reader = _l3.reader_of(owner)
    status, body = reader.post(f"{VPN}/ikepolicies", {"ikepolicy": {"name": "x"}})
    assert status == 403, body

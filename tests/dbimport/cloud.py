"""A small cloud of every resource type both upstream and neutrino serve,
made through the API (upstream's, for the import test), and the reads that
compare two servers holding it."""
from __future__ import annotations

import ipaddress
from typing import Any

import requests

ADMIN_PROJECT = "a0000000000000000000000000000001"
OTHER_PROJECT = "b0000000000000000000000000000002"

# Every collection the comparison reads, by its path under /v2.0.
COLLECTIONS = (
    "networks", "subnets", "ports", "subnetpools", "address-scopes", "security-groups",
    "security-group-rules", "routers", "floatingips", "qos/policies", "rbac-policies",
    "trunks", "segments", "local-ips", "ndp_proxies", "quotas", "address-groups", "log/logs",
    "metering/metering-labels", "metering/metering-label-rules",
)
# Collections under each item of another: (parent collection, path below an item).
NESTED = (("routers", "conntrack_helpers"), ("floatingips", "port_forwardings"),
          ("local-ips", "port_associations"))


class Api:
    """An admin (noauth headers) client that fails loudly."""

    def __init__(self, url: str, project: str = ADMIN_PROJECT) -> None:
        self.url = url.rstrip("/") + "/v2.0"
        self.s = requests.Session()
        self.s.headers.update({"X-User-Id": "importer", "X-Project-Id": project,
                               "X-Roles": "admin,member,reader"})

    def call(self, method: str, path: str, body: Any = None, ok: int = 0) -> Any:
        resp = self.s.request(method, self.url + path, json=body, timeout=60)
        if resp.status_code >= 400 or (ok and resp.status_code != ok):
            raise AssertionError(f"{method} {path} {body}: {resp.status_code} {resp.text}")
        return resp.json() if resp.content else None

    def post(self, path: str, key: str, **body: Any) -> dict[str, Any]:
        return self.call("POST", path, {key: body})[key]

    def put(self, path: str, body: Any) -> Any:
        return self.call("PUT", path, body)

    def get(self, path: str) -> Any:
        return self.call("GET", path)


def populate(api: Api) -> dict[str, str]:
    """Make one of everything; returns the ids the test reuses."""
    ids: dict[str, str] = {}
    scope = api.post("/address-scopes", "address_scope", name="scope4", ip_version=4)
    pool = api.post("/subnetpools", "subnetpool", name="pool4", prefixes=["10.80.0.0/16"],
                    default_prefixlen=26, address_scope_id=scope["id"], description="a pool")
    ext = api.post("/networks", "network", name="public", **{"router:external": True})
    ext_sub = api.post("/subnets", "subnet", network_id=ext["id"], ip_version=4,
                       cidr="172.30.0.0/24", name="public-v4")
    net = api.post("/networks", "network", name="private", description="the project's",
                   mtu=1400)
    api.put(f"/networks/{net['id']}/tags", {"tags": ["blue", "Green"]})
    sub = api.post("/subnets", "subnet", network_id=net["id"], ip_version=4,
                   subnetpool_id=pool["id"], name="private-v4",
                   dns_nameservers=["192.0.2.53", "192.0.2.54"],
                   host_routes=[{"destination": "198.51.100.0/24", "nexthop": "10.80.0.9"}])
    net2 = api.post("/networks", "network", name="second")
    sub2 = api.post("/subnets", "subnet", network_id=net2["id"], ip_version=4,
                    cidr="192.168.77.0/24", name="second",
                    allocation_pools=[{"start": "192.168.77.10", "end": "192.168.77.20"},
                                      {"start": "192.168.77.30", "end": "192.168.77.40"}],
                    enable_dhcp=False, service_types=["compute:nova"])
    v6 = api.post("/subnets", "subnet", network_id=net["id"], ip_version=6,
                  cidr="fd00:77::/64", name="v6", ipv6_address_mode="slaac",
                  ipv6_ra_mode="slaac")
    prov = api.post("/networks", "network", name="provider",
                    **{"provider:network_type": "vlan", "provider:physical_network": "physnet1",
                       "provider:segmentation_id": 3456, "shared": True})
    sg = api.post("/security-groups", "security_group", name="web", description="web tier")
    api.post("/security-group-rules", "security_group_rule", security_group_id=sg["id"],
             direction="ingress", ethertype="IPv4", protocol="tcp", port_range_min=80,
             port_range_max=80, remote_ip_prefix="203.0.113.7/24", description="http")
    api.post("/security-group-rules", "security_group_rule", security_group_id=sg["id"],
             direction="ingress", ethertype="IPv4", remote_group_id=sg["id"])
    group = api.post("/address-groups", "address_group", name="ag", description="group",
                     addresses=["198.51.100.0/28", "2001:db8::/64"])
    api.post("/security-group-rules", "security_group_rule", security_group_id=sg["id"],
             direction="ingress", ethertype="IPv4", remote_address_group_id=group["id"])
    api.post("/log/logs", "log", name="drops", resource_type="security_group",
             resource_id=sg["id"], event="DROP")
    port = api.post("/ports", "port", network_id=net["id"], name="vm1",
                    fixed_ips=[{"subnet_id": sub["id"]}], security_groups=[sg["id"]],
                    allowed_address_pairs=[{"ip_address": "10.80.0.200"}],
                    extra_dhcp_opts=[{"opt_name": "mtu", "opt_value": "1400"}],
                    device_owner="compute:nova", device_id="instance-1",
                    **{"binding:host_id": "compute-1"})
    api.put(f"/ports/{port['id']}/tags", {"tags": ["vm"]})
    port2 = api.post("/ports", "port", network_id=net2["id"], name="vm2", device_owner="compute:nova",
                     port_security_enabled=False, security_groups=[],
                     fixed_ips=[{"subnet_id": sub2["id"], "ip_address": "192.168.77.12"}])
    router = api.post("/routers", "router", name="r1",
                      external_gateway_info={"network_id": ext["id"]})
    api.put(f"/routers/{router['id']}/add_router_interface", {"subnet_id": sub["id"]})
    api.put(f"/routers/{router['id']}/add_router_interface", {"subnet_id": v6["id"]})
    api.put(f"/routers/{router['id']}", {"router": {"routes": [
        {"destination": "198.51.100.128/25", "nexthop": "10.80.0.10"}]}})
    api.post("/floatingips", "floatingip", floating_network_id=ext["id"],
             port_id=port["id"], description="vm1's")
    fip2 = api.post("/floatingips", "floatingip", floating_network_id=ext["id"])
    served = api.post("/ports", "port", network_id=net["id"], name="served",
                      fixed_ips=[{"subnet_id": sub["id"]}])
    api.post(f"/floatingips/{fip2['id']}/port_forwardings", "port_forwarding",
             internal_port_id=served["id"],
             internal_ip_address=served["fixed_ips"][0]["ip_address"],
             internal_port=22, external_port=2222, protocol="tcp", description="ssh")
    api.post(f"/routers/{router['id']}/conntrack_helpers", "conntrack_helper",
             protocol="udp", port=69, helper="tftp")
    qos = api.post("/qos/policies", "policy", name="gold", description="fast")
    api.post(f"/qos/policies/{qos['id']}/bandwidth_limit_rules", "bandwidth_limit_rule",
             max_kbps=10000, max_burst_kbps=800, direction="egress")
    api.post(f"/qos/policies/{qos['id']}/dscp_marking_rules", "dscp_marking_rule", dscp_mark=26)
    api.post(f"/qos/policies/{qos['id']}/minimum_bandwidth_rules", "minimum_bandwidth_rule",
             min_kbps=1000, direction="egress")
    api.put(f"/networks/{net['id']}", {"network": {"qos_policy_id": qos["id"]}})
    api.post("/rbac-policies", "rbac_policy", object_type="network", object_id=net["id"],
             action="access_as_shared", target_tenant=OTHER_PROJECT)
    api.post("/rbac-policies", "rbac_policy", object_type="qos_policy", object_id=qos["id"],
             action="access_as_shared", target_tenant="*")
    api.put(f"/quotas/{OTHER_PROJECT}", {"quota": {"network": 7, "port": 70}})
    parent = api.post("/ports", "port", network_id=prov["id"], name="trunk-parent")
    net3 = api.post("/networks", "network", name="third")
    child = api.post("/ports", "port", network_id=net3["id"], name="trunk-child")
    api.post("/trunks", "trunk", port_id=parent["id"], name="t1", description="a trunk",
             sub_ports=[{"port_id": child["id"], "segmentation_type": "vlan",
                         "segmentation_id": 101}])
    label = api.post("/metering/metering-labels", "metering_label", name="out",
                     description="traffic out")
    api.post("/metering/metering-label-rules", "metering_label_rule",
             metering_label_id=label["id"], direction="egress",
             remote_ip_prefix="0.0.0.0/0", excluded=False)
    api.post("/local-ips", "local_ip", network_id=net["id"], name="lip",
             local_ip_address=_free_address(api, net["id"], sub["cidr"]))
    ids.update(network=net["id"], subnet=sub["id"], subnet2=sub2["id"], pool=pool["id"],
               ext=ext["id"], ext_subnet=ext_sub["id"], router=router["id"], sg=sg["id"],
               port=port["id"], port2=port2["id"], qos=qos["id"], provider=prov["id"],
               subnet2_network=net2["id"])
    return ids


def _free_address(api: Api, network_id: str, cidr: str) -> str:
    """An address of the subnet no port holds: upstream picks ports' addresses at random."""
    held = {ip["ip_address"] for port in api.get(f"/ports?network_id={network_id}")["ports"]
            for ip in port["fixed_ips"]}
    hosts = list(ipaddress.ip_network(cidr).hosts())
    return next(str(a) for a in hosts[len(hosts) // 2:] if str(a) not in held)


def listing(api: Api, collection: str) -> dict[str, dict[str, Any]]:
    """A collection by id (``quotas`` by project)."""
    body = api.get(f"/{collection}")
    items = next(iter(v for k, v in body.items() if not k.endswith("_links")))
    return {item.get("id") or item.get("project_id"): item for item in items}


def differences(upstream: Api, neutrino: Api) -> list[str]:
    """Every field of every resource where the two servers' reads differ."""
    found = []
    paths = list(COLLECTIONS)
    for parent, below in NESTED:
        paths += [f"{parent}/{key}/{below}" for key in listing(upstream, parent)]
    for collection in paths:
        theirs, ours = listing(upstream, collection), listing(neutrino, collection)
        if set(theirs) != set(ours):
            found.append(f"{collection}: ids {sorted(theirs)} upstream, {sorted(ours)} neutrino")
        for key in set(theirs) & set(ours):
            a, b = theirs[key], ours[key]
            for field in sorted(set(a) | set(b)):
                if _norm(a.get(field, "<absent>")) != _norm(b.get(field, "<absent>")):
                    found.append(f"{collection} {key} {field}: upstream {a.get(field, '<absent>')!r}"
                                 f", neutrino {b.get(field, '<absent>')!r}")
    return found


def _norm(value: Any) -> Any:
    """Lists whose order neither server promises, compared as sets."""
    if isinstance(value, list):
        return sorted((_norm(v) for v in value), key=repr)
    if isinstance(value, dict):
        return {k: _norm(v) for k, v in value.items()}
    return value
